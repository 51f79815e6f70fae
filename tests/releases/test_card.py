"""The dataset card: written from the record at freeze (origins, revisions, screening rounds, checks, who froze
it), in each language of the release, with plurals; kept with the release and shown on its page."""

import pytest
from django.utils import translation
from django.utils.translation import gettext as _

from annotation.items import services
from annotation.items.models import Benchmark, Dimension, Item
from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.models import Release
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, RoundItem
from annotation.screening.selectors import round_statistics
from demo.base import DEMO_RELEASE, demo_seed
from tests.factories import make_frozen_release, make_item, make_review, make_screening_round, mcq_content

pytestmark = pytest.mark.django_db


def english(card: str) -> str:
    return card.split("\n## 中文\n")[0]


def chinese(card: str) -> str:
    return card.split("\n## 中文\n")[1]


def numbered(n: int) -> dict:
    content = mcq_content()
    content["en"]["context"] = f"Screened scenario number {n}: a colleague takes credit for your work."
    content["zh"]["context"] = f"第{n}个筛选情境：同事把你的功劳据为己有。"
    return content


@pytest.fixture
def criteria(db):
    """The default criteria (a data migration creates them; a transactional test's flush removes them)."""
    default_criteria_create(Criterion)


@pytest.fixture
def screened(taxonomy, criteria, lead, make_user, fixed_clock):
    """Four items through one closed round: two agreed accepts, one adjudicated conflict, one agreed reject."""
    for n in range(4):
        make_item(uid=f"scr-{n}", content=numbered(n), user=lead)
    reviewers = [make_user("expert", username=f"rev{i}") for i in range(3)]
    round = make_screening_round(user=lead, reviewers=reviewers, title="Pilot round")
    plan = {"scr-0": ["accept", "accept"], "scr-1": ["accept", "accept"], "scr-2": ["accept", "reject"]}
    for ri in RoundItem.objects.filter(round=round).select_related("item"):
        decisions = plan.get(ri.item.uid, ["reject", "reject"])
        for assignment, decision in zip(ri.assignments.order_by("reviewer__username"), decisions, strict=True):
            make_review(round=round, uid=ri.item.uid, reviewer=assignment.reviewer, decision=decision)
    screening.round_close(round=round, user=lead)
    screening.round_item_adjudicate(
        round_item=RoundItem.objects.get(round=round, item__uid="scr-2"), user=lead, decision="accept", note="fine"
    )
    return round


def test_card_states_the_screening_round_its_items_went_through(screened, admin_user):
    release = make_frozen_release(version="2.0.0", title="Screened", user=admin_user, override_reason="pilot sample")
    card = english(release_selectors.release_card_text(release=release))
    alpha = round_statistics(round=screened).alpha
    assert alpha is not None
    criteria = ", ".join(c.name_en for c in screened.criteria.order_by("position", "code"))
    for line in [
        "#### Round 1: Pilot round",
        f"- Criteria: {criteria}",
        "- 3 reviewers in the round, 2 per item",
        "- 3 items of this release reviewed in this round",
        "- Reviews submitted on them: accept 5, reject 1",
        "- Outcomes: accepted 3",
        "- 1 conflict adjudicated: accepted 1",
        f"- Agreement between reviewers over the round's 4 items: Krippendorff's alpha (nominal) {alpha:.3f}",
        "- 3 items written by experts",
        "- 3 revisions in the history of these items, up to the pinned ones",
        "- written by 1 named author",
        "- 3 items with 1 revision",
        "Frozen by admin1 despite failed checks. Reason given: pilot sample",
    ]:
        assert line in card.splitlines(), line
    assert "none recorded" not in card and "named authors" not in card
    assert "went through no screening round" not in card


def test_card_says_which_items_were_reviewed_at_an_earlier_revision(screened, lead):
    item = Item.objects.get(uid="scr-0")
    content = numbered(0)
    content["en"]["question"] = "How does the narrator feel, most likely?"
    services.item_revise(item=item, state=services.ItemState(dimension=item.dimension, content=content), user=lead)
    # The revision sent the item back to draft; a lead accepts the new text without another round.
    services.item_status_decide(item=item, status="accepted", user=lead, reason="checked", source="lead_decision")
    card = english(release_selectors.release_card_text(release=make_frozen_release(version="2.1.0")))
    assert "- 1 of them reviewed at an earlier revision than the one pinned" in card.splitlines()
    assert "- 1 item with 2 revisions" in card.splitlines() and "- 2 items with 1 revision" in card.splitlines()


