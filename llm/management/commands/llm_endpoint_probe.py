from django.core.management.base import BaseCommand, CommandError, CommandParser

from llm import services
from llm.management.commands._progress import endpoint_by_name_or_id

LABELS = {
    "chat": "chat completions",
    "logprobs": "completions with echo + logprobs (prompt log-probabilities)",
    "batch": "Files + Batches API",
    "usage": "usage counts plausible",
}


class Command(BaseCommand):
    help = (
        "Test an endpoint's connection and probe what it supports (chat, prompt log-probabilities, batches, the "
        "token-limit parameter, usage); store the result on the endpoint."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", help="Endpoint name or id.")

    def handle(self, *args: object, **options: object) -> None:
        endpoint = endpoint_by_name_or_id(options["endpoint"])
        report = services.endpoint_probe(endpoint=endpoint)
        line = f"{endpoint.name}: {report.message}"
        self.stdout.write(self.style.SUCCESS(line) if report.ok else self.style.ERROR(line))
        capabilities = report.capabilities
        if capabilities is None:
            raise CommandError(f"{endpoint.name}: nothing else could be probed.")
        for name, label in LABELS.items():
            result = capabilities[name]
            mark = {True: "yes", False: "NO", None: "not checked"}[result.get("ok")]
            detail = f" ({result['message']})" if result.get("message") else ""
            self.stdout.write(f"  {label}: {mark}{detail}")
        self.stdout.write(f"  token-limit parameter: {capabilities['token_parameter']}")
        if not report.ok:
            raise CommandError(f"{endpoint.name}: {report.message}")
