"""The EiCAP analyses of the report, on the run's multi-turn choice probes (pure: plain records in, rows out).

Accuracy per layer and subcategory, the turn decomposition of two-turn probes, inter-model agreement, score
margins, and significance per subcategory against a baseline (EiCAP's "Sig./24"). Models scored by letter choice
(chat-only APIs) are kept apart from those scored by log-probability: every comparison stays inside one protocol,
and each row names its protocol, as EiCAP marks the two "not directly comparable".
"""

from collections import defaultdict

import numpy as np

from evaluation import stats
from evaluation.report.facts import AnswerFacts, RunFacts

PROBE_KIND = "multi_turn_choice"
LOGPROB, LETTER = "logprob", "letter"
# Resamples of the paired bootstraps (turn gap, subcategory against the baseline), as in EiCAP.
RESAMPLES = 10_000
FDR = 0.05


def _probes(answers: list[AnswerFacts], default_protocol: str) -> dict[tuple[str, str, str], dict]:
    """Group the turns of each model's answer to a probe, keyed by (language, model, uid)."""
    probes: dict[tuple[str, str, str], dict] = {}
    for a in answers:
        if a.kind != PROBE_KIND:
            continue
        entry = probes.setdefault(
            (a.language, a.model, a.item),
            {
                "subcategory": a.dimension,
                "layer": a.layer or a.dimension,
                "protocol": a.protocol or (LOGPROB if default_protocol == LOGPROB else LETTER),
                "turns": {},
            },
        )
        entry["turns"][a.turn] = a
    for entry in probes.values():
        entry.update(_probe_outcome(list(entry["turns"].values())))
    return probes


def _probe_outcome(turns: list[AnswerFacts]) -> dict:
    """Return whether a probe's turns are all right, its chance of being right by guessing, and its margin."""
    margins = [
        stats.score_margin(t.means, t.correct_index) if t.means is not None and t.correct_index is not None else None
        for t in turns
    ]
    return {
        "correct": all(t.correct for t in turns),
        "chance": float(np.mean([1 / len(t.option_order) for t in turns if t.option_order] or [0.0])),
        # The probe is right only if every turn is, so its margin is the smallest turn's (positive iff right).
        "margin": None if not margins or None in margins else min(margins),
    }


def _proportion_row(prop: stats.Proportion) -> dict:
    return {"n": prop.n, "correct": prop.successes, "accuracy": prop.value, "ci_low": prop.low, "ci_high": prop.high}


def _order(dimension_order: list[str]):  # noqa: ANN202 (a sort key)
    rank = {code: i for i, code in enumerate(dimension_order)}
    return lambda code: (rank.get(code, len(rank)), code)


def _accuracy(probes: dict, codes: list[str], languages: list[str], key) -> dict[str, list[dict]]:  # noqa: ANN001
    """Accuracy per subcategory and per layer (probes pooled), and each model's micro and macro averages."""
    by: dict[tuple, list[dict]] = defaultdict(list)
    for (lang, code, _uid), e in probes.items():
        by[(lang, code)].append(e)
    subcategories, layers, summary = [], [], []
    for lang in languages:
        for code in codes:
            mine = by.get((lang, code))
            if not mine:
                continue
            protocol = mine[0]["protocol"]
            layer_of = {e["subcategory"]: e["layer"] for e in mine}
            macro = []
            for group_key, field, out in (("subcategory", "subcategory", subcategories), ("layer", "layer", layers)):
                groups: dict[str, list[bool]] = defaultdict(list)
                for e in mine:
                    groups[e[group_key]].append(e["correct"])
                for group in sorted(groups, key=lambda g: (key(layer_of.get(g, g)), key(g))):
                    prop = stats.wilson_interval(sum(groups[group]), len(groups[group]))
                    row = {"language": lang, "model": code, "protocol": protocol, field: group}
                    if field == "subcategory":
                        row["layer"] = layer_of[group]
                        macro.append(prop.value)
                    out.append(row | _proportion_row(prop))
            micro = stats.wilson_interval(sum(e["correct"] for e in mine), len(mine))
            summary.append(
                {
                    "language": lang,
                    "model": code,
                    "protocol": protocol,
                    "n": micro.n,
                    "micro": micro.value,
                    "micro_low": micro.low,
                    "micro_high": micro.high,
                    "macro": float(np.mean(macro)),
                    "subcategories": len(macro),
                    "chance": float(np.mean([e["chance"] for e in mine])),
                }
            )
    return {"subcategories": subcategories, "layers": layers, "summary": summary}


def _turns(probes: dict, codes: list[str], languages: list[str], seed: int) -> list[dict]:
    """The turn decomposition of each model's two-turn probes, per language."""
    rows = []
    for lang in languages:
        for code in codes:
            two = [
                e
                for (lg, c, _uid), e in sorted(probes.items())
                if lg == lang and c == code and sorted(e["turns"]) == [0, 1]
            ]
            if not two:
                continue
            split = stats.turn_decomposition(
                [e["turns"][0].correct for e in two],
                [e["turns"][1].correct for e in two],
                n_resamples=RESAMPLES,
                seed=seed,
            )
            rows.append(
                {
                    "language": lang,
                    "model": code,
                    "protocol": two[0]["protocol"],
                    "n": split.n,
                    "turn1": split.turn1.value,
                    "turn1_low": split.turn1.low,
                    "turn1_high": split.turn1.high,
                    "turn2": split.turn2.value,
                    "turn2_low": split.turn2.low,
                    "turn2_high": split.turn2.high,
                    "both_wrong": split.both_wrong.value,
                    "both_wrong_low": split.both_wrong.low,
                    "both_wrong_high": split.both_wrong.high,
                    "both_right": split.both_right,
                    "only_first": split.only_first,
                    "only_second": split.only_second,
                    "gap": split.gap,
                    "gap_low": split.gap_low,
                    "gap_high": split.gap_high,
                    "gap_p": split.gap_p,
                    "undefined_reason": split.undefined_reason,
                }
            )
    return rows


