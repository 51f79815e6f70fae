"""The judge's pair verdicts of an evaluation run, one row per item, language and pair of models with both orders,
and the preference pairs they give, as tables to download; and the raw objective answers, one row per turn.

Models are named by their anonymous codes in the run (``model_a``, ``model_b``: the report's rows are keyed by
them), with their display names beside. ``value`` (with ``winner`` and ``margin``) is both orders combined by the
run's rule, exactly as the report combines them; a pair the rule drops, or with an order unparsed, names why in
``excluded``. The file reads back unchanged through ``manage.py rank_models`` (the label table columns) and
``manage.py agreement``. Rows are read with ``iterator()`` and written as they come.
"""

from collections.abc import Iterator
from itertools import groupby

from django.db.models import F, OuterRef, Subquery

from annotation.labelling import preferences
from annotation.releases.models import ReleaseItem
from calibration.exports import excluded_reason, order_fields, pair_outcomes, verdict_score, winner_margin
from calibration.report import combine_orders
from core.rowfiles import Column
from evaluation import stats
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict

CHUNK = 1000

VERDICT_COLUMNS = [
    Column("unit"),
    Column("item"),
    Column("language"),
    Column("dimension"),
    Column("model_a"),
    Column("model_b"),
    Column("model_a_name"),
    Column("model_b_name"),
    Column("rater"),
    Column("value", "int"),
    Column("winner"),
    Column("margin", "int"),
    Column("excluded"),
    Column("round", "int"),
    Column("score_ab", "int"),
    Column("score_ba", "int"),
    Column("parsed_ab", "bool"),
    Column("parsed_ba", "bool"),
    Column("raw_ab"),
    Column("raw_ba"),
]

ANSWER_COLUMNS = [
    Column("model"),
    Column("model_name"),
    Column("protocol"),
    Column("item"),
    Column("kind"),
    Column("language"),
    Column("layer"),
    Column("dimension"),
    Column("turn", "int"),
    Column("options", "int"),
    Column("correct_index", "int"),
    Column("chosen_index", "int"),
    Column("parsed", "bool"),
    Column("correct", "bool"),
    Column("margin", "float"),
    Column("held_out", "bool"),
]

PAIR_COLUMNS = [
    Column("item"),
    Column("language"),
    Column("dimension"),
    Column("judge"),
    Column("context"),
    Column("prompt"),
    Column("chosen"),
    Column("rejected"),
    Column("chosen_model"),
    Column("rejected_model"),
    Column("chosen_model_name"),
    Column("rejected_model_name"),
    Column("score", "int"),
]


def _response_text(run: EvaluationRun, side: str) -> Subquery:
    return Subquery(
        OpenResponse.objects.filter(
            run=run, model=OuterRef(side), item=OuterRef("item"), language=OuterRef("language")
        ).values("text")[:1]
    )


def _pairs(
    run: EvaluationRun, language: str | None, *, with_texts: bool = False
) -> Iterator[tuple[dict, dict | None, dict | None]]:
    """Yield (facts, AB verdict, BA verdict) per item, language and pair, in the order the report reads them."""
    verdicts = PairVerdict.objects.filter(run=run)
    if language:
        verdicts = verdicts.filter(language=language)
    texts = {}
    if with_texts:
        pinned = ReleaseItem.objects.filter(release_id=run.release_id, item=OuterRef("item")).values(
            "revision__content"
        )[:1]
        texts = {
            "content": Subquery(pinned),
            "text_a": _response_text(run, "model_a"),
            "text_b": _response_text(run, "model_b"),
        }
    rows = verdicts.values(
        "language",
        "order",
        "parsed",
        "score",
        "raw",
        "round",
        item_uid=F("item__uid"),
        dimension=F("item__dimension__code"),
        code_a=F("model_a__code"),
        code_b=F("model_b__code"),
        name_a=F("model_a__label"),
        name_b=F("model_b__label"),
        **texts,
    ).order_by("item_id", "language", "code_a", "code_b", "order")
    key = lambda r: (r["item_uid"], r["language"], r["code_a"], r["code_b"])  # noqa: E731
    for _key, group in groupby(rows.iterator(chunk_size=CHUNK), key=key):
        orders = {row["order"]: row for row in group}
        yield next(iter(orders.values())), orders.get("AB"), orders.get("BA")


def _judge(run: EvaluationRun) -> str:
    return run.judge.name if run.judge_id else ""


