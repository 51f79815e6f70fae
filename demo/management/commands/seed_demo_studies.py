from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from demo.evaluation import demo_studies
from llm import services as llm_services


class Command(BaseCommand):
    help = (
        "Create the demo studies (responses, expert labels, simulated judges, calibration report, selected judge, "
        "evaluation run) using the running LLM simulator; running it again changes nothing."
    )

    def handle(self, *args: object, **options: object) -> None:
        llm_services.simulator_endpoints_register(base_url=settings.LLM_SIMULATOR_URL)
        try:
            self.stdout.write(self.style.SUCCESS(demo_studies()))
        except Exception as exc:  # a demo must never block start-up; say what went wrong instead
            raise CommandError(f"demo studies could not be created: {exc}") from exc
