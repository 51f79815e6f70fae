"""The evaluation report, rebuilt from the stored answers and verdicts alone (so recomputing gives the same bytes).

Objective: accuracy per model x dimension x language with Wilson intervals, macro/micro averages, paired bootstrap
differences with Benjamini-Hochberg, discriminability, position bias among wrong answers, multi-turn splits and the
crisis confusion matrix. Subjective: TrueSkill ratings per model x dimension x language (and overall per language)
from the judge's combined verdicts, and the win-rate matrix. Analyses: ΔZ typology and style metrics.
"""

import csv
import hashlib
import io
import json
from collections import defaultdict

import numpy as np

from annotation.content import canonical_json
from calibration import agreement
from calibration.models import CombineRule
from evaluation import ratings
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict


def _combine(rule: str, ab: float | None, ba: float | None) -> int | None:
    if rule == CombineRule.SUMMED:
        return agreement.combine_summed(ab, ba)
    return agreement.combine_facet(ab, ba, inconsistent="drop" if rule == CombineRule.FACET_DROP else "tie")


def _objective(run: EvaluationRun, codes: list[str]) -> dict:
    from evaluation import stats

    answers = list(Answer.objects.filter(run=run).select_related("model", "item__dimension").order_by("id"))
    # An item is correct only if every turn is (minimum across turns).
    items: dict[tuple, dict] = {}
    for a in answers:
        key = (a.model.code, a.item.uid, a.language)
        entry = items.setdefault(
            key,
            {"dimension": a.item.dimension.code, "kind": a.item.kind, "turns": {}, "crisis": a.item.crisis_level_id},
        )
        entry["turns"][a.turn] = a
    accuracy, summary, unparsed = [], [], []
    per_model_lang: dict[tuple, dict[str, bool]] = defaultdict(dict)
    groups: dict[tuple, list[bool]] = defaultdict(list)
    for (code, uid, lang), entry in sorted(items.items()):
        turns = [entry["turns"][t] for t in sorted(entry["turns"])]
        correct = all(t.correct for t in turns)
        groups[(code, entry["dimension"], lang)].append(correct)
        per_model_lang[(code, lang)][uid] = correct
        unparsed += [{"model": code, "item": uid, "language": lang, "turn": t.turn} for t in turns if not t.parsed]
    for (code, dim, lang), values in sorted(groups.items()):
        n, k = len(values), int(sum(values))
        low, high = stats.wilson_interval(k, n)
        accuracy.append(
            {
                "model": code,
                "dimension": dim,
                "language": lang,
                "n": n,
                "correct": k,
                "accuracy": k / n,
                "ci_low": low,
                "ci_high": high,
            }
        )
    for code in codes:
        for lang in run.languages:
            rows = [r for r in accuracy if r["model"] == code and r["language"] == lang]
            if not rows:
                continue
            n, k = sum(r["n"] for r in rows), sum(r["correct"] for r in rows)
            summary.append(
                {
                    "model": code,
                    "language": lang,
                    "micro": k / n,
                    "macro": float(np.mean([r["accuracy"] for r in rows])),
                    "n": n,
                }
            )
    paired = []
    for lang in run.languages:
        for i, a in enumerate(codes):
            for b in codes[i + 1 :]:
                common = sorted(set(per_model_lang[(a, lang)]) & set(per_model_lang[(b, lang)]))
                if not common:
                    continue
                x = np.array([per_model_lang[(a, lang)][u] for u in common], dtype=float)
                y = np.array([per_model_lang[(b, lang)][u] for u in common], dtype=float)
                result = stats.paired_bootstrap(x, y, n_boot=10_000, seed=run.seed)
                paired.append(
                    {
                        "a": a,
                        "b": b,
                        "language": lang,
                        "n": len(common),
                        "diff": result.diff,
                        "ci_low": result.ci_low,
                        "ci_high": result.ci_high,
                        "p": result.p_value,
                    }
                )
    if paired:
        adjusted, rejected = stats.benjamini_hochberg([p["p"] for p in paired], q=0.05)
        for row, p_adj, rej in zip(paired, adjusted, rejected, strict=True):
            row["p_adjusted"], row["significant"] = p_adj, bool(rej)
    return {"accuracy": accuracy, "summary": summary, "unparsed": unparsed, "paired": paired}


