"""The raw labels of a closed comparison set, and the preference pairs they give, as tables to download.

Each label is one row, readable unchanged by ``manage.py agreement`` (columns ``unit``, ``rater``, ``value``: the
comparison, the expert's pseudonym and the signed score as the set orients it; and, with ``--pairwise``, the label
table columns ``item, language, dimension, model_a, model_b, rater, winner, margin, order``) and by
``manage.py rank_models``. Experts are named by a pseudonym, ``E01``, ``E02``, ..., in the order of their accounts
among the set's experts, so the same expert has the same pseudonym in every export of the set.

Rows are read from the database with ``iterator()`` and written as they come (``core.rowfiles``). Only a closed set
is exported: while it is open, experts may still change their labels.
"""

from collections.abc import Iterator

from django.db.models import Count, F, Q
from django.utils.translation import gettext as _

from annotation.labelling import preferences
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel
from core.errors import ServiceError
from core.rowfiles import Column

CHUNK = 1000

# The label table of a comparison set's pairwise scores, as ``manage.py agreement`` (``--pairwise``) and
# ``manage.py rank_models`` read it: every export of scores on a set's comparisons (experts' or judges') starts so.
SCORE_COLUMNS = [
    Column("unit", "int"),
    Column("comparison", "int"),
    Column("item"),
    Column("language"),
    Column("dimension"),
    Column("model_a"),
    Column("model_b"),
    Column("rater"),
    Column("value", "int"),
    Column("winner"),
    Column("margin", "int"),
]
# The preference pairs' columns up to the texts and their models, shared likewise.
PAIR_TEXT_COLUMNS = [
    Column("comparison", "int"),
    Column("item"),
    Column("language"),
    Column("dimension"),
]

LABEL_COLUMNS = [
    *SCORE_COLUMNS,
    Column("order"),
    Column("shown_left"),
    Column("shown_right"),
    Column("seconds_spent", "int"),
    Column("changes", "int"),
    Column("labelled_at"),
    Column("rationale"),
]

PAIR_COLUMNS = [
    *PAIR_TEXT_COLUMNS,
    Column("context"),
    Column("prompt"),
    Column("chosen"),
    Column("rejected"),
    Column("chosen_model"),
    Column("rejected_model"),
    Column("n_labels", "int"),
    Column("n_chosen", "int"),
    Column("n_ties", "int"),
]


class ExportRefused(ServiceError):
    """The set cannot be exported yet: it is open, and its labels may still change."""

    status_code = 409
    code = "set_open"


def check_closed(comparison_set: ComparisonSet) -> None:
    """Raise ``ExportRefused`` unless the set is closed."""
    if comparison_set.is_open:
        raise ExportRefused(
            _(
                "%(name)s is still open: its labels are exported once it is closed, when experts can no longer "
                "change them."
            )
            % {"name": comparison_set.name}
        )


def expert_pseudonyms(comparison_set: ComparisonSet) -> dict[int, str]:
    """Return each expert's pseudonym in the set (``E01``, ...), by account id: the same in every export."""
    ids = list(comparison_set.experts.order_by("pk").values_list("pk", flat=True))
    width = max(2, len(str(len(ids))))
    return {pk: f"E{n:0{width}d}" for n, pk in enumerate(ids, start=1)}


def _winner(score: int) -> tuple[str, int]:
    if score == 0:
        return "tie", 0
    return ("A" if score > 0 else "B"), abs(score)


def label_rows(*, comparison_set: ComparisonSet, language: str | None = None) -> Iterator[dict]:
    """Return the rows of a closed set's labels, one per label by comparison and expert, read as they are iterated.

    Raise ``ExportRefused`` at once (not when iterated) if the set is open.
    """
    check_closed(comparison_set)
    return _label_rows(comparison_set, language)


