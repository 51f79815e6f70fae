from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation import services
from evaluation.models import EvaluationRun
from evaluation.report import report_digest, report_directory_files
from evaluation.report.files import dimension_names


class Command(BaseCommand):
    help = "Write an evaluation run's report (JSON, CSV, LaTeX, SVG/PNG/PDF figures) into DIR; --recompute rebuilds it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", help="run id or name")
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument("--recompute", action="store_true", help="recompute from the stored calls first")

    def handle(self, *args: object, **options: object) -> None:
        key = options["run"]
        run = EvaluationRun.objects.filter(pk=int(key)).first() if key.isdigit() else None
        run = run or EvaluationRun.objects.filter(name=key).first()
        if run is None:
            raise CommandError(f"no evaluation run {key!r}")
        if options["recompute"] or not run.report:
            before = run.report_digest
            try:
                services.evaluation_report_compute(run=run)
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
            if before and before != run.report_digest:
                self.stderr.write(f"warning: the recomputed report differs from the stored one ({before})")
        out: Path = options["out"]
        out.mkdir(parents=True, exist_ok=True)
        names = dimension_names(run, run.report)
        for name, data in report_directory_files(run.report, dimension_names=names).items():
            (out / name).write_bytes(data)
        self.stdout.write(self.style.SUCCESS(f"wrote the report of {run.name} to {out} ({report_digest(run.report)})"))