def verdict_rows(*, run: EvaluationRun, language: str | None = None) -> Iterator[dict]:
    """Yield one row per judged pair of the run, with both orders and their combination by the run's rule."""
    judge = _judge(run)
    for facts, ab, ba in _pairs(run, language):
        combined = combine_orders(run.combine_rule, verdict_score(ab), verdict_score(ba))
        winner, margin = winner_margin(combined)
        yield {
            "unit": "|".join([facts["item_uid"], facts["language"], facts["code_a"], facts["code_b"]]),
            "item": facts["item_uid"],
            "language": facts["language"],
            "dimension": facts["dimension"],
            "model_a": facts["code_a"],
            "model_b": facts["code_b"],
            "model_a_name": facts["name_a"],
            "model_b_name": facts["name_b"],
            "rater": judge,
            "value": combined,
            "winner": winner,
            "margin": margin,
            "excluded": excluded_reason(ab, ba, combined),
            "round": facts["round"],
            **order_fields(ab, ba, raw="raw"),
        }


def verdict_preference_counts(*, run: EvaluationRun, language: str | None = None) -> dict[str, int]:
    """Count the run's judged pairs that give a preference pair, are ties, inconsistent or not parsed."""
    return preferences.outcome_counts(
        outcome for _facts, outcome, _combined in pair_outcomes(_pairs(run, language), run.combine_rule)
    )


def verdict_preference_rows(*, run: EvaluationRun, language: str | None = None) -> Iterator[dict]:
    """Yield a preference pair per judged pair whose two orders agree on a winner, with the prompt as pinned."""
    judge = _judge(run)
    for facts, outcome, combined in pair_outcomes(_pairs(run, language, with_texts=True), run.combine_rule):
        if outcome.kind != preferences.PAIR:
            continue
        sides = [
            (facts["text_a"], facts["code_a"], facts["name_a"]),
            (facts["text_b"], facts["code_b"], facts["name_b"]),
        ]
        chosen, rejected = sides if outcome.a_chosen else sides[::-1]
        content = (facts["content"] or {}).get(facts["language"], {})
        yield {
            "item": facts["item_uid"],
            "language": facts["language"],
            "dimension": facts["dimension"],
            "judge": judge,
            "context": content.get("context", "") or "",
            "prompt": content.get("prompt", "") or "",
            "chosen": chosen[0],
            "rejected": rejected[0],
            "chosen_model": chosen[1],
            "rejected_model": rejected[1],
            "chosen_model_name": chosen[2],
            "rejected_model_name": rejected[2],
            "score": combined,
        }


def answer_rows(*, run: EvaluationRun, language: str | None = None) -> Iterator[dict]:
    """Yield the run's objective answers, one row per model, item, language and turn, in the order they were stored.

    ``protocol`` says how the turn was scored (``logprob`` when the answer holds option log-probabilities, else
    ``letter``); ``margin``, for log-probability answers, is the key's mean per-token log-probability minus the best
    distractor's. ``layer`` is the parent of the item's dimension (an EiCAP subcategory's layer); ``held_out``: the
    item is the run's held-out release's, not the release's.
    """
    held = set()
    if run.held_out_release_id:
        held = set(ReleaseItem.objects.filter(release_id=run.held_out_release_id).values_list("item_id", flat=True))
    answers = Answer.objects.filter(run=run).select_related("model", "item__dimension__parent").order_by("id")
    if language:
        answers = answers.filter(language=language)
    fields = ("model__code", "model__label", "item_id", "item__uid", "item__kind", "language", "item__dimension__code")
    fields += ("item__dimension__parent__code", "turn", "option_order", "correct_index", "chosen_index", "parsed")
    for row in answers.values_list(*fields, "correct", "scores").iterator(chunk_size=CHUNK):
        code, label, item_id, uid, kind, lang, dimension, layer, turn, order, key, chosen, parsed, correct, scores = row
        margin = None
        if scores is not None and key is not None:
            margin = stats.score_margin({int(o): (s or {}).get("mean") for o, s in scores.items()}, key)
        yield {
            "model": code,
            "model_name": label,
            "protocol": "letter" if scores is None else "logprob",
            "item": uid,
            "kind": kind,
            "language": lang,
            "layer": layer,
            "dimension": dimension,
            "turn": turn,
            "options": len(order or []),
            "correct_index": key,
            "chosen_index": chosen,
            "parsed": parsed,
            "correct": correct,
            "margin": margin,
            "held_out": item_id in held,
        }
