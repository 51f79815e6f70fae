from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from items import services


class Command(BaseCommand):
    help = "Create or update the taxonomy from fixtures/taxonomy.json (or a given file); safe to repeat."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", type=Path)

    def handle(self, *args: object, **options: object) -> None:
        import json

        path = options["path"] or services.FIXTURES / "taxonomy.json"
        counts = services.taxonomy_load(data=json.loads(Path(path).read_text(encoding="utf-8")))
        self.stdout.write(self.style.SUCCESS(", ".join(f"{v} {k}" for k, v in counts.items())))
