from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.backup import BackupError, database_backup


class Command(BaseCommand):
    help = "Back up the whole database to one file (pg_dump's custom format, or an SQLite copy); see docs/deploy.md."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, required=True, help="the backup file to write")

    def handle(self, *args: object, **options: object) -> None:
        try:
            out = database_backup(out=options["out"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"backed up to {out} ({out.stat().st_size} bytes)"))
