from django.core.management.base import BaseCommand, CommandParser
from django.utils.translation import gettext as _

from llm import selectors
from llm.management.commands._progress import bar, describe, exit_for, follow, run_by_id


class Command(BaseCommand):
    help = "Show the progress of an LLM run (with --follow, until it stops), or list recent runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", nargs="?", type=int)
        parser.add_argument("--follow", action="store_true", help="Keep printing until the run stops.")
        parser.add_argument("--interval", type=float, default=1.0, help="Seconds between updates with --follow.")

    def handle(self, *args: object, **options: object) -> None:
        if options["run_id"] is None:
            runs = list(selectors.run_list()[:20])
            if not runs:
                self.stdout.write(_("No runs yet."))
            for run in runs:
                self.stdout.write(describe(run))
                self.stdout.write("    " + bar(selectors.run_progress(run=run)))
            return
        run = follow(
            run_by_id(options["run_id"]), self.stdout, interval=options["interval"], once=not options["follow"]
        )
        if options["follow"]:
            exit_for(run)
