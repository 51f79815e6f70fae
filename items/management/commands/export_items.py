import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from items import selectors
from items.interchange import dump_jsonl


class Command(BaseCommand):
    help = "Export items (current revisions) as interchange JSONL, optionally filtered."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, help="output path, or - for stdout")
        for name in ("benchmark", "dimension", "kind", "status", "origin"):
            parser.add_argument(f"--{name}")
        parser.add_argument("--languages", choices=["both", "missing", "en_only", "zh_only"])
        parser.add_argument("--parity", choices=["problems", "ok"])
        parser.add_argument("--q", help="text search")

    def handle(self, *args: object, **options: object) -> None:
        filters = {k: options[k] for k in selectors.ITEM_FILTERS if options.get(k)}
        records = list(selectors.item_export_records(items=selectors.item_list(filters=filters)))
        body = dump_jsonl(records)
        if options["out"] == "-":
            sys.stdout.write(body)
            return
        out = Path(options["out"])
        tmp = out.with_name(out.name + ".partial")
        tmp.write_text(body, encoding="utf-8")
        tmp.replace(out)
        self.stderr.write(self.style.SUCCESS(f"wrote {len(records)} items to {out}"))
