"""The calibration report: judges x strata (overall, per dimension, per language) against the experts.

Built from plain arrays with ``calibration.agreement``; the result is JSON, stored with the run together with its
SHA-256 so that a selection can name exactly the report it was made on. Rendered here as the downloadable files
(JSON, CSV, LaTeX) too.
"""

import json
import math
from decimal import Decimal

import numpy as np

from annotation.labelling import active
from annotation.labelling.text import response_length
from calibration import agreement as ag
from calibration.agreement.planning import planning_inputs
from calibration.models import CalibrationRun, CombineRule
from calibration.report_facts import CalibrationFacts, ComparisonFacts
from calibration.selectors import calibration_report_facts
from calibration.suggestion import suggest
from core.canonical import canonical_digest as report_digest  # noqa: F401 (re-exported: the report's checksum)
from core.csvsafe import csv_text
from core.latex import latex_escape

PRIMARY_LEVEL = "ordinal"
ORIENTATION = (
    "A is each comparison's response A (chosen by a seeded coin flip when the comparison set was built); "
    "+k: A wins by k"
)


def combine_orders(rule: str, ab: float | None, ba: float | None) -> int | None:
    """Combine the verdicts of both orders by a run's rule (``CombineRule``); None when the pair is dropped."""
    if rule == CombineRule.SUMMED:
        return ag.combine_summed(ab, ba)
    return ag.combine_facet(ab, ba, inconsistent="drop" if rule == CombineRule.FACET_DROP else "tie")


def _est(estimate: ag.Estimate | None) -> dict | None:
    return None if estimate is None else estimate.as_dict()


def _confusion(judge_scores: np.ndarray, majority: np.ndarray) -> list[list[int]]:
    """Rows: expert majority (B, tie, A); columns: the judge's winner (B, tie, A)."""
    matrix = np.zeros((3, 3), dtype=int)
    for j, m in zip(np.sign(judge_scores), majority, strict=True):
        if not (np.isnan(j) or np.isnan(m)):
            matrix[int(m) + 1, int(j) + 1] += 1
    return matrix.tolist()


def _weighted_kappas(combined: np.ndarray, median: np.ndarray, boot: dict) -> dict:
    """Return linear and quadratic kappa against the experts' median on the declared scale -5..+5.

    Each is given as oriented (A as in the comparison) and over both orientations, which does not depend on it.
    """
    result = {}
    for weights in ("linear", "quadratic"):
        for suffix, both in (("", False), ("_both_orientations", True)):
            estimate = ag.cohen_kappa(
                combined, median, weights=weights, labels=ag.SIGNED_SCALE, both_orientations=both, **boot
            )
            result[f"kappa_{weights}_median{suffix}"] = _est(estimate)
    return result


def stratum_report(
    *,
    experts: np.ndarray,
    judges: dict[str, dict[str, np.ndarray]],
    lengths: tuple[np.ndarray, np.ndarray],
    rule: str,
    seed: int,
    n_boot: int,
) -> dict:
    """Compute every statistic for one stratum; ``experts`` is comparisons x experts (NaN where unlabelled)."""
    boot = {"seed": seed, "n_boot": n_boot}
    majority = ag.majority_winner(experts)
    median = ag.median_score(experts, round_toward_tie=True)
    winners = np.sign(experts)
    baseline = {
        "alpha_ordinal": _est(ag.krippendorff_alpha(experts, "ordinal", **boot)),
        "alpha_interval": _est(ag.krippendorff_alpha(experts, "interval", **boot)),
        "alpha_winner": _est(ag.krippendorff_alpha(winners, "nominal", **boot)),
        "fleiss_kappa": _est(ag.fleiss_kappa(winners, **boot)),
        "n_comparisons": int(experts.shape[0]),
        "n_labels": int(np.sum(~np.isnan(experts))),
    }
    rows = {}
    for name, data in judges.items():
        ab, ba = data["ab"], data["ba"]
        combined = np.array(
            [np.nan if (c := combine_orders(rule, a, b)) is None else float(c) for a, b in zip(ab, ba, strict=True)]
        )
        attempted = int(np.sum(data["attempted"]))
        failures = int(np.sum(np.isnan(ab)) + np.sum(np.isnan(ba))) if attempted else 0
        rows[name] = {
            "alpha_with_judge": _est(ag.alpha_with_judge(experts, combined, PRIMARY_LEVEL, **boot)),
            "alpha_winner_with_judge": _est(ag.alpha_with_judge(winners, np.sign(combined), "nominal", **boot)),
            "kappa_majority": _est(ag.cohen_kappa(np.sign(combined), majority, **boot)),
            "kappa_majority_both_orientations": _est(
                ag.cohen_kappa(np.sign(combined), majority, both_orientations=True, **boot)
            ),
            **_weighted_kappas(combined, median, boot),
            "agreement": _est(ag.percent_agreement(np.sign(combined), majority, **boot)),
            "agreement_without_ties": _est(
                ag.percent_agreement(np.sign(combined), majority, exclude_ties=True, **boot)
            ),
            "spearman": _est(ag.spearman(combined, median, **boot)),
            "position_bias": ag.position_bias(ab, ba, **boot).as_dict(),
            "length_bias": _est(ag.length_bias(combined, lengths[0], lengths[1], **boot)),
            "verdicts_attempted": 2 * attempted,
            "parse_failures": failures,
            "parse_failure_rate": failures / (2 * attempted) if attempted else None,
            "dropped_pairs": int(np.sum(np.isnan(combined) & ~np.isnan(ab) & ~np.isnan(ba))),
            "confusion_vs_majority": _confusion(combined, majority),
        }
    return {"baseline": baseline, "judges": rows}


