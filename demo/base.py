"""Demo data for ``make run``: taxonomy, one account per role, demo items, a frozen release and an open screening
round with the demo expert's queue. Idempotent."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.items import services
from annotation.items.models import Benchmark
from annotation.releases import services as releases
from annotation.releases.models import Release
from annotation.screening import services as screening
from annotation.screening.models import ScreeningRound
from core.roles import ADMIN, EXPERT, LEAD_EXPERT, RESEARCHER, roles_sync

DEMO_PASSWORD = "demo-pass-2026"
DEMO_RELEASE = "0.1.0"
DEMO_ACCOUNTS = [("admin", ADMIN), ("lead", LEAD_EXPERT), ("expert", EXPERT), ("researcher", RESEARCHER)]


@transaction.atomic
def demo_seed() -> dict:
    """Create or refresh the demo data; return what exists afterwards."""
    roles_sync()
    counts = services.taxonomy_load_fixture("taxonomy.json")
    services.taxonomy_load_fixture("emobench_taxonomy.json")
    User = get_user_model()
    for username, role in DEMO_ACCOUNTS:
        user, created = User.objects.get_or_create(username=username, defaults={"email": f"{username}@example.org"})
        if created:
            user.set_password(DEMO_PASSWORD)
        user.is_staff = role == ADMIN
        user.save()
        user.groups.set([Group.objects.get(name=role)])
    lead = User.objects.get(username="lead")
    report = services.items_import(
        data=(services.FIXTURES / "demo_items.jsonl").read_bytes(), user=lead, format="eistudio"
    )
    admin = User.objects.get(username="admin")
    facet = Benchmark.objects.get(slug="facet")
    if not Release.objects.filter(benchmark=facet, version=DEMO_RELEASE).exists():
        release = releases.release_create(
            benchmark=facet,
            version=DEMO_RELEASE,
            title="FACET demo sample",
            description="The accepted demo items of FACET, frozen so that the export can be tried out.",
            licence="CC BY 4.0",
            citation="EI Studio demo data (not the published FACET set).",
            user=admin,
        )
        releases.release_freeze(
            release=release,
            user=admin,
            override_reason="Demo sample: far fewer items than FACET's per-dimension targets.",
        )
    if not ScreeningRound.objects.filter(benchmark=facet).exists():
        # The draft items under review, so that the expert's home page has a queue to work through.
        screening.round_open(
            benchmark=facet,
            title="Demo screening round",
            user=lead,
            reviewers=[User.objects.get(username="expert"), lead],
            reviewers_per_item=1,
        )
    return {
        "accounts": DEMO_ACCOUNTS,
        "message": (
            f"Demo data ready: {counts['dimensions']} dimensions, {counts['emotions']} emotions, "
            f"{counts['scenarios']} scenarios; items {len(report.created)} created, "
            f"{len(report.unchanged) + len(report.revised)} already present."
        ),
    }