def test_card_counts_origins_and_sources_and_uses_singular_forms(taxonomy, lead):
    bench = Benchmark.objects.get(slug="facet")
    dim = Dimension.objects.get(benchmark=bench, code="hidden_emotion_recognition")

    def create(uid, origin, n, metadata=None):
        return services.item_create(
            benchmark=bench,
            uid=uid,
            kind="mcq",
            origin=origin,
            user=None,
            state=services.ItemState(dimension=dim, content=numbered(n), metadata=metadata or {}),
        )

    create("imp-a", "imported", 1, {"source": "EmoBench"})
    create("imp-b", "imported", 2)
    create("llm-a", "llm_draft", 3)
    revised = create("llm-b", "llm_draft", 4)
    services.item_revise(
        item=revised, state=services.ItemState(dimension=dim, content=numbered(40)), user=lead, message="by hand"
    )
    release = make_frozen_release(version="3.0.0", filters={"status": "draft"}, override_reason="drafts")
    lines = english(release_selectors.release_card_text(release=release)).splitlines()
    for line in [
        "- 1 item imported from EmoBench",
        "- 1 item imported without a recorded source",
        "- 1 item drafted by a language model, then revised",
        "- 1 item drafted by a language model and not revised since",
        "- 5 revisions in the history of these items, up to the pinned ones",
        "- written by 1 named author",
        "- 4 revisions have no named author (imports or scripts wrote them)",
        "- 3 items with 1 revision",
        "- 1 item with 2 revisions",
        "4 items went through no screening round recorded in this instance.",
        "Frozen despite failed checks, with no user recorded. Reason given: drafts",
    ]:
        assert line in lines, line
    assert not any("written by experts" in line for line in lines)


def test_card_of_a_single_item_release_speaks_in_the_singular(taxonomy, lead):
    make_item(uid="solo", user=lead)
    release = make_frozen_release(version="4.0.0", filters={"status": "draft"}, override_reason="one item")
    lines = english(release_selectors.release_card_text(release=release)).splitlines()
    for line in [
        "- 1 item written by experts",
        "- 1 revision in the history of these items, up to the pinned ones",
        "- 1 item with 1 revision",
        "1 item went through no screening round recorded in this instance.",
        "- ✓ Not empty: 1 item",
        "- ✗ Every item accepted: 0 of 1 item accepted",
        "- ✓ Both languages present and in parity: 1 of 1 item has both languages in parity",
        "- ✓ Answer keys valid: 0 items with a missing or invalid answer key",
    ]:
        assert line in lines, line


def test_card_is_written_in_each_language_of_the_release(screened, admin_user):
    release = make_frozen_release(version="5.0.0", user=admin_user, override_reason="pilot sample")
    card = release_selectors.release_card_text(release=release)
    assert card.count("\n## English\n") == 1 and card.count("\n## 中文\n") == 1
    zh = chinese(card)
    dimension = Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition")
    assert f"`hidden_emotion_recognition` {dimension.name_zh}" in zh
    assert all(c.name_zh in zh for c in screened.criteria.all())
    with translation.override("zh-hans"):
        expected = [
            f"### {_('Screening')}",
            "#### " + _("Round %(number)s: %(title)s") % {"number": 1, "title": "Pilot round"},
            f"| **{_('total')}** | | 3 | 3 |",
        ]
    for line in expected:
        assert line in zh.splitlines(), line


def test_english_only_release_has_an_english_card(taxonomy, lead):
    make_item(uid="en-only", kind="open_prompt", dimension="emotion_matching", content={"en": {"prompt": "Hi."}})
    release = make_frozen_release(version="6.0.0", filters={"status": "draft"}, override_reason="English only")
    card = release_selectors.release_card_text(release=release)
    assert "## English" in card and "## 中文" not in card
    assert "| **total** | | 1 | 0 |" in card


def test_card_is_kept_in_the_export_and_shown_on_the_page(frozen, admin_user, login):
    files = release_selectors.release_export_files(release=frozen)
    assert files["README.md"].decode() == release_selectors.release_card_text(release=frozen)
    page = login(admin_user).get(f"/releases/facet/{frozen.version}/").content.decode()
    assert 'id="dataset-card"' in page and "Round" not in english(files["README.md"].decode())
    assert "4 items went through no screening round recorded in this instance." in page


def test_draft_page_shows_a_preview_of_the_card(accepted_items, admin_user, login):
    release = releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="7.0.0", title="Draft", user=admin_user
    )
    page = login(admin_user).get(f"/releases/facet/{release.version}/").content.decode()
    assert "a draft: this card is a preview" in page
    assert not Release.objects.get(pk=release.pk).files.exists()


def test_demo_release_card_states_its_screening_truthfully(db):
    demo_seed()
    release = Release.objects.get(benchmark__slug="facet", version=DEMO_RELEASE)
    card = english(release_selectors.release_card_text(release=release))
    pinned = list(release.entries.values_list("item_id", flat=True))
    rounds = sorted(set(RoundItem.objects.filter(item_id__in=pinned).values_list("round__number", flat=True)))
    unscreened = len(set(pinned) - set(RoundItem.objects.filter(item_id__in=pinned).values_list("item_id", flat=True)))
    assert [int(line.split()[2].rstrip(":")) for line in card.splitlines() if line.startswith("#### Round ")] == rounds
    if unscreened:
        noun = "item went" if unscreened == 1 else "items went"
        assert f"{unscreened} {noun} through no screening round recorded in this instance." in card
    assert "none recorded in this instance" not in card and " 1 named authors" not in card
