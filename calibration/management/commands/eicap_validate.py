from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items.models import Benchmark, KeyValidation
from calibration import keys
from llm.models import Endpoint
from llm.worker.inline import run_work_inline


class Command(BaseCommand):
    help = (
        "Validate the keys of a benchmark's EiCAP probes with an independent judge (an endpoint of another model "
        "family than the drafter): it answers every probe turn blind by letter choice, and Cohen's kappa between "
        "its answers and the keys is recorded with a bootstrap interval. --wait works the run in this process."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="the judge endpoint's name (or id)")
        parser.add_argument("--benchmark", default="eicap", help="benchmark slug (default eicap)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
        parser.add_argument("--wait", action="store_true", help="work the run here and print the figure")

    def handle(self, *args: object, **options: object) -> None:
        name = options["endpoint"]
        endpoint = Endpoint.objects.filter(name=name).first() or (
            Endpoint.objects.filter(pk=int(name)).first() if name.isdigit() else None
        )
        if endpoint is None:
            raise CommandError(f"no endpoint {name}")
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark {options['benchmark']}")
        try:
            validation = keys.key_validation_start(
                benchmark=benchmark, endpoint=endpoint, user=None, seed=options["seed"], start=not options["wait"]
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if not options["wait"]:
            self.stdout.write(self.style.SUCCESS(f"started key validation {validation.pk}; a db_worker runs it"))
            return
        run_work_inline(run_id=validation.llm_run_id)
        validation = KeyValidation.objects.get(pk=validation.pk)
        if validation.kappa is None:
            self.stdout.write(f"Cohen's kappa undefined: {validation.undefined_reason}")
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"Cohen's kappa {validation.kappa:.3f} (95% CI {validation.ci_low:.3f} to {validation.ci_high:.3f}) "
                f"over {validation.n_units} probe turns of {validation.n_probes} probes; "
                f"{validation.unanswered} unanswered"
            )
        )
