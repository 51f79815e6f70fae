from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from llm import services
from llm.management.commands._progress import run_by_id

ACTIONS = {
    "pause": services.run_pause,
    "resume": services.run_resume,
    "cancel": services.run_cancel,
    "collect": services.run_collect_again,
}


class Command(BaseCommand):
    help = "Pause, resume or cancel an LLM run, or collect a finished run whose collection failed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", type=int)
        parser.add_argument("action", choices=sorted(ACTIONS))

    def handle(self, *args: object, **options: object) -> None:
        try:
            run = ACTIONS[options["action"]](run=run_by_id(options["run_id"]))
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(_("Run %(id)s is now %(status)s.") % {"id": run.pk, "status": run.get_status_display()})
