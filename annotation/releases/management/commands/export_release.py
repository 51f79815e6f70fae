from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.models import Release


class Command(BaseCommand):
    help = "Export a frozen release into DIR (JSONL per language, bilingual JSONL, CSV, Parquet, card, manifest)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("version")
        parser.add_argument("--out", required=True, type=Path, help="directory to create (must not hold files)")
        parser.add_argument("--zip", type=Path, help="also write the single-archive form to this path")

    def handle(self, *args: object, **options: object) -> None:
        release = Release.objects.filter(benchmark__slug=options["slug"], version=options["version"]).first()
        if release is None:
            raise CommandError(f"no release {options['version']} of benchmark {options['slug']!r}")
        try:
            files = releases.release_export_to_directory(release=release, out=options["out"])
            if options["zip"]:
                data = release_selectors.release_export_zip(release=release)
                tmp = options["zip"].with_name(options["zip"].name + ".partial")
                tmp.write_bytes(data)
                tmp.replace(options["zip"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        for name, data in files.items():
            self.stdout.write(f"  {name:<24} {len(data):>10} bytes")
        self.stdout.write(self.style.SUCCESS(f"exported {release} to {options['out']}"))
        digest = release_selectors.release_manifest_sha256(release=release)
        self.stdout.write(
            f"manifest.json SHA-256 {digest} (recorded at freeze): "
            f"verify_release {options['out']} --manifest-sha256 {digest}"
        )
