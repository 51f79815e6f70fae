from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.backup import BackupError, database_restore


class Command(BaseCommand):
    help = "Restore a db_backup file into a new, empty database given by URL (never into one with tables)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("backup", type=Path, help="a file written by db_backup")
        parser.add_argument(
            "--into", required=True, help="URL of the empty target database, e.g. postgres://USER@HOST/eistudio_new"
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            database_restore(backup=options["backup"], into=options["into"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"restored {options['backup']} into {options['into']}"))