def _expert_table(facts: CalibrationFacts, index: dict[int, int]) -> tuple[list[str], np.ndarray]:
    """Return the experts' names and their scores as comparisons x experts (NaN where unlabelled)."""
    expert_names = sorted({label.expert for label in facts.labels})
    table = np.full((len(facts.comparisons), len(expert_names)), np.nan)
    for label in facts.labels:
        table[index[label.comparison_id], expert_names.index(label.expert)] = label.score
    return expert_names, table


def _judge_verdicts(facts: CalibrationFacts, index: dict[int, int]) -> dict[str, dict[str, np.ndarray]]:
    """Return each judge's scores in both orders (NaN where unparsed) and which comparisons it was asked about."""
    n = len(facts.comparisons)
    verdicts = {
        name: {"ab": np.full(n, np.nan), "ba": np.full(n, np.nan), "attempted": np.zeros(n, dtype=bool)}
        for name in facts.judges
    }
    for v in facts.verdicts:
        i, arrays = index[v.comparison_id], verdicts[v.judge]
        arrays["attempted"][i] = True
        if v.parsed:
            arrays["ab" if v.order == "AB" else "ba"][i] = v.score
    return verdicts


def _strata(comparisons: list[ComparisonFacts]) -> list[tuple[str, str, np.ndarray]]:
    """Return the strata (key, label, mask of comparisons): overall, each dimension, each language."""
    strata = [("overall", "overall", np.ones(len(comparisons), dtype=bool))]
    for code in sorted({c.dimension for c in comparisons}):
        strata.append((f"dimension:{code}", code, np.array([c.dimension == code for c in comparisons])))
    for lang in sorted({c.language for c in comparisons}):
        strata.append((f"language:{lang}", lang, np.array([c.language == lang for c in comparisons])))
    return strata


def _report_strata(facts: CalibrationFacts, table: np.ndarray, verdicts: dict) -> list[dict]:
    comparisons = facts.comparisons
    lengths = (
        np.array([response_length(c.text_a, c.language) for c in comparisons], dtype=float),
        np.array([response_length(c.text_b, c.language) for c in comparisons], dtype=float),
    )
    report_strata = []
    for key, label, mask in _strata(comparisons):
        if not mask.any():
            continue
        data = stratum_report(
            experts=table[mask],
            judges={n: {k: v[mask] for k, v in d.items()} for n, d in verdicts.items()},
            lengths=(lengths[0][mask], lengths[1][mask]),
            rule=facts.combine_rule,
            seed=facts.seed,
            n_boot=facts.bootstrap,
        )
        report_strata.append({"key": key, "label": label, **data})
    return report_strata


def _costs(facts: CalibrationFacts) -> dict[str, str]:
    """Return what each judge cost; a jury costs what its members' calls cost."""
    costs = {name: str(spent) for name, spent in facts.spent.items()}
    for jury, members in facts.juries.items():
        costs[jury] = str(sum((facts.spent.get(m, 0) for m in members), start=Decimal("0")))
    return costs


