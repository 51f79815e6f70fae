from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils.translation import gettext as _

from llm import services


class Command(BaseCommand):
    help = "Create or refresh one endpoint per simulated role (idempotent); used by make run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default=None, help="Simulator URL (default LLM_SIMULATOR_URL).")

    def handle(self, *args: object, **options: object) -> None:
        base_url = options["base_url"] or settings.LLM_SIMULATOR_URL
        endpoints = services.simulator_endpoints_register(base_url=base_url)
        self.stdout.write(_("%(n)s simulated endpoints at %(url)s.") % {"n": len(endpoints), "url": base_url})
