from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.labelling import exports
from annotation.labelling.models import ComparisonSet
from core.rowfiles import FORMATS, pair_headers, write_table_file


def comparison_set_named(text: str) -> ComparisonSet:
    """Return the comparison set with this id or name; raise CommandError naming what was looked for."""
    found = ComparisonSet.objects.filter(name=text).first()
    if found is None and text.isdigit():
        found = ComparisonSet.objects.filter(pk=int(text)).first()
    if found is None:
        raise CommandError(f"no comparison set with the id or name {text!r}")
    return found


class Command(BaseCommand):
    help = (
        "Write the labels of a closed comparison set, one row per expert label (experts as E01, E02, ...), or with "
        "--pairs its preference pairs (chosen/rejected; ties and inconsistent comparisons left out and counted), "
        "as CSV, JSONL or Parquet. The label file reads back through manage.py agreement and rank_models."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("set", help="comparison set id or name")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", default="-", help="output path, or - for standard output (default)")
        parser.add_argument("--language", choices=["en", "zh"], help="only the comparisons in this language")
        parser.add_argument("--pairs", action="store_true", help="write preference pairs instead of labels")

    def handle(self, *args: object, **options: object) -> None:
        comparison_set = comparison_set_named(options["set"])
        language = options["language"]
        try:
            if options["pairs"]:
                counts = exports.label_preference_counts(comparison_set=comparison_set, language=language)
                rows = exports.label_preference_rows(comparison_set=comparison_set, language=language)
                columns = exports.PAIR_COLUMNS
            else:
                rows = exports.label_rows(comparison_set=comparison_set, language=language)
                columns = exports.LABEL_COLUMNS
        except exports.ExportRefused as exc:
            raise CommandError(str(exc)) from exc
        written = write_table_file(rows, columns, options["format"], options["out"])
        if options["out"] != "-":  # standard output holds the table itself
            what = "preference pairs" if options["pairs"] else "labels"
            self.stderr.write(f"wrote {written} {what} to {options['out']}")
        if options["pairs"]:
            self.stderr.write(", ".join(f"{name}: {value}" for name, value in pair_headers(counts).items()))
