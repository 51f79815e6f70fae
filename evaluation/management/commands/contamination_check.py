from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.releases.models import Release
from evaluation.services.contamination import contamination_check_create


def release_named(name: str) -> Release:
    """Return the release named ``SLUG:VERSION`` (or by its id); CommandError naming what was not found."""
    slug, sep, version = name.partition(":")
    release = (
        Release.objects.filter(benchmark__slug=slug, version=version).first()
        if sep
        else Release.objects.filter(pk=int(name)).first()
        if name.isdigit()
        else None
    )
    if release is None:
        raise CommandError(f"unknown release {name!r}: give SLUG:VERSION (e.g. eicap:1.0.0) or its id")
    return release


class Command(BaseCommand):
    help = (
        "TF-IDF nearest-neighbour cosine from a release's texts to a corpus (JSONL with a 'text', 'prompt' or "
        "'messages' field per line): mean, quantiles and the closest pairs, per language. Runs here, whatever the size."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release", help="SLUG:VERSION (e.g. eicap:1.0.0) or the release's id")
        parser.add_argument("corpus", type=Path, help="the corpus, JSONL")
        parser.add_argument("--name", help="what the corpus is called on the release's page (default: file name)")
        parser.add_argument("--closest", type=int, default=5, help="closest pairs to print per language")

    def handle(self, *args: object, **options: object) -> None:
        release = release_named(str(options["release"]))
        path: Path = options["corpus"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        try:
            check = contamination_check_create(
                release=release, name=options["name"] or path.name, data=path.read_bytes(), user=None, inline=True
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if check.status != check.Status.DONE:
            raise CommandError(f"check {check.pk} failed: {check.error}")
        for language, summary in check.result["languages"].items():
            self.stdout.write(
                f"{language}: {summary['n']} texts against {summary['corpus_n']}: nearest-neighbour cosine mean "
                f"{summary['mean']:.3f}, median {summary['median']:.3f}, p90 {summary['p90']:.3f}, "
                f"max {summary['max']:.3f}, {summary['above_08']} at 0.8 or more"
            )
            for pair in summary["closest"][: options["closest"]]:
                self.stdout.write(f"  {pair['cosine']:.3f}  {pair['key']}  ~  {pair['corpus_key']}")
        for language, reason in check.result["skipped"].items():
            self.stdout.write(f"{language}: skipped: {reason}")
        self.stdout.write(f"check {check.pk} stored")