def _subjective(run: EvaluationRun, codes: list[str]) -> dict:
    verdicts = list(
        PairVerdict.objects.filter(run=run).select_related("model_a", "model_b", "item__dimension").order_by("id")
    )
    by_pair: dict[tuple, dict[str, int | None]] = defaultdict(dict)
    for v in verdicts:
        key = (v.item.uid, v.item.dimension.code, v.language, v.model_a.code, v.model_b.code)
        by_pair[key][v.order] = v.score if v.parsed else None
    combined: dict[tuple, list[tuple[str, str, float]]] = defaultdict(list)
    for (uid, dim, lang, a, b), orders in sorted(by_pair.items()):
        score = _combine(run.combine_rule, orders.get("AB"), orders.get("BA"))
        if score is None:
            continue
        combined[(dim, lang)].append((a, b, float(score)))
        combined[("overall", lang)].append((a, b, float(score)))
    rating_rows = []
    for (dim, lang), rows in sorted(combined.items()):
        result = ratings.rate_verdicts(rows, models=codes, margin_mapping=run.margin_mapping, seed=run.seed)
        for r in result.ratings:
            rating_rows.append(
                {
                    "model": r.model,
                    "dimension": dim,
                    "language": lang,
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "conservative": r.conservative,
                    "display": r.display,
                    "display_low": r.display_low,
                    "display_high": r.display_high,
                    "n": r.n_verdicts,
                }
            )
    win_rates = []
    from evaluation import stats

    for lang in run.languages:
        rows = combined.get(("overall", lang), [])
        for i, a in enumerate(codes):
            for b in codes[i + 1 :]:
                wins = sum(1 for x, y, s in rows if (x, y, s > 0) in ((a, b, True),) or (x == b and y == a and s < 0))
                losses = sum(1 for x, y, s in rows if (x == a and y == b and s < 0) or (x == b and y == a and s > 0))
                draws = sum(1 for x, y, s in rows if {x, y} == {a, b} and s == 0)
                test = stats.win_rate(wins, losses)
                win_rates.append(
                    {
                        "language": lang,
                        "a": a,
                        "b": b,
                        "wins": wins,
                        "losses": losses,
                        "draws": draws,
                        "rate": test.rate,
                        "p": test.p_value,
                    }
                )
    tested = [r for r in win_rates if r["p"] is not None]
    if tested:
        adjusted, rejected = stats.benjamini_hochberg([r["p"] for r in tested], q=0.05)
        for row, p_adj, rej in zip(tested, adjusted, rejected, strict=True):
            row["p_adjusted"], row["significant"] = p_adj, bool(rej)
    return {
        "ratings": rating_rows,
        "win_rates": win_rates,
        "judge_calls": len(verdicts),
        "parsed": sum(1 for v in verdicts if v.parsed),
        "failed": sum(1 for v in verdicts if not v.parsed),
        "rounds": max((v.round for v in verdicts), default=0),
        "method": (
            f"TrueSkill (mu 25, sigma 25/3, beta 25/6, tau 0), margin mapping '{run.margin_mapping}', averaged over "
            f"seeded shuffled passes; orders combined by '{run.combine_rule}'."
        ),
    }


