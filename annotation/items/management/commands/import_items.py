from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items import services


class Command(BaseCommand):
    help = "Import items from a JSONL file, all or nothing (formats: eistudio, emobench)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", default="eistudio", choices=services.IMPORT_FORMATS)
        parser.add_argument("--benchmark", help="benchmark slug for every record (overrides the file)")
        parser.add_argument("--dry-run", action="store_true", help="check everything, write nothing")
        parser.add_argument("--user", help="username to record as the author (default: none, shown as import)")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"unknown user {options['user']!r}")
        try:
            report = services.items_import(
                data=path.read_bytes(),
                user=user,
                format=options["format"],
                benchmark=options["benchmark"],
                dry_run=options["dry_run"],
            )
        except services.ImportFailed as exc:
            for error in exc.errors:
                self.stderr.write(f"{path}:{error}")
            raise CommandError(f"{len(exc.errors)} error(s); nothing was imported") from exc
        for fault in report.source_faults:
            self.stdout.write(f"source fault: {fault}")
        for uid, issues in report.flagged.items():
            self.stdout.write(f"parity: {uid}: " + " | ".join(i["message"] for i in issues))
        prefix = "dry run, nothing written: " if report.dry_run else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{report.total} records: {len(report.created)} created, {len(report.revised)} revised, "
                f"{len(report.unchanged)} unchanged; {len(report.flagged)} flagged by the parity check; "
                f"{len(report.source_faults)} source faults"
            )
        )