def report_from_facts(facts: CalibrationFacts) -> dict:
    """Assemble the report of a collected calibration run from its labels and verdicts."""
    index = {c.id: i for i, c in enumerate(facts.comparisons)}
    expert_names, table = _expert_table(facts, index)
    verdicts = _judge_verdicts(facts, index)
    report_strata = _report_strata(facts, table, verdicts)
    seconds = [label.seconds_spent for label in facts.labels if label.seconds_spent is not None]
    planning = _planning(
        table=table,
        verdicts=verdicts,
        items=np.array([c.item_id for c in facts.comparisons]),
        rule=facts.combine_rule,
        seconds_per_label=float(np.median(seconds)) if seconds else None,
    )
    return {
        "run": facts.name,
        "comparison_set": facts.comparison_set,
        "combine_rule": facts.combine_rule,
        "level": PRIMARY_LEVEL,
        "orientation": ORIENTATION,
        "weighted_kappa_scale": list(ag.SIGNED_SCALE),
        "seed": facts.seed,
        "n_boot": facts.bootstrap,
        "experts": expert_names,
        "judges": list(facts.judges),
        "costs": _costs(facts),
        "strata": report_strata,
        "suggestion": suggest(report_strata[0]) if report_strata else {"judge": None, "reasoning": []},
        "planning": planning,
        "design": _design(facts, table, verdicts),
    }


def build_report(run: CalibrationRun) -> dict:
    """Read a collected calibration run's labels and verdicts and assemble its report."""
    return report_from_facts(calibration_report_facts(run=run))


def agreement_indicators(experts: np.ndarray, ab: np.ndarray, ba: np.ndarray, rule: str) -> np.ndarray:
    """Return 1 where the judge's combined winner is the experts' majority winner, 0 where not, NaN if undefined."""
    majority = ag.majority_winner(experts)
    combined = np.array(
        [np.nan if (c := combine_orders(rule, a, b)) is None else float(c) for a, b in zip(ab, ba, strict=True)]
    )
    return np.where(np.isnan(combined) | np.isnan(majority), np.nan, (np.sign(combined) == majority).astype(float))


def _served_rows(facts: CalibrationFacts, keys: list[str], labelled: np.ndarray) -> tuple[list[int], list[float]]:
    """Return the served comparisons used (indices) and their draw probabilities: each stratum's served sequence up
    to its first served comparison nobody has labelled yet."""
    index = {c.id: i for i, c in enumerate(facts.comparisons)}
    rows, probabilities, closed = [], [], set()
    for comparison_id, probability in facts.served:
        i = index[comparison_id]
        if keys[i] in closed or not labelled[i]:
            closed.add(keys[i])
            continue
        rows.append(i)
        probabilities.append(probability)
    return rows, probabilities


