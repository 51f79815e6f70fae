"""The objective tables of the evaluation report, from the answers alone (pure: plain records in, rows out)."""

import re
from collections import defaultdict

import numpy as np

from evaluation import stats
from evaluation.report.facts import CRISIS_DIMENSION, AnswerFacts, RunFacts

# Resamples of the paired bootstrap between two models' accuracies.
PAIRED_RESAMPLES = 10_000
# The tables each model adds rows to, per language.
PER_MODEL_TABLES = ("accuracy", "summary", "position_bias", "multi_turn", "crisis")


def _answers_by_item(answers: list[AnswerFacts]) -> dict[tuple, dict]:
    """Group the turns of each model's answer to an item in a language, keyed by (model, uid, language)."""
    items: dict[tuple, dict] = {}
    for a in answers:
        entry = items.setdefault(
            (a.model, a.item, a.language),
            {"dimension": a.dimension, "kind": a.kind, "turns": {}, "crisis": a.crisis},
        )
        entry["turns"][a.turn] = a
    return items


def _unparsed(items: dict[tuple, dict]) -> list[dict]:
    return [
        {"model": code, "item": uid, "language": lang, "turn": t.turn}
        for (code, uid, lang), entry in sorted(items.items())
        for t in entry["turns"].values()
        if not t.parsed
    ]


def _accuracy_row(code: str, dimension: str, language: str, prop: stats.Proportion) -> dict:
    return {
        "model": code,
        "dimension": dimension,
        "language": language,
        "n": prop.n,
        "correct": prop.successes,
        "accuracy": prop.value,
        "ci_low": prop.low,
        "ci_high": prop.high,
    }


def _summary_row(code: str, language: str, grouped: stats.GroupAccuracy) -> dict:
    return {
        "model": code,
        "language": language,
        "n": grouped.micro.n,
        "micro": grouped.micro.value,
        "micro_low": grouped.micro.low,
        "micro_high": grouped.micro.high,
        "macro": grouped.macro.value,
        "macro_low": grouped.macro.low,
        "macro_high": grouped.macro.high,
    }


def _position_rows(code: str, language: str, mine: dict[str, dict]) -> list[dict]:
    """Position bias of the first turns, per number of options shown."""
    by_options: dict[int, list[AnswerFacts]] = defaultdict(list)
    for t in (e["turns"][0] for e in mine.values() if 0 in e["turns"]):
        by_options[len(t.option_order)].append(t)
    rows = []
    for n_options, group in sorted(by_options.items()):
        bias = stats.position_bias(
            [None if t.chosen_index is None else t.option_order.index(t.chosen_index) for t in group],
            [t.option_order.index(t.correct_index) if t.correct_index is not None else 0 for t in group],
            n_options=n_options,
            by="position",
        )
        rows.append({"model": code, "language": language, "options": n_options, **bias.as_dict()})
    return rows


def _multi_turn_rows(code: str, language: str, mine: dict[str, dict]) -> list[dict]:
    two_turn = [e for e in mine.values() if e["kind"] == "multi_turn_choice" and len(e["turns"]) == 2]
    if not two_turn:
        return []
    split = stats.turn_split([[float(e["turns"][t].correct) for t in (0, 1)] for e in two_turn])
    return [
        {
            "model": code,
            "language": language,
            "n": split.n_items,
            "both_right": split.both_right,
            "only_first": split.only_first,
            "only_second": split.only_second,
            "both_wrong": split.both_wrong,
        }
    ]


def level(option: str) -> int | None:
    """Return the crisis level (1-5) an option's text names, in English or Chinese; None if it names none."""
    match = re.search(r"(?:level|等级|级别|第)\s*([1-5])|([1-5])\s*级", option, re.IGNORECASE)
    if not match:
        return None
    return int(match.group(1) or match.group(2))


def _option_level(options: list[str], index: int | None) -> int | None:
    return level(options[index]) if index is not None else None


def _crisis_rows(code: str, language: str, mine: dict[str, dict]) -> list[dict]:
    """The confusion matrix of true and chosen crisis levels, on first turns whose true level is known."""
    crisis_items = [e for e in mine.values() if e["crisis"] and e["dimension"] == CRISIS_DIMENSION]
    first_turns = [e["turns"][0] for e in crisis_items]
    pairs = [
        (truth, _option_level(t.options, t.chosen_index))
        for t in first_turns
        if (truth := _option_level(t.options, t.correct_index)) is not None
    ]
    if not pairs:
        return []
    confusion = stats.crisis_confusion([a for a, _ in pairs], [b for _, b in pairs])
    return [{"model": code, "language": language, **confusion.as_dict()}]


