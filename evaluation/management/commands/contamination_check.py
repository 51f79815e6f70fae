from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.releases.models import Release
from evaluation.services.contamination import contamination_check_create
from llm.models import Endpoint


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


def embedding_endpoint_named(name: str) -> Endpoint:
    """Return the endpoint named ``name`` (or by its id) that has an embedding model; CommandError otherwise."""
    endpoint = Endpoint.objects.filter(name=name).first() or (
        Endpoint.objects.filter(pk=int(name)).first() if name.isdigit() else None
    )
    if endpoint is None:
        raise CommandError(f"unknown endpoint {name!r}: give its name or id")
    if not endpoint.embedding_model:
        embedders = ", ".join(Endpoint.objects.exclude(embedding_model="").values_list("name", flat=True)[:10])
        raise CommandError(
            f"the endpoint {endpoint.name!r} has no embedding model; endpoints that embed: {embedders or 'none'}"
        )
    return endpoint


class Command(BaseCommand):
    help = (
        "TF-IDF nearest-neighbour cosine from a release's texts to a corpus (JSONL with a 'text', 'prompt' or "
        "'messages' field per line): mean, quantiles and the closest pairs, per language; with --embeddings also the "
        "embedding cosine. Runs here, whatever the size."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release", help="SLUG:VERSION (e.g. eicap:1.0.0) or the release's id")
        parser.add_argument("corpus", type=Path, help="the corpus, JSONL")
        parser.add_argument("--name", help="what the corpus is called on the release's page (default: file name)")
        parser.add_argument("--closest", type=int, default=5, help="closest pairs to print per language")
        parser.add_argument(
            "--embeddings",
            metavar="ENDPOINT",
            help="also the embedding cosine, through this endpoint's embedding model (its name or id)",
        )

    def handle(self, *args: object, **options: object) -> None:
        release = release_named(str(options["release"]))
        path: Path = options["corpus"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        embedder = embedding_endpoint_named(options["embeddings"]) if options["embeddings"] else None
        try:
            check = contamination_check_create(
                release=release,
                name=options["name"] or path.name,
                data=path.read_bytes(),
                user=None,
                inline=True,
                embedding_endpoint=embedder,
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
            if "embedding" in summary:
                self._embedding(summary["embedding"], check.result["embedding"], options["closest"])
        for language, reason in check.result["skipped"].items():
            self.stdout.write(f"{language}: skipped: {reason}")
        self.stdout.write(f"check {check.pk} stored")

    def _embedding(self, summary: dict, facts: dict, closest: int) -> None:
        self.stdout.write(
            f"  embeddings ({facts['model']}, {facts['dimensions']} dimensions): nearest-neighbour cosine mean "
            f"{summary['mean']:.3f}, median {summary['median']:.3f}, p90 {summary['p90']:.3f}, "
            f"max {summary['max']:.3f}, {summary['above_08']} at 0.8 or more"
        )
        for pair in summary["closest"][:closest]:
            self.stdout.write(f"    {pair['cosine']:.3f}  {pair['key']}  ~  {pair['corpus_key']}")