def _design(facts: CalibrationFacts, table: np.ndarray, verdicts: dict) -> dict | None:
    """Return design-unbiased agreement per judge for a set served in active order (``annotation.labelling.active``)."""
    if facts.served is None:
        return None
    keys = [f"{c.dimension}:{c.language}" for c in facts.comparisons]
    sizes: dict[str, int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    rows, probabilities = _served_rows(facts, keys, ~np.isnan(table).all(axis=1))
    rows_array, q = np.array(rows, dtype=int), np.array(probabilities, dtype=float)
    strata = np.array([keys[i] for i in rows], dtype=object)
    judges, ranks = {}, []
    for name, d in verdicts.items():
        y = agreement_indicators(table, d["ab"], d["ba"], facts.combine_rule)[rows_array]
        estimate = active.stratified_mean(np.nan_to_num(y), q, strata, sizes, defined=(~np.isnan(y)).astype(float))
        judges[name] = estimate.as_dict()
        # The highest lower end of the reported 95% interval (Korn-Graubard, ``active.proportion_interval``);
        # without any interval yet (one draw per stratum), the highest estimate.
        ranks.append(
            (-np.inf if estimate.low is None else estimate.low, -np.inf if estimate.value is None else estimate.value)
        )
    names = list(verdicts)
    choice = None
    if names and any(np.isfinite(value) for _low, value in ranks):
        choice = names[max(range(len(names)), key=lambda i: ranks[i])]
    return {
        "judges": judges,
        "n_served_used": len(rows),
        "n_strata": len(sizes),
        "strata_served": len(set(strata.tolist())),
        "choice": choice,
        "epsilon": active.EPSILON,
    }


def _planning(
    *, table: np.ndarray, verdicts: dict, items: np.ndarray, rule: str, seconds_per_label: float | None
) -> dict:
    """Return the inputs of precision planning (``calibration.agreement.planning``) for the whole set."""
    labelled = ~np.isnan(table).all(axis=1)
    per_comparison = float(np.sum(~np.isnan(table)) / labelled.sum()) if labelled.any() else 0.0
    return planning_inputs(
        agreements={name: agreement_indicators(table, d["ab"], d["ba"], rule) for name, d in verdicts.items()},
        items=items,
        labels_per_comparison=per_comparison,
        seconds_per_label=seconds_per_label,
    )


def _rows(report: dict) -> list[dict]:
    rows = []
    for stratum in report["strata"]:
        base = stratum["baseline"]
        rows.append(
            {
                "stratum": stratum["key"],
                "rater": "experts",
                "alpha": base["alpha_ordinal"]["value"],
                "alpha_low": base["alpha_ordinal"]["ci_low"],
                "alpha_high": base["alpha_ordinal"]["ci_high"],
                "kappa": None,
                "kappa_both_orientations": None,
                "agreement": None,
                "agreement_without_ties": None,
                "flip_rate": None,
                "length_bias": None,
                "parse_failure_rate": None,
            }
        )
        for name, row in stratum["judges"].items():
            rows.append(
                {
                    "stratum": stratum["key"],
                    "rater": name,
                    "alpha": row["alpha_with_judge"]["value"],
                    "alpha_low": row["alpha_with_judge"]["ci_low"],
                    "alpha_high": row["alpha_with_judge"]["ci_high"],
                    "kappa": row["kappa_majority"]["value"],
                    # Reports stored before the orientation-invariant kappa existed have no such entry.
                    "kappa_both_orientations": (row.get("kappa_majority_both_orientations") or {}).get("value"),
                    "agreement": row["agreement"]["value"],
                    "agreement_without_ties": row["agreement_without_ties"]["value"],
                    "flip_rate": row["position_bias"]["flip_rate"]["value"],
                    "length_bias": row["length_bias"]["value"],
                    "parse_failure_rate": row["parse_failure_rate"],
                }
            )
    return rows


def _csv_cell(value: object) -> object:
    # A Decimal is written as a number: unquoted and never escaped, so -0.250 stays a number in a spreadsheet.
    return Decimal(f"{value:.3f}") if isinstance(value, float) and math.isfinite(value) else value


def csv_table(report: dict) -> str:
    """Return the experts' baseline and every judge, per stratum, as CSV (text cells quoted and made safe)."""
    rows = _rows(report)
    return csv_text(({k: _csv_cell(v) for k, v in r.items()} for r in rows), list(rows[0]))


def latex_table(report: dict) -> str:
    """Return the overall comparison of judges and experts as a LaTeX table (booktabs)."""
    lines = [
        f"% {ORIENTATION}; kappa both orient.: each comparison counted once as given and once with A and B swapped",
        r"\begin{tabular}{lrrrrrr}",
        r"\toprule",
        r"Rater & $\alpha$ [95\% CI] & $\kappa$ & $\kappa$ both orient. & Agr. & Agr. w/o ties & Flip rate \\",
        r"\midrule",
    ]
    for row in _rows(report):
        if row["stratum"] != "overall":
            continue

        def cell(v: object) -> str:
            return "--" if v is None else f"{v:.3f}"

        alpha = (
            "--"
            if row["alpha"] is None
            else (f"{row['alpha']:.3f} [{cell(row['alpha_low'])}, {cell(row['alpha_high'])}]")
        )
        rater = latex_escape(row["rater"])
        lines.append(
            f"{rater} & {alpha} & {cell(row['kappa'])} & {cell(row['kappa_both_orientations'])} & "
            f"{cell(row['agreement'])} & "
            f"{cell(row['agreement_without_ties'])} & {cell(row['flip_rate'])} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def json_document(report: dict) -> str:
    """Return the whole report as indented JSON."""
    return json.dumps(report, ensure_ascii=False, indent=2)


DOWNLOADS = {
    "json": ("application/json", json_document),
    "csv": ("text/csv; charset=utf-8", csv_table),
    "tex": ("application/x-tex; charset=utf-8", latex_table),
}


def report_file(run: CalibrationRun, fmt: str) -> tuple[bytes, str, str] | None:
    """Return the run's report in ``fmt`` (json, csv, tex; svg, png, pdf: the alpha figure) as (bytes, content type,
    file name); None if unknown."""
    # deferred: calibration.charts imports this module (report_digest); it and core.figures load matplotlib, which
    # only a figure needs (no process loads it at start)
    from calibration.charts import forest_files
    from core.figures import CONTENT_TYPES, FORMATS

    if fmt in FORMATS:
        return forest_files(run, fmt), CONTENT_TYPES[fmt], f"calibration-{run.pk}-alpha.{fmt}"
    if fmt not in DOWNLOADS:
        return None
    content_type, render = DOWNLOADS[fmt]
    return render(run.report).encode("utf-8"), content_type, f"calibration-{run.pk}.{fmt}"
