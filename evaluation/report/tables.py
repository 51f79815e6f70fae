"""Every table of the evaluation report, from the run's facts alone (pure: plain records in, JSON out)."""

from collections import defaultdict

from evaluation import stats, style
from evaluation.report.eicap import eicap_tables
from evaluation.report.facts import ModelFacts, ReportFacts, ResponseFacts, RunFacts
from evaluation.report.files import report_files_names
from evaluation.report.held_out import held_out_tables
from evaluation.report.objective import objective_tables
from evaluation.report.subjective import subjective_tables

Keyed = dict[tuple[str, str], dict]


def _standing(
    run: RunFacts, models: list[ModelFacts], summary: Keyed, overall: Keyed, gaps: stats.DeltaZResult
) -> list[dict]:
    """Return each model's accuracy, rating and ΔZ typology per language."""
    by_model = {g.model: g for g in gaps.models}
    rows = []
    for lang in run.languages:
        for m in models:
            s, r, g = summary.get((m.code, lang)), overall.get((m.code, lang)), by_model.get(m.code)
            rows.append(
                {
                    "model": m.code,
                    "label": m.label,
                    "language": lang,
                    "accuracy": s["micro"] if s else None,
                    "macro": s["macro"] if s else None,
                    "rating": r["display"] if r else None,
                    "conservative": r["conservative"] if r else None,
                    "delta": g.delta_z.get(lang) if g else None,
                    "type": g.typology if g else None,
                }
            )
    return rows


def _style_rows(run: RunFacts, codes: list[str], responses: list[ResponseFacts]) -> list[dict]:
    rows = []
    for code in codes:
        for lang in run.languages:
            texts = [o.text for o in responses if o.model == code and o.language == lang]
            if not texts:
                continue
            summary = style.style_summary(texts, lang)
            rows.append(
                {
                    "model": code,
                    "language": lang,
                    "n": summary.n_responses,
                    "opener_rate": summary.share_with_opener,
                    "closer_rate": summary.share_with_closer,
                    "length": summary.length,
                    "list_density": summary.list_density,
                }
            )
    return rows


def _style_correlations(run: RunFacts, codes: list[str], style_rows: list[dict], overall: Keyed) -> dict:
    """Correlate each style metric with the overall rating, per language that has both."""
    correlations = {}
    for lang in run.languages:
        metrics = {
            r["model"]: {
                "openers": r["opener_rate"],
                "closers": r["closer_rate"],
                "length": r["length"],
                "list_density": r["list_density"],
            }
            for r in style_rows
            if r["language"] == lang
        }
        rated = {c: overall[(c, lang)]["mu"] for c in codes if (c, lang) in overall}
        if metrics and rated:
            correlations[lang] = {k: v.as_dict() for k, v in style.style_rating_correlations(metrics, rated).items()}
    return correlations


def _cross_lingual(run: RunFacts, objective: dict, subjective: dict) -> list[dict]:
    """Compare English and Chinese scores per dimension (accuracy, or the rating for open dimensions)."""
    if not set(run.languages) >= {"en", "zh"}:
        return []
    scores: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for row in objective["accuracy"]:
        scores[row["dimension"]][row["language"]][row["model"]] = row["accuracy"]
    for row in subjective["ratings"]:
        if row["dimension"] != "overall":
            scores[row["dimension"]][row["language"]][row["model"]] = row["mu"]
    lingual = stats.cross_lingual_gaps(scores, language_a="en", language_b="zh", leave_dimension_out=True)
    return [
        {
            "dimension": dim.dimension,
            "mean_gap": dim.mean_gap,
            "r": dim.correlation.r,
            "p": dim.correlation.p_value,
            "undefined_reason": dim.correlation.undefined_reason,
        }
        for dim in lingual.dimensions
    ]


def _notes(run: RunFacts, objective: dict, subjective: dict, gaps: stats.DeltaZResult) -> list[str]:
    notes = list(run.notes)
    if objective["unparsed"]:
        notes.append(f"{len(objective['unparsed'])} objective answers could not be parsed and count as wrong.")
    if subjective["failed"]:
        notes.append(f"{subjective['failed']} judge replies were unparseable; their pairs are left out, not guessed.")
    notes += [f"ΔZ {k}: {v}" for k, v in gaps.notes.items()]
    notes += [
        f"Bradley-Terry ({row['language']}): {row['undefined_reason']}."
        for row in subjective["bradley_terry_summary"]
        if row["undefined_reason"]
    ]
    return notes


def _delta_z(run: RunFacts, codes: list[str], summary: Keyed, overall: Keyed) -> stats.DeltaZResult:
    return stats.delta_z(
        {lang: {c: summary[(c, lang)]["micro"] for c in codes if (c, lang) in summary} for lang in run.languages},
        {lang: {c: overall[(c, lang)]["mu"] for c in codes if (c, lang) in overall} for lang in run.languages},
    )


def report_tables(facts: ReportFacts) -> dict:
    """Assemble every table of the report as plain JSON."""
    run, codes = facts.run, [m.code for m in facts.models]
    # The held-out set is scored beside the release, never pooled with it.
    answers = [a for a in facts.answers if not a.held_out]
    held = [a for a in facts.answers if a.held_out]
    objective = objective_tables(run, codes, answers)
    subjective = subjective_tables(run, codes, facts.verdicts, facts.responses)
    overall = {(r["model"], r["language"]): r for r in subjective["ratings"] if r["dimension"] == "overall"}
    summary = {(r["model"], r["language"]): r for r in objective["summary"]}
    gaps = _delta_z(run, codes, summary, overall)
    standing = _standing(run, facts.models, summary, overall, gaps)
    style_rows = _style_rows(run, codes, facts.responses)
    eicap = eicap_tables(run, codes, answers, facts.dimension_order)
    held_out = held_out_tables(run, codes, answers, held)
    return {
        "run": run.name,
        "release": run.release,
        "judge": run.judge,
        "protocol": run.protocol,
        "pairing": run.pairing,
        "combine_rule": run.combine_rule,
        "seed": run.seed,
        "languages": run.languages,
        "models": [{"code": m.code, "label": m.label} for m in facts.models],
        "objective": objective,
        "subjective": subjective,
        "analysis": {
            "standing": standing,
            "delta_z": [{"model": r["model"], "language": r["language"], "delta": r["delta"]} for r in standing],
            "style": style_rows,
            "style_correlations": _style_correlations(run, codes, style_rows, overall),
            "cross_lingual": _cross_lingual(run, objective, subjective),
        },
        "eicap": eicap,
        "held_out": {"release": run.held_out_release, "accuracy": held_out} if held_out else {},
        "notes": _notes(run, objective, subjective, gaps),
        "files": report_files_names(run.languages, eicap_languages=eicap.get("languages", []), held_out=bool(held_out)),
    }
