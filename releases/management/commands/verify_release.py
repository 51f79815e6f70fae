from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from releases.export import verify_directory


class Command(BaseCommand):
    help = "Check an unpacked release export against its manifest.json; exit non-zero on any difference."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)

    def handle(self, *args: object, **options: object) -> None:
        directory: Path = options["directory"]
        if not directory.is_dir():
            raise CommandError(f"{directory}: not a directory")
        problems = verify_directory(directory)
        if problems:
            for problem in problems:
                self.stderr.write(f"  {problem}")
            raise CommandError(f"{len(problems)} problem(s): the export does not match its manifest")
        self.stdout.write(self.style.SUCCESS(f"{directory}: every file matches manifest.json"))