def build_report(run: EvaluationRun) -> dict:
    """Assemble every table of the report as plain JSON."""
    from evaluation import stats

    models = list(run.models.order_by("code"))
    codes = [m.code for m in models]
    objective = _objective(run, codes)
    subjective = _subjective(run, codes)
    standing = []
    overall = {(r["model"], r["language"]): r for r in subjective["ratings"] if r["dimension"] == "overall"}
    summary = {(r["model"], r["language"]): r for r in objective["summary"]}
    for lang in run.languages:
        for m in models:
            s, r = summary.get((m.code, lang)), overall.get((m.code, lang))
            standing.append(
                {
                    "model": m.code,
                    "label": m.label,
                    "language": lang,
                    "accuracy": s["micro"] if s else None,
                    "macro": s["macro"] if s else None,
                    "rating": r["display"] if r else None,
                    "conservative": r["conservative"] if r else None,
                }
            )
    delta = stats.delta_z(standing)
    for row in standing:
        row["delta"] = delta.get((row["model"], row["language"]))
    types = stats.typology({k: v for k, v in delta.items() if v is not None}, run.languages)
    for row in standing:
        row["type"] = types.get(row["model"])
    opens = list(OpenResponse.objects.filter(run=run, ok=True).select_related("model").order_by("id"))
    style = stats.style_table([(o.model.code, o.language, o.text) for o in opens])
    notes = list(run.notes)
    if objective["unparsed"]:
        notes.append(f"{len(objective['unparsed'])} objective answers could not be parsed and count as wrong.")
    if subjective["failed"]:
        notes.append(f"{subjective['failed']} judge replies were unparseable; their pairs are left out, not guessed.")
    return {
        "run": run.name,
        "release": str(run.release),
        "judge": run.judge.name if run.judge_id else None,
        "protocol": run.protocol,
        "pairing": run.pairing,
        "combine_rule": run.combine_rule,
        "seed": run.seed,
        "languages": run.languages,
        "models": [{"code": m.code, "label": m.label} for m in models],
        "objective": objective,
        "subjective": subjective,
        "analysis": {
            "standing": standing,
            "delta_z": [{"model": k[0], "language": k[1], "delta": v} for k, v in sorted(delta.items())],
            "style": style,
        },
        "notes": notes,
        "files": sorted(report_files_names(run.languages)),
    }


def report_files_names(languages: list[str]) -> list[str]:
    return [
        "report.json",
        "accuracy.csv",
        "ratings.csv",
        "win_rates.csv",
        "leaderboard.tex",
        "scatter.svg",
        "delta_z.svg",
        "ratings.svg",
        *[f"accuracy_{lang}.svg" for lang in languages],
    ]


def report_digest(report: dict) -> str:
    """Return the SHA-256 of the report's canonical JSON."""
    return hashlib.sha256(canonical_json(report).encode("utf-8")).hexdigest()


def _csv(rows: list[dict]) -> bytes:
    if not rows:
        return b""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _latex(report: dict) -> bytes:
    lines = [
        r"\begin{tabular}{llrrrr}",
        r"\toprule",
        r"Model & Lang. & Acc. (micro) & Acc. (macro) & Rating & $\Delta Z$ \\",
        r"\midrule",
    ]

    def f(v: object, digits: int = 3) -> str:
        return "--" if v is None else f"{v:.{digits}f}"

    for r in report["analysis"]["standing"]:
        lines.append(
            f"{r['model']} & {r['language']} & {f(r['accuracy'])} & {f(r['macro'])} & {f(r['rating'], 1)} & "
            f"{f(r['delta'], 2)} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines).encode("utf-8")


def report_files(report: dict) -> dict[str, bytes]:
    """Return the downloadable files of a report (tables as CSV/LaTeX, figures as SVG, everything as JSON)."""
    from evaluation.charts import figures

    files = {
        "report.json": json.dumps(report, ensure_ascii=False, indent=2, sort_keys=True).encode("utf-8"),
        "accuracy.csv": _csv(report["objective"]["accuracy"]),
        "ratings.csv": _csv(report["subjective"]["ratings"]),
        "win_rates.csv": _csv(report["subjective"]["win_rates"]),
        "leaderboard.tex": _latex(report),
    }
    files.update({name: svg.encode("utf-8") for name, svg in figures(report).items()})
    return files
