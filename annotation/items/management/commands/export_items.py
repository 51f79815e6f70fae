import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from annotation.items import selectors
from annotation.items.interchange import dump_lines


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
        # Records come from a chunked query and are written one line at a time: memory stays flat however many.
        lines = dump_lines(selectors.item_export_records(items=selectors.item_list(filters=filters)))
        if options["out"] == "-":
            sys.stdout.writelines(lines)
            return
        out = Path(options["out"])
        tmp = out.with_name(out.name + ".partial")
        count = 0
        try:
            with tmp.open("w", encoding="utf-8") as file:
                for line in lines:
                    file.write(line)
                    count += 1
            tmp.replace(out)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.stderr.write(self.style.SUCCESS(f"wrote {count} items to {out}"))
