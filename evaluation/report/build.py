"""Build the evaluation report from a run's stored answers and verdicts, and its checksum."""

import hashlib
import re
from collections import defaultdict

import numpy as np

from calibration.report import combine_orders
from core.canonical import canonical_json
from evaluation import ratings, stats, style
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from evaluation.report.files import report_files_names

# Resamples of the Bradley-Terry bootstrap in reports (each refits the strengths: about 1 ms with 10 models).
BRADLEY_TERRY_RESAMPLES = 1000


def _objective(run: EvaluationRun, codes: list[str]) -> dict:
    answers = list(Answer.objects.filter(run=run).select_related("model", "item__dimension").order_by("id"))
    # An item counts as correct only if every turn is (the minimum across turns).
    items: dict[tuple, dict] = {}
    for a in answers:
        entry = items.setdefault(
            (a.model.code, a.item.uid, a.language),
            {"dimension": a.item.dimension.code, "kind": a.item.kind, "turns": {}, "crisis": a.item.crisis_level_id},
        )
        entry["turns"][a.turn] = a
    unparsed = [
        {"model": code, "item": uid, "language": lang, "turn": t.turn}
        for (code, uid, lang), entry in sorted(items.items())
        for t in entry["turns"].values()
        if not t.parsed
    ]
    accuracy, summary, position, multi_turn, crisis, discrimination = [], [], [], [], [], []
    correct_by: dict[tuple, dict[str, float]] = defaultdict(dict)
    for code in codes:
        for lang in run.languages:
            mine = {uid: e for (c, uid, lg), e in sorted(items.items()) if c == code and lg == lang}
            if not mine:
                continue
            flags = {uid: float(all(t.correct for t in e["turns"].values())) for uid, e in mine.items()}
            correct_by[lang].update({f"{code}|{uid}": v for uid, v in flags.items()})
            grouped = stats.accuracy_by_group(
                [e["dimension"] for e in mine.values()], list(flags.values()), seed=run.seed
            )
            for dim, prop in sorted(grouped.groups.items()):
                accuracy.append(
                    {
                        "model": code,
                        "dimension": dim,
                        "language": lang,
                        "n": prop.n,
                        "correct": prop.successes,
                        "accuracy": prop.value,
                        "ci_low": prop.low,
                        "ci_high": prop.high,
                    }
                )
            summary.append(
                {
                    "model": code,
                    "language": lang,
                    "n": grouped.micro.n,
                    "micro": grouped.micro.value,
                    "micro_low": grouped.micro.low,
                    "micro_high": grouped.micro.high,
                    "macro": grouped.macro.value,
                    "macro_low": grouped.macro.low,
                    "macro_high": grouped.macro.high,
                }
            )
            first_turns = [e["turns"][0] for e in mine.values() if 0 in e["turns"]]
            by_options: dict[int, list] = defaultdict(list)
            for t in first_turns:
                by_options[len(t.option_order)].append(t)
            for n_options, group in sorted(by_options.items()):
                bias = stats.position_bias(
                    [None if t.chosen_index is None else t.option_order.index(t.chosen_index) for t in group],
                    [t.option_order.index(t.correct_index) if t.correct_index is not None else 0 for t in group],
                    n_options=n_options,
                    by="position",
                )
                position.append({"model": code, "language": lang, "options": n_options, **bias.as_dict()})
            two_turn = [e for e in mine.values() if e["kind"] == "multi_turn_choice" and len(e["turns"]) == 2]
            if two_turn:
                split = stats.turn_split([[float(e["turns"][t].correct) for t in (0, 1)] for e in two_turn])
                multi_turn.append(
                    {
                        "model": code,
                        "language": lang,
                        "n": split.n_items,
                        "both_right": split.both_right,
                        "only_first": split.only_first,
                        "only_second": split.only_second,
                        "both_wrong": split.both_wrong,
                    }
                )
            crisis_items = [e for e in mine.values() if e["crisis"] and e["dimension"] == "crisis_recognition"]
            if crisis_items:
                truth, predicted = [], []
                for e in crisis_items:
                    t = e["turns"][0]
                    options = t.revision.content[lang]["options"]
                    truth.append(_level(options[t.correct_index]) if t.correct_index is not None else None)
                    predicted.append(_level(options[t.chosen_index]) if t.chosen_index is not None else None)
                pairs = [(a, b) for a, b in zip(truth, predicted, strict=True) if a is not None]
                if pairs:
                    confusion = stats.crisis_confusion([a for a, _ in pairs], [b for _, b in pairs])
                    crisis.append({"model": code, "language": lang, **confusion.as_dict()})
    for (dim, lang), rows in sorted(_group(accuracy, ("dimension", "language")).items()):
        chance = float(
            np.mean(
                [
                    1 / len(t.option_order)
                    for (c, uid, lg), e in items.items()
                    if lg == lang and e["dimension"] == dim
                    for t in e["turns"].values()
                ]
            )
        )
        mean_accuracy = float(np.mean([r["accuracy"] for r in rows]))
        discrimination.append(
            {
                "dimension": dim,
                "language": lang,
                "chance": chance,
                "mean_accuracy": mean_accuracy,
                "discriminability": stats.discriminability(mean_accuracy, chance),
            }
        )
    paired = []
    for lang in run.languages:
        shared = (
            sorted(
                {key.split("|", 1)[1] for key in correct_by[lang]}
                & set.intersection(
                    *[{k.split("|", 1)[1] for k in correct_by[lang] if k.startswith(f"{c}|")} for c in codes]
                )
            )
            if codes
            else []
        )
        for i, a in enumerate(codes):
            for b in codes[i + 1 :]:
                if len(shared) < 2:
                    continue
                result = stats.paired_bootstrap(
                    [correct_by[lang][f"{a}|{u}"] for u in shared],
                    [correct_by[lang][f"{b}|{u}"] for u in shared],
                    n_resamples=10_000,
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
    return {
        "accuracy": accuracy,
        "summary": summary,
        "unparsed": unparsed,
        "paired": paired,
        "position_bias": position,
        "multi_turn": multi_turn,
        "crisis": crisis,
        "discriminability": discrimination,
    }


def _level(option: str) -> int | None:
    match = re.search(r"(?:level|等级|级别|第)\s*([1-5])|([1-5])\s*级", option, re.IGNORECASE)
    if not match:
        return None
    return int(match.group(1) or match.group(2))


def _group(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[tuple(row[k] for k in keys)].append(row)
    return grouped


def _subjective(run: EvaluationRun, codes: list[str]) -> dict:
    verdicts = list(
        PairVerdict.objects.filter(run=run).select_related("model_a", "model_b", "item__dimension").order_by("id")
    )
    by_pair: dict[tuple, dict[str, int | None]] = defaultdict(dict)
    for v in verdicts:
        key = (v.item.uid, v.item.dimension.code, v.language, v.model_a.code, v.model_b.code)
        by_pair[key][v.order] = v.score if v.parsed else None
    combined: dict[tuple, list[tuple[str, str, float]]] = defaultdict(list)
    for (_uid, dim, lang, a, b), orders in sorted(by_pair.items()):
        score = combine_orders(run.combine_rule, orders.get("AB"), orders.get("BA"))
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
    for lang in run.languages:
        matrix = stats.win_rate_matrix(combined.get(("overall", lang), []), models=codes)
        for i, a in enumerate(matrix.models):
            for j, b in enumerate(matrix.models):
                cell = matrix.cells[i][j]
                if cell is None or a > b:
                    continue
                win_rates.append(
                    {
                        "language": lang,
                        "a": a,
                        "b": b,
                        "wins": cell.wins,
                        "losses": cell.losses,
                        "draws": cell.draws,
                        "rate": cell.win_rate,
                        "p": cell.p_value,
                        "p_adjusted": cell.p_adjusted,
                        "significant": cell.significant,
                    }
                )
    bradley_terry, bradley_terry_summary = _bradley_terry(run, codes, combined)
    return {
        "ratings": rating_rows,
        "bradley_terry": bradley_terry,
        "bradley_terry_summary": bradley_terry_summary,
        "pairing_summary": _pairing_summary(run, verdicts, bradley_terry_summary),
        "win_rates": win_rates,
        "judge_calls": len(verdicts),
        "parsed": sum(1 for v in verdicts if v.parsed),
        "failed": sum(1 for v in verdicts if not v.parsed),
        "rounds": max((v.round for v in verdicts), default=0),
        "combined_pairs": {f"{d}|{lang}": len(rows) for (d, lang), rows in sorted(combined.items())},
        "method": (
            f"TrueSkill (mu 25, sigma 25/3, beta 25/6, tau 0), margin mapping '{run.margin_mapping}', averaged over "
            f"seeded shuffled passes; orders combined by '{run.combine_rule}'."
        ),
    }


def _bradley_terry(run: EvaluationRun, codes: list[str], combined: dict) -> tuple[list[dict], list[dict]]:
    """Rate every language's combined verdicts by Bradley-Terry, with bootstrap intervals over verdicts."""
    rows, summaries = [], []
    for lang in run.languages:
        verdicts = combined.get(("overall", lang))
        if not verdicts:
            continue
        result = ratings.bradley_terry(verdicts, models=codes, seed=run.seed, n_resamples=BRADLEY_TERRY_RESAMPLES)
        for r in result.ratings:
            rows.append(
                {
                    "model": r.model,
                    "language": lang,
                    "strength": r.strength,
                    "low": r.low,
                    "high": r.high,
                    "elo": r.elo,
                    "elo_low": r.elo_low,
                    "elo_high": r.elo_high,
                    "rank": r.rank,
                    "rank_low": r.rank_low,
                    "rank_high": r.rank_high,
                    "wins": r.wins,
                    "n": r.n_verdicts,
                }
            )
        summaries.append(
            {
                "language": lang,
                "n_verdicts": result.n_verdicts,
                "n_resamples": result.n_resamples,
                "n_resamples_without_mle": result.n_resamples_without_mle,
                "rank_stability": result.rank_stability,
                "undefined_reason": result.undefined_reason,
            }
        )
    return rows, summaries


def _pairing_summary(run: EvaluationRun, verdicts: list[PairVerdict], bradley_terry: list[dict]) -> dict | None:
    """For an adaptive run: the judge calls made, those a round-robin on the same strata needs, and rank stability.

    A stratum is an item and language the judge saw; round-robin judges every pair of the models with a usable
    response there, in both orders.
    """
    if run.pairing != EvaluationRun.Pairing.ADAPTIVE:
        return None
    strata = {(v.item_id, v.language) for v in verdicts}
    responding: dict[tuple, int] = defaultdict(int)
    for item_id, lang in OpenResponse.objects.filter(run=run, ok=True).values_list("item_id", "language"):
        responding[(item_id, lang)] += 1
    round_robin_calls = sum(responding[s] * (responding[s] - 1) for s in strata)
    return {
        "judge_calls": len(verdicts),
        "round_robin_calls": round_robin_calls,
        "calls_saved": round_robin_calls - len(verdicts),
        "share_of_round_robin": len(verdicts) / round_robin_calls if round_robin_calls else None,
        "rank_stability": {row["language"]: row["rank_stability"] for row in bradley_terry},
    }


def build_report(run: EvaluationRun) -> dict:
    """Assemble every table of the report as plain JSON."""
    models = list(run.models.order_by("code"))
    codes = [m.code for m in models]
    objective = _objective(run, codes)
    subjective = _subjective(run, codes)
    overall = {(r["model"], r["language"]): r for r in subjective["ratings"] if r["dimension"] == "overall"}
    summary = {(r["model"], r["language"]): r for r in objective["summary"]}
    gaps = stats.delta_z(
        {lang: {c: summary[(c, lang)]["micro"] for c in codes if (c, lang) in summary} for lang in run.languages},
        {lang: {c: overall[(c, lang)]["mu"] for c in codes if (c, lang) in overall} for lang in run.languages},
    )
    by_model = {g.model: g for g in gaps.models}
    standing = []
    for lang in run.languages:
        for m in models:
            s, r, g = summary.get((m.code, lang)), overall.get((m.code, lang)), by_model.get(m.code)
            standing.append(
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
    opens = list(OpenResponse.objects.filter(run=run, ok=True).select_related("model").order_by("id"))
    style_rows = []
    for code in codes:
        for lang in run.languages:
            texts = [o.text for o in opens if o.model.code == code and o.language == lang]
            if texts:
                summary_style = style.style_summary(texts, lang)
                style_rows.append(
                    {
                        "model": code,
                        "language": lang,
                        "n": summary_style.n_responses,
                        "opener_rate": summary_style.share_with_opener,
                        "closer_rate": summary_style.share_with_closer,
                        "length": summary_style.length,
                        "list_density": summary_style.list_density,
                    }
                )
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
    cross_lingual = []
    if set(run.languages) >= {"en", "zh"}:
        scores: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for row in objective["accuracy"]:
            scores[row["dimension"]][row["language"]][row["model"]] = row["accuracy"]
        for row in subjective["ratings"]:
            if row["dimension"] != "overall":
                scores[row["dimension"]][row["language"]][row["model"]] = row["mu"]
        lingual = stats.cross_lingual_gaps(scores, language_a="en", language_b="zh", leave_dimension_out=True)
        for dim in lingual.dimensions:
            cross_lingual.append(
                {
                    "dimension": dim.dimension,
                    "mean_gap": dim.mean_gap,
                    "r": dim.correlation.r,
                    "p": dim.correlation.p_value,
                    "undefined_reason": dim.correlation.undefined_reason,
                }
            )
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
            "delta_z": [{"model": r["model"], "language": r["language"], "delta": r["delta"]} for r in standing],
            "style": style_rows,
            "style_correlations": correlations,
            "cross_lingual": cross_lingual,
        },
        "notes": notes,
        "files": report_files_names(run.languages),
    }


def report_digest(report: dict) -> str:
    """Return the SHA-256 of the report's canonical JSON."""
    return hashlib.sha256(canonical_json(report).encode("utf-8")).hexdigest()
