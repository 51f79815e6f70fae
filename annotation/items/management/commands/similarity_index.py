from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items.models import Benchmark
from annotation.items.signatures import index_build


class Command(BaseCommand):
    help = (
        "Build the near-duplicate index: sign every item whose current revision is not signed yet, in batches "
        "(bounded memory, one transaction per batch), and count the n-gram weights again. Safe to repeat and to "
        "interrupt. --rebuild starts afresh, stop shingles included (needed after annotation.items.lsh.SCHEME changes)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", action="append", help="benchmark slug (repeatable; default: all)")
        parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the index")

    def handle(self, *args: object, **options: object) -> None:
        slugs = options["benchmark"]
        benchmarks = None
        if slugs:
            benchmarks = list(Benchmark.objects.filter(slug__in=slugs).order_by("slug"))
            unknown = sorted(set(slugs) - {b.slug for b in benchmarks})
            if unknown:
                raise CommandError(f"no benchmark {', '.join(unknown)}")
        report = index_build(
            benchmarks=benchmarks,
            rebuild=bool(options["rebuild"]),
            progress=self.stdout.write if int(options["verbosity"]) > 1 else None,
        )
        self.stdout.write(self.style.SUCCESS(f"{report.signed} signatures written, {report.indexes} indexes built"))
