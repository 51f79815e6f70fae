import re
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


DESCRIPTIONS = {
    release_selectors.OWN_MANIFEST: "every file against the directory's own manifest.json "
    "(each listed file present, with its size and SHA-256; no file missing or unlisted)",
    release_selectors.RECORDED_MANIFEST: "every file, manifest.json included, against the manifest recorded in the "
    "database when {release} was frozen ({frozen_at})",
    release_selectors.GIVEN_DIGEST: "manifest.json against the SHA-256 given with --manifest-sha256 (recorded out of "
    "band at freeze: freeze_release, export_release and the release page show it); with own-manifest, every file "
    "without trusting any copy in a database",
}
HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")


class Command(BaseCommand):
    help = (
        "Check an unpacked release export with two checks: own-manifest, every file against the directory's own "
        "manifest.json; recorded-manifest, every file (manifest.json included) against the manifest recorded in "
        "the database when the release was frozen. Without the release in the database (or with --offline) only "
        "the first runs, and the command says why. With --manifest-sha256 HEX (the digest freeze_release printed), "
        "manifest-digest checks manifest.json against it, so that no database copy is trusted. Names each check "
        "and whether it passed; exits non-zero when any check that ran failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--release",
            nargs=2,
            metavar=("SLUG", "VERSION"),
            help="the release to check against (default: the one the directory's manifest.json names)",
        )
        parser.add_argument(
            "--offline", action="store_true", help="check only against the directory's own manifest.json"
        )
        parser.add_argument(
            "--manifest-sha256",
            metavar="HEX",
            help="the SHA-256 of manifest.json recorded out of band when the release was frozen (freeze_release and "
            "export_release print it, the release page shows it): manifest.json must have it",
        )

    def handle(self, *args: object, **options: object) -> None:
        directory: Path = options["directory"]
        digest = options["manifest_sha256"]
        release = self._release_asked(options)
        try:
            result = release_selectors.release_export_verify(
                directory=directory, offline=options["offline"], release=release, manifest_sha256=digest
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"checked {directory}:")
        for check in result.checks:
            self._write_check(check, result)
        if result.failed:
            failed = ", ".join(f"{check.name} ({len(check.problems)} problem(s))" for check in result.failed)
            raise CommandError(f"{directory}: failed {failed}")
        ran = [check.name for check in result.checks if check.ran]
        not_run = [check.name for check in result.checks if not check.ran]
        summary = f"{directory}: passed {', '.join(ran)}"
        if not_run:
            summary += f"; not run: {', '.join(not_run)} ({REASONS[result.reason]})"
        self.stdout.write(self.style.SUCCESS(summary))

    @staticmethod
    def _release_asked(options: dict) -> Release | None:
        """Check the options against each other; return the release named with --release, if any."""
        if not options["directory"].is_dir():
            raise CommandError(f"{options['directory']}: not a directory")
        if options["release"] and options["offline"]:
            raise CommandError("--release and --offline exclude each other")
        digest = options["manifest_sha256"]
        if digest is not None and not HEX_DIGEST.fullmatch(digest):
            raise CommandError(f"--manifest-sha256 expects 64 hexadecimal digits, got {digest!r}")
        if not options["release"]:
            return None
        slug, version = options["release"]
        release = Release.objects.filter(benchmark__slug=slug, version=version).first()
        if release is None:
            raise CommandError(f"no release {version} of benchmark {slug!r}")
        return release

    def _write_check(self, check: release_selectors.VerifyCheck, result: release_selectors.ExportCheck) -> None:
        described = self._describe(check, result)
        if not check.ran:
            self.stdout.write(f"  {check.name}: not run ({REASONS[check.skipped]}): {described}")
            return
        if not check.problems:
            self.stdout.write(f"  {check.name}: passed: {described}")
            return
        self.stdout.write(f"  {check.name}: FAILED, {len(check.problems)} problem(s): {described}")
        for problem in check.problems:
            self.stderr.write(f"  {check.name}: {problem}")

    @staticmethod
    def _describe(check: release_selectors.VerifyCheck, result: release_selectors.ExportCheck) -> str:
        if check.name == release_selectors.RECORDED_MANIFEST and result.release is not None:
            frozen_at = result.release.frozen_at.strftime("%Y-%m-%dT%H:%M:%SZ")
            return DESCRIPTIONS[check.name].format(release=result.release, frozen_at=frozen_at)
        if check.name == release_selectors.RECORDED_MANIFEST:
            return "every file against the manifest recorded in the database at freeze"
        return DESCRIPTIONS[check.name]
