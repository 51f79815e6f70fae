from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.releases import selectors as release_selectors
from annotation.releases.models import Release

REASONS = {
    "offline": "--offline was given",
    "unknown_release": "this database holds no frozen release by that name",
    "no_database": "the database could not be read",
}


class Command(BaseCommand):
    help = (
        "Check an unpacked release export against the manifest recorded in the database when the release was "
        "frozen; without the release in the database (or with --offline), against the directory's own "
        "manifest.json. Says which one it used; exits non-zero on any difference."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--release",
            nargs=2,
            metavar=("SLUG", "VERSION"),
            help="the release to check against (default: the one the directory's manifest.json names)",
        )
        parser.add_argument("--offline", action="store_true", help="use only the directory's own manifest.json")

    def handle(self, *args: object, **options: object) -> None:
        directory: Path = options["directory"]
        if not directory.is_dir():
            raise CommandError(f"{directory}: not a directory")
        if options["release"] and options["offline"]:
            raise CommandError("--release and --offline exclude each other")
        release = None
        if options["release"]:
            slug, version = options["release"]
            release = Release.objects.filter(benchmark__slug=slug, version=version).first()
            if release is None:
                raise CommandError(f"no release {version} of benchmark {slug!r}")
        try:
            result = release_selectors.release_export_verify(
                directory=directory, offline=options["offline"], release=release
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if result.against == "database":
            frozen_at = result.release.frozen_at.strftime("%Y-%m-%dT%H:%M:%SZ")
            reference = f"the manifest recorded in the database when {result.release} was frozen ({frozen_at})"
        else:
            reference = f"the directory's own manifest.json ({REASONS[result.reason]})"
        self.stdout.write(f"checked {directory} against {reference}")
        if result.problems:
            for problem in result.problems:
                self.stderr.write(f"  {problem}")
            raise CommandError(f"{len(result.problems)} problem(s): the export does not match {reference}")
        also = " and the manifest recorded at freeze" if result.against == "database" else ""
        self.stdout.write(self.style.SUCCESS(f"{directory}: every file matches manifest.json{also}"))
