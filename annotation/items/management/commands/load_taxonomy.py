import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items import services
from core.inputs import InputRefused, parse_json


class Command(BaseCommand):
    help = "Create or update the taxonomy from fixtures/taxonomy.json (or a given file); safe to repeat."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", type=Path)

    def handle(self, *args: object, **options: object) -> None:
        path = options["path"] or services.FIXTURES / "taxonomy.json"
        try:
            data = parse_json(Path(path).read_text(encoding="utf-8"))
        except InputRefused as exc:
            raise CommandError(f"{path}: {exc.field or 'file'}: {exc.reason}") from exc
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
        counts = services.taxonomy_load(data=data)
        self.stdout.write(self.style.SUCCESS(", ".join(f"{v} {k}" for k, v in counts.items())))
