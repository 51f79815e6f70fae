from django.core.management.base import BaseCommand, CommandError, CommandParser

from llm import services
from llm.management.commands._progress import endpoint_by_name_or_id


class Command(BaseCommand):
    help = "Send one tiny request to an endpoint and report the latency or what is wrong."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", help="Endpoint name or id.")

    def handle(self, *args: object, **options: object) -> None:
        endpoint = endpoint_by_name_or_id(options["endpoint"])
        report = services.endpoint_test_connection(endpoint=endpoint)
        if not report.ok:
            raise CommandError(f"{endpoint.name}: {report.message}")
        self.stdout.write(self.style.SUCCESS(f"{endpoint.name}: {report.message}"))