def _groups(protocols: dict[str, str]) -> dict[str, list[str]]:
    """Return the models of each protocol, log-probability first, models in code order."""
    groups: dict[str, list[str]] = {}
    for protocol in (LOGPROB, LETTER):
        members = sorted(c for c, p in protocols.items() if p == protocol)
        if members:
            groups[protocol] = members
    return groups


def _agreement(probes: dict, groups: dict[str, list[str]], languages: list[str]) -> list[dict]:
    rows = []
    for lang in languages:
        for protocol, members in groups.items():
            outcomes: dict[str, dict[str, bool]] = {c: {} for c in members}
            for (lg, c, uid), e in probes.items():
                if lg == lang and c in outcomes:
                    outcomes[c][uid] = e["correct"]
            outcomes = {c: o for c, o in outcomes.items() if o}
            if len(outcomes) < 2:
                continue
            rows += [
                {"language": lang, "protocol": protocol, **cell.as_dict()} for cell in stats.outcome_agreement(outcomes)
            ]
    return rows


def _margins(probes: dict, codes: list[str], languages: list[str]) -> list[dict]:
    rows = []
    for lang in languages:
        for code in codes:
            mine = [
                e["margin"]
                for (lg, c, _uid), e in sorted(probes.items())
                if lg == lang and c == code and e["protocol"] == LOGPROB and e["margin"] is not None
            ]
            if mine:
                rows.append({"language": lang, "model": code, **stats.margin_distribution(mine).as_dict()})
    return rows


def _significance(
    probes: dict, groups: dict[str, list[str]], languages: list[str], seed: int
) -> tuple[list[dict], list[dict]]:
    """Each model against its protocol's baseline (the group's first model), per subcategory, BH per model."""
    rows, summary = [], []
    for lang in languages:
        for protocol, members in groups.items():
            outcome = {c: {} for c in members}
            subcategory, layer = {}, {}
            for (lg, c, uid), e in probes.items():
                if lg == lang and c in outcome:
                    outcome[c][uid] = float(e["correct"])
                    subcategory[uid], layer[e["subcategory"]] = e["subcategory"], e["layer"]
            baseline = members[0]
            if not outcome[baseline]:
                continue
            for code in members[1:]:
                if not outcome[code]:
                    continue
                result = stats.significance_by_group(
                    outcome[code], outcome[baseline], subcategory, n_resamples=RESAMPLES, seed=seed, q=FDR
                )
                common = {"language": lang, "protocol": protocol, "model": code, "baseline": baseline}
                rows += [
                    common
                    | {
                        "subcategory": g.group,
                        "layer": layer[g.group],
                        "n": g.n,
                        "accuracy": g.model,
                        "baseline_accuracy": g.baseline,
                        "diff": g.difference,
                        "ci_low": g.low,
                        "ci_high": g.high,
                        "p": g.p_value,
                        "p_adjusted": g.p_adjusted,
                        "significant": g.significant,
                        "undefined_reason": g.undefined_reason,
                    }
                    for g in result.groups
                ]
                summary.append(
                    common
                    | {
                        "subcategories": result.n_groups,
                        "significant_better": result.significant_better,
                        "significant_worse": result.significant_worse,
                    }
                )
    return rows, summary


def eicap_tables(run: RunFacts, codes: list[str], answers: list[AnswerFacts], dimension_order: list[str]) -> dict:
    """Build the EiCAP analyses of a run's multi-turn choice probes; an empty dict when it answered none."""
    probes = _probes(answers, run.protocol)
    if not probes:
        return {}
    key = _order(dimension_order)
    protocols = {c: e["protocol"] for (_lg, c, _uid), e in sorted(probes.items())}
    groups = _groups(protocols)
    languages = [lang for lang in run.languages if any(lg == lang for lg, _c, _u in probes)]
    significance, sig_summary = _significance(probes, groups, languages, run.seed)
    accuracy = _accuracy(probes, codes, languages, key)
    sig = {(r["language"], r["model"]): r for r in sig_summary}
    for row in accuracy["summary"]:
        found = sig.get((row["language"], row["model"]))
        row["baseline"] = groups[row["protocol"]][0]
        row["significant_better"] = found["significant_better"] if found else None
        row["significant_worse"] = found["significant_worse"] if found else None
    return {
        "languages": languages,
        "protocols": [{"model": c, "protocol": protocols[c]} for c in codes if c in protocols],
        "baselines": {protocol: members[0] for protocol, members in groups.items()},
        "mixed_protocols": len(groups) > 1,
        **accuracy,
        "turns": _turns(probes, codes, languages, run.seed),
        "agreement": _agreement(probes, groups, languages),
        "margins": _margins(probes, codes, languages),
        "margin_edges": stats.MARGIN_EDGES,
        "significance": significance,
        "significance_summary": sig_summary,
        "resamples": RESAMPLES,
        "fdr": FDR,
    }
