from django.core.management.base import BaseCommand, CommandError, CommandParser

from calibration import exports as calibration_exports
from calibration.models import CalibrationRun
from core.rowfiles import FORMATS, pair_headers, write_table_file
from evaluation import exports as evaluation_exports
from evaluation.models import EvaluationRun


class Command(BaseCommand):
    help = (
        "Write the judge verdicts of an evaluation run (or, with --calibration, of a calibration run), one row per "
        "pair with both orders, raw and parsed, and their combination by the run's rule; or with --pairs the "
        "preference pairs they give (ties, inconsistent and unparsed pairs left out and counted). CSV, JSONL or "
        "Parquet; the verdict file reads back through manage.py rank_models and agreement."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", help="evaluation run id or name (calibration run id with --calibration)")
        parser.add_argument("--calibration", action="store_true", help="RUN is a calibration run")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", default="-", help="output path, or - for standard output (default)")
        parser.add_argument("--language", choices=["en", "zh"], help="only the verdicts in this language")
        parser.add_argument("--pairs", action="store_true", help="write preference pairs instead of verdicts")

    def handle(self, *args: object, **options: object) -> None:
        text: str = options["run"]
        if options["calibration"]:
            run = CalibrationRun.objects.filter(pk=int(text)).first() if text.isdigit() else None
            module = calibration_exports
        else:
            run = EvaluationRun.objects.select_related("judge").filter(name=text).first()
            if run is None and text.isdigit():
                run = EvaluationRun.objects.select_related("judge").filter(pk=int(text)).first()
            module = evaluation_exports
        if run is None:
            kind = "calibration run with the id" if options["calibration"] else "evaluation run with the id or name"
            raise CommandError(f"no {kind} {text!r}")
        language = options["language"]
        if options["pairs"]:
            counts = module.verdict_preference_counts(run=run, language=language)
            rows, columns = module.verdict_preference_rows(run=run, language=language), module.PAIR_COLUMNS
        else:
            rows, columns = module.verdict_rows(run=run, language=language), module.VERDICT_COLUMNS
        written = write_table_file(rows, columns, options["format"], options["out"])
        if options["out"] != "-":  # standard output holds the table itself
            what = "preference pairs" if options["pairs"] else "verdicts"
            self.stderr.write(f"wrote {written} {what} to {options['out']}")
        if options["pairs"]:
            self.stderr.write(", ".join(f"{name}: {value}" for name, value in pair_headers(counts).items()))