def group_rows(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    """Group ``rows`` by the values of ``keys``, in order of first appearance."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[tuple(row[k] for k in keys)].append(row)
    return grouped


def _discriminability(accuracy: list[dict], items: dict[tuple, dict]) -> list[dict]:
    """Mean accuracy against chance (one over the options shown, averaged over every turn), per dimension."""
    rows = []
    for (dim, lang), group in sorted(group_rows(accuracy, ("dimension", "language")).items()):
        chance = float(
            np.mean(
                [
                    1 / len(t.option_order)
                    for (_code, _uid, lg), e in items.items()
                    if lg == lang and e["dimension"] == dim
                    for t in e["turns"].values()
                ]
            )
        )
        mean_accuracy = float(np.mean([r["accuracy"] for r in group]))
        rows.append(
            {
                "dimension": dim,
                "language": lang,
                "chance": chance,
                "mean_accuracy": mean_accuracy,
                "discriminability": stats.discriminability(mean_accuracy, chance),
            }
        )
    return rows


def _shared_items(correct: dict[str, float], codes: list[str]) -> list[str]:
    """Return the uids every model answered (``correct`` is keyed by ``model|uid``)."""
    if not codes:
        return []
    answered = [{k.split("|", 1)[1] for k in correct if k.startswith(f"{c}|")} for c in codes]
    return sorted({key.split("|", 1)[1] for key in correct} & set.intersection(*answered))


def _paired(run: RunFacts, codes: list[str], correct_by: dict[str, dict[str, float]]) -> list[dict]:
    """Paired bootstrap differences of accuracy between every two models, with Benjamini-Hochberg over all."""
    paired = []
    for lang in run.languages:
        correct = correct_by.get(lang, {})
        shared = _shared_items(correct, codes)
        if len(shared) < 2:
            continue
        for i, a in enumerate(codes):
            for b in codes[i + 1 :]:
                result = stats.paired_bootstrap(
                    [correct[f"{a}|{u}"] for u in shared],
                    [correct[f"{b}|{u}"] for u in shared],
                    n_resamples=PAIRED_RESAMPLES,
                    seed=run.seed,
                    model_a=a,
                    model_b=b,
                )
                paired.append(
                    {
                        "a": a,
                        "b": b,
                        "language": lang,
                        "n": result.n_items,
                        "diff": result.difference,
                        "ci_low": result.low,
                        "ci_high": result.high,
                        "p": result.p_value,
                    }
                )
    if paired:
        fdr = stats.benjamini_hochberg([p["p"] for p in paired], q=0.05)
        for row, adjusted, rejected in zip(paired, fdr.adjusted, fdr.rejected, strict=True):
            row["p_adjusted"], row["significant"] = adjusted, bool(rejected)
    return paired


def _model_tables(code: str, language: str, mine: dict[str, dict], flags: dict[str, float], *, seed: int) -> dict:
    """Return the rows one model adds to each per-model table in one language."""
    grouped = stats.accuracy_by_group([e["dimension"] for e in mine.values()], list(flags.values()), seed=seed)
    return {
        "accuracy": [_accuracy_row(code, dim, language, prop) for dim, prop in sorted(grouped.groups.items())],
        "summary": [_summary_row(code, language, grouped)],
        "position_bias": _position_rows(code, language, mine),
        "multi_turn": _multi_turn_rows(code, language, mine),
        "crisis": _crisis_rows(code, language, mine),
    }


def objective_tables(run: RunFacts, codes: list[str], answers: list[AnswerFacts]) -> dict:
    """Build every objective table; an item counts as correct only if every turn is (the minimum across turns)."""
    items = _answers_by_item(answers)
    tables: dict[str, list[dict]] = {name: [] for name in PER_MODEL_TABLES}
    correct_by: dict[str, dict[str, float]] = defaultdict(dict)
    for code in codes:
        for lang in run.languages:
            mine = {uid: e for (c, uid, lg), e in sorted(items.items()) if c == code and lg == lang}
            if not mine:
                continue
            flags = {uid: float(all(t.correct for t in e["turns"].values())) for uid, e in mine.items()}
            correct_by[lang].update({f"{code}|{uid}": v for uid, v in flags.items()})
            for name, rows in _model_tables(code, lang, mine, flags, seed=run.seed).items():
                tables[name] += rows
    return {
        "accuracy": tables["accuracy"],
        "summary": tables["summary"],
        "unparsed": _unparsed(items),
        "paired": _paired(run, codes, correct_by),
        "position_bias": tables["position_bias"],
        "multi_turn": tables["multi_turn"],
        "crisis": tables["crisis"],
        "discriminability": _discriminability(tables["accuracy"], items),
    }
