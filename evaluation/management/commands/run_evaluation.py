import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.releases.models import Release
from evaluation import services
from evaluation.models import EvaluationRun
from llm import collection
from llm.models import Endpoint
from llm.worker.inline import run_work_inline


class Command(BaseCommand):
    help = (
        "Create and start an evaluation run of the given model endpoints on a frozen release; --follow waits, "
        "advancing the run in this process (no worker needed), and prints progress."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--release", required=True, metavar="SLUG:VERSION")
        parser.add_argument("--model", action="append", required=True, metavar="ENDPOINT_NAME")
        parser.add_argument("--language", action="append", choices=["en", "zh"])
        parser.add_argument("--protocol", choices=[p.value for p in EvaluationRun.Protocol], default="letter")
        parser.add_argument(
            "--held-out-release", metavar="SLUG:VERSION", help="a held-out probe set scored beside the release"
        )
        parser.add_argument("--pairing", choices=[p.value for p in EvaluationRun.Pairing], default="auto")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--judge-override-reason", default="")
        parser.add_argument("--estimate-only", action="store_true", help="print the estimate and create nothing")
        parser.add_argument("--follow", action="store_true")

    def handle(self, *args: object, **options: object) -> None:
        slug, _, version = options["release"].partition(":")
        release = Release.objects.filter(benchmark__slug=slug, version=version).first()
        if release is None:
            raise CommandError(f"no release {options['release']!r} (expected SLUG:VERSION)")
        held_out = None
        if options["held_out_release"]:
            slug, _, version = options["held_out_release"].partition(":")
            held_out = Release.objects.filter(benchmark__slug=slug, version=version).first()
            if held_out is None:
                raise CommandError(f"no release {options['held_out_release']!r} (expected SLUG:VERSION)")
        endpoints = []
        for name in options["model"]:
            endpoint = Endpoint.objects.filter(name=name).first()
            if endpoint is None:
                raise CommandError(f"unknown endpoint {name!r}")
            endpoints.append(endpoint)
        try:
            run = services.evaluation_run_create(
                name=options["name"],
                release=release,
                endpoints=endpoints,
                languages=options["language"] or ["en", "zh"],
                user=None,
                protocol=options["protocol"],
                held_out_release=held_out,
                pairing=options["pairing"],
                seed=options["seed"],
                judge_override_reason=options["judge_override_reason"],
            )
            estimate = services.evaluation_estimate(run=run)
            self.stdout.write(
                f"estimate: {estimate['response_calls']} response calls, "
                f"{estimate['judge_calls_round_robin']} judge calls (round-robin), about ${estimate['total_cost']:.4f}"
            )
            if options["estimate_only"]:
                run.delete()
                return
            services.evaluation_run_start(run=run, user=None, start=not options["follow"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if not options["follow"]:
            self.stdout.write(self.style.SUCCESS(f"started run {run.pk}; a db_worker moves it forward"))
            return
        while run.phase not in (EvaluationRun.Phase.DONE, EvaluationRun.Phase.CANCELLED):
            for link in run.llm_runs.filter(collected=False).select_related("llm_run"):
                if link.llm_run.status in ("queued", "running"):
                    run_work_inline(run_id=link.llm_run_id)
                else:
                    # Finished without this loop (cached as it was created, or cancelled): collect it here too.
                    collection.run_collect(run_id=link.llm_run_id)
            phase = services.evaluation_run_advance(run=run, start=False)
            run.refresh_from_db()
            self.stdout.write(f"phase: {phase}")
            time.sleep(0.1)
        self.stdout.write(self.style.SUCCESS(f"run {run.pk} done; report checksum {run.report_digest}"))
