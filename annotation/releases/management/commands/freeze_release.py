from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.items import selectors
from annotation.items.models import Benchmark
from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.models import Release


class Command(BaseCommand):
    help = (
        "Freeze release VERSION of benchmark SLUG. If it does not exist yet it is built first from a filter "
        "(default: every accepted item of the benchmark)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="benchmark slug")
        parser.add_argument("version", help="release version, e.g. 1.0.0")
        parser.add_argument(
            "--from-filter",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help=f"item filter used to build a new release; names: {', '.join(selectors.ITEM_FILTERS)}",
        )
        parser.add_argument("--title", help="title of a new release (default: '<benchmark> <version>')")
        parser.add_argument("--licence", default="")
        parser.add_argument("--citation", default="")
        parser.add_argument("--override-reason", default="", help="freeze although validation checks fail")
        parser.add_argument("--user", help="username recorded as the one who froze it")

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["slug"]).first()
        if benchmark is None:
            raise CommandError(f"unknown benchmark {options['slug']!r}")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"unknown user {options['user']!r}")
        filters = {}
        for pair in options["from_filter"]:
            name, sep, value = pair.partition("=")
            if not sep:
                raise CommandError(f"--from-filter expects NAME=VALUE, got {pair!r}")
            filters[name] = value
        try:
            with transaction.atomic():
                release = self._build_and_freeze(benchmark, filters, user, options)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(self.style.SUCCESS(f"froze {release}: content checksum {release.content_checksum}"))
        digest = release_selectors.release_manifest_sha256(release=release)
        self.stdout.write(
            f"manifest.json SHA-256 {digest}: keep it outside this database; "
            f"verify_release DIR --manifest-sha256 {digest} checks an export against it"
        )

    def _build_and_freeze(self, benchmark: Benchmark, filters: dict, user: object, options: dict) -> Release:
        """Build (if needed) and freeze in one transaction, so a refused freeze leaves no new draft behind."""
        release = Release.objects.filter(benchmark=benchmark, version=options["version"]).first()
        if release is None:
            release = releases.release_create(
                benchmark=benchmark,
                version=options["version"],
                title=options["title"] or f"{benchmark.name_en} {options['version']}",
                licence=options["licence"],
                citation=options["citation"],
                filters=filters or None,
                user=user,
            )
            self.stdout.write(f"built release {release} with {release.entries.count()} items")
        elif filters:
            raise CommandError(f"release {release} already exists; --from-filter only applies to a new release")
        for check in release_selectors.release_validate(release=release):
            mark = "PASS" if check.passed else "FAIL"
            self.stdout.write(f"  [{mark}] {check.code}: {check.summary}")
        return releases.release_freeze(release=release, user=user, override_reason=options["override_reason"])
