"""The judges' verdicts of a calibration run, one row per judge and comparison with both orders, and the preference
pairs they give, as tables to download.

A row holds each order's raw output, whether it was parsed, its canonical score (+k: response A wins by k) and
error, and the combination of both orders by the run's rule (``value``, with ``winner`` and ``margin``). A pair the
rule drops, or with an order missing or unparsed, names why in ``excluded`` and has no value. The file reads back
unchanged through ``manage.py agreement`` (``unit``, ``rater``, ``value``: the comparison, the judge and the combined
score, oriented as the set orients it; and the label table columns with ``--pairwise``) and ``manage.py
rank_models``. Rows are read with ``iterator()`` and written as they come.
"""

from collections.abc import Iterable, Iterator
from itertools import groupby

from django.db.models import F

from annotation.labelling import preferences
from annotation.labelling.exports import PAIR_TEXT_COLUMNS, SCORE_COLUMNS
from calibration.models import CalibrationRun, JudgeVerdict
from calibration.report import combine_orders
from core.rowfiles import Column

CHUNK = 1000

VERDICT_COLUMNS = [
    *SCORE_COLUMNS,
    Column("excluded"),
    Column("score_ab", "int"),
    Column("score_ba", "int"),
    Column("parsed_ab", "bool"),
    Column("parsed_ba", "bool"),
    Column("raw_ab"),
    Column("raw_ba"),
    Column("error_ab"),
    Column("error_ba"),
]

PAIR_COLUMNS = [
    *PAIR_TEXT_COLUMNS,
    Column("judge"),
    Column("context"),
    Column("prompt"),
    Column("chosen"),
    Column("rejected"),
    Column("chosen_model"),
    Column("rejected_model"),
    Column("score", "int"),
]


def winner_margin(score: int | None) -> tuple[str, int | None]:
    """Return the winner (A, B or tie; "" for no score) and the margin of a combined score."""
    if score is None:
        return "", None
    if score == 0:
        return "tie", 0
    return ("A" if score > 0 else "B"), abs(score)


def excluded_reason(ab: dict | None, ba: dict | None, combined: int | None) -> str:
    """Say why a pair has no combined score ("" when it has one)."""
    missing = [order for order, verdict in (("AB", ab), ("BA", ba)) if verdict is None or not verdict["parsed"]]
    if missing:
        return f"not parsed: {', '.join(missing)}"
    return "" if combined is not None else "dropped by the rule: the orders disagree"


def _pairs(
    run: CalibrationRun, language: str | None, *, with_texts: bool = False
) -> Iterator[tuple[dict, dict | None, dict | None]]:
    """Yield (facts, AB verdict, BA verdict) per judge and comparison, by judge name and comparison; with
    ``with_texts``, the facts hold the item's content and both responses' texts too."""
    verdicts = JudgeVerdict.objects.filter(calibration_run=run)
    if language:
        verdicts = verdicts.filter(comparison__language=language)
    texts = (
        {
            "content": F("comparison__item__current_revision__content"),
            "text_a": F("comparison__response_a__text"),
            "text_b": F("comparison__response_b__text"),
        }
        if with_texts
        else {}
    )
    rows = verdicts.values(
        "order",
        "parsed",
        "score",
        "raw_output",
        "error",
        judge_name=F("judge__name"),
        comparison_pk=F("comparison_id"),
        item=F("comparison__item__uid"),
        language=F("comparison__language"),
        dimension=F("comparison__dimension__code"),
        model_a=F("comparison__response_a__model_name"),
        model_b=F("comparison__response_b__model_name"),
        **texts,
    ).order_by("judge_name", "comparison_pk", "order")
    for _key, group in groupby(rows.iterator(chunk_size=CHUNK), key=lambda r: (r["judge_name"], r["comparison_pk"])):
        orders = {row["order"]: row for row in group}
        first = next(iter(orders.values()))
        yield first, orders.get("AB"), orders.get("BA")


def verdict_score(verdict: dict | None) -> int | None:
    """Return an order's canonical score, None when it is missing or not parsed."""
    return verdict["score"] if verdict is not None and verdict["parsed"] else None


def order_fields(ab: dict | None, ba: dict | None, *, raw: str) -> dict:
    """Return each order's score, whether it was parsed and its raw output (the verdict's ``raw`` field)."""
    orders = (("ab", ab), ("ba", ba))
    return {
        **{f"score_{o}": verdict_score(v) for o, v in orders},
        **{f"parsed_{o}": bool(v and v["parsed"]) for o, v in orders},
        **{f"raw_{o}": v[raw] if v else None for o, v in orders},
    }


def pair_outcomes(
    pairs: Iterable[tuple[dict, dict | None, dict | None]], rule: str
) -> Iterator[tuple[dict, preferences.Outcome, int | None]]:
    """Yield each pair's facts with its preference outcome and its orders combined by ``rule``."""
    for facts, ab, ba in pairs:
        combined = combine_orders(rule, verdict_score(ab), verdict_score(ba))
        yield facts, preferences.from_orders(verdict_score(ab), verdict_score(ba), combined), combined


def verdict_rows(*, run: CalibrationRun, language: str | None = None) -> Iterator[dict]:
    """Yield one row per judge and comparison of the run, with both orders and their combination."""
    for facts, ab, ba in _pairs(run, language):
        combined = combine_orders(run.combine_rule, verdict_score(ab), verdict_score(ba))
        winner, margin = winner_margin(combined)
        yield {
            "unit": facts["comparison_pk"],
            "comparison": facts["comparison_pk"],
            "item": facts["item"],
            "language": facts["language"],
            "dimension": facts["dimension"],
            "model_a": facts["model_a"],
            "model_b": facts["model_b"],
            "rater": facts["judge_name"],
            "value": combined,
            "winner": winner,
            "margin": margin,
            "excluded": excluded_reason(ab, ba, combined),
            **order_fields(ab, ba, raw="raw_output"),
            "error_ab": ab["error"] if ab else None,
            "error_ba": ba["error"] if ba else None,
        }


def verdict_preference_counts(*, run: CalibrationRun, language: str | None = None) -> dict[str, int]:
    """Count the run's judged pairs that give a preference pair, are ties, inconsistent or not parsed."""
    return preferences.outcome_counts(
        outcome for _facts, outcome, _combined in pair_outcomes(_pairs(run, language), run.combine_rule)
    )


def verdict_preference_rows(*, run: CalibrationRun, language: str | None = None) -> Iterator[dict]:
    """Yield a preference pair per judge and comparison whose two orders agree on a winner."""
    for facts, outcome, combined in pair_outcomes(_pairs(run, language, with_texts=True), run.combine_rule):
        if outcome.kind != preferences.PAIR:
            continue
        sides = [(facts["text_a"], facts["model_a"]), (facts["text_b"], facts["model_b"])]
        (chosen, chosen_model), (rejected, rejected_model) = sides if outcome.a_chosen else sides[::-1]
        content = (facts["content"] or {}).get(facts["language"], {})
        yield {
            "comparison": facts["comparison_pk"],
            "item": facts["item"],
            "language": facts["language"],
            "dimension": facts["dimension"],
            "judge": facts["judge_name"],
            "context": content.get("context", "") or "",
            "prompt": content.get("prompt", "") or "",
            "chosen": chosen,
            "rejected": rejected,
            "chosen_model": chosen_model,
            "rejected_model": rejected_model,
            "score": combined,
        }
