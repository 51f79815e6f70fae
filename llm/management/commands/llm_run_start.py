from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from llm import services
from llm.forms import read_prompts
from llm.management.commands._progress import endpoint_by_name_or_id, exit_for, follow


class Command(BaseCommand):
    help = (
        'Start an LLM run from a JSONL file of prompts ({"key": ..., "messages": [...]} per line); '
        "a worker (manage.py db_worker) does the work."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("prompts", type=Path, help="JSONL file of prompts.")
        parser.add_argument("--endpoint", required=True, help="Endpoint name or id.")
        parser.add_argument(
            "--parser", default="text", help="Parser name (text, json, mcq_letter, judge_verdict, ...)."
        )
        parser.add_argument("--name", help="Run name (default: the file name).")
        parser.add_argument("--purpose", default="")
        parser.add_argument("--fresh", action="store_true", help="Send every request even if cached.")
        parser.add_argument("--max-parse-retries", type=int, default=None)
        parser.add_argument("--follow", action="store_true", help="Show progress until the run stops.")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--batch", dest="batch", action="store_true", default=None, help="Send as provider batches (cheaper)."
        )
        mode.add_argument("--live", dest="batch", action="store_false", help="Send live calls (the usual default).")
        parser.add_argument(
            "--batch-fallback",
            choices=["live", "batch"],
            default="live",
            help="Requests that fail or expire in a batch: send them again live (default) or in a new batch.",
        )
        parser.add_argument("--budget", help="Pause before a request or batch could make the spend exceed this.")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["prompts"]
        try:
            prompts = read_prompts(path.read_bytes())
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        budget = None
        if options["budget"] is not None:
            try:
                budget = Decimal(options["budget"])
            except InvalidOperation as exc:
                raise CommandError(_("--budget must be a number.")) from exc
        try:
            run = services.run_create(
                endpoint=endpoint_by_name_or_id(options["endpoint"]),
                prompts=prompts,
                parser=options["parser"],
                name=options["name"] or path.name,
                purpose=options["purpose"],
                fresh=options["fresh"],
                max_parse_retries=options["max_parse_retries"],
                batch=options["batch"],
                batch_fallback=options["batch_fallback"],
                budget=budget,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            _("Run %(id)s created with %(n)s prompts (%(cached)s from cache), sent as %(mode)s.")
            % {"id": run.pk, "n": run.planned, "cached": run.cached, "mode": run.get_mode_display()}
        )
        self.stdout.write(
            _("Estimated cost: %(live)s live, %(batch)s in batches.")
            % {"live": f"{run.estimated_cost:.4f}", "batch": f"{run.estimated_cost_batch:.4f}"}
        )
        if options["follow"]:
            exit_for(follow(run, self.stdout, interval=1.0))