def _label_rows(comparison_set: ComparisonSet, language: str | None) -> Iterator[dict]:
    pseudonyms = expert_pseudonyms(comparison_set)
    labels = ExpertLabel.objects.filter(assignment__comparison_set=comparison_set)
    if language:
        labels = labels.filter(assignment__comparison__language=language)
    prefix = "assignment__comparison__"
    fields = {
        "comparison": F(f"{prefix}id"),
        "item": F(f"{prefix}item__uid"),
        "language": F(f"{prefix}language"),
        "dimension": F(f"{prefix}dimension__code"),
        "model_a": F(f"{prefix}response_a__model_name"),
        "model_b": F(f"{prefix}response_b__model_name"),
        "expert": F("assignment__expert_id"),
    }
    rows = (
        labels.values("score", "shown_order", "seconds_spent", "created_at", "rationale", **fields)
        .annotate(n_changes=Count("changes"))
        .order_by("comparison", "expert")
    )
    for row in rows.iterator(chunk_size=CHUNK):
        winner, margin = _winner(row["score"])
        left, right = ("A", "B") if row["shown_order"] == "AB" else ("B", "A")
        yield {
            "unit": row["comparison"],
            "comparison": row["comparison"],
            "item": row["item"],
            "language": row["language"],
            "dimension": row["dimension"],
            "model_a": row["model_a"],
            "model_b": row["model_b"],
            "rater": pseudonyms.get(row["expert"], f"E?{row['expert']}"),
            "value": row["score"],
            "winner": winner,
            "margin": margin,
            "order": row["shown_order"],
            "shown_left": left,
            "shown_right": right,
            "seconds_spent": row["seconds_spent"],
            "changes": row["n_changes"],
            "labelled_at": row["created_at"].isoformat(),
            "rationale": row["rationale"],
        }


def _labelled_comparisons(comparison_set: ComparisonSet, language: str | None):  # noqa: ANN202  (a QuerySet)
    comparisons = Comparison.objects.filter(comparison_set=comparison_set)
    if language:
        comparisons = comparisons.filter(language=language)
    label = "assignments__label__score"
    return comparisons.annotate(
        n_labels=Count("assignments__label"),
        n_a=Count("assignments__label", filter=Q(**{f"{label}__gt": 0})),
        n_b=Count("assignments__label", filter=Q(**{f"{label}__lt": 0})),
    ).filter(n_labels__gt=0)


def _outcome(n_a: int, n_b: int) -> preferences.Outcome:
    return preferences.from_labels([1] * min(n_a, 1) + [-1] * min(n_b, 1))


def label_preference_counts(*, comparison_set: ComparisonSet, language: str | None = None) -> dict[str, int]:
    """Count the labelled comparisons of a closed set that give a pair, are ties or are inconsistent."""
    check_closed(comparison_set)
    counts = _labelled_comparisons(comparison_set, language).values_list("n_a", "n_b")
    return preferences.outcome_counts(_outcome(n_a, n_b) for n_a, n_b in counts.iterator(chunk_size=CHUNK))


def label_preference_rows(*, comparison_set: ComparisonSet, language: str | None = None) -> Iterator[dict]:
    """Return a preference pair per labelled comparison of a closed set whose experts agree on a winner.

    Ties and inconsistent comparisons are left out (``label_preference_counts`` counts them). Raise
    ``ExportRefused`` at once if the set is open.
    """
    check_closed(comparison_set)
    return _label_preference_rows(comparison_set, language)


def _label_preference_rows(comparison_set: ComparisonSet, language: str | None) -> Iterator[dict]:
    comparisons = (
        _labelled_comparisons(comparison_set, language)
        .select_related("item__current_revision", "dimension", "response_a", "response_b")
        .order_by("id")
    )
    for c in comparisons.iterator(chunk_size=CHUNK):
        outcome = _outcome(c.n_a, c.n_b)
        if outcome.kind != preferences.PAIR:
            continue
        chosen, rejected = (c.response_a, c.response_b) if outcome.a_chosen else (c.response_b, c.response_a)
        revision = c.item.current_revision
        content = revision.content.get(c.language, {}) if revision else {}
        yield {
            "comparison": c.pk,
            "item": c.item.uid,
            "language": c.language,
            "dimension": c.dimension.code,
            "context": content.get("context", "") or "",
            "prompt": content.get("prompt", "") or "",
            "chosen": chosen.text,
            "rejected": rejected.text,
            "chosen_model": chosen.model_name,
            "rejected_model": rejected.model_name,
            "n_labels": c.n_labels,
            "n_chosen": c.n_a if outcome.a_chosen else c.n_b,
            "n_ties": c.n_labels - c.n_a - c.n_b,
        }
