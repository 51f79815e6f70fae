"""The subjective tables of the evaluation report, from the judge's verdicts (pure: plain records in, rows out)."""

from collections import defaultdict

from calibration.report import combine_orders
from evaluation import ratings, stats
from evaluation.report.facts import ResponseFacts, RunFacts, VerdictFacts

# Resamples of the Bradley-Terry bootstrap in reports (each refits the strengths: about 1 ms with 10 models).
BRADLEY_TERRY_RESAMPLES = 1000

Combined = dict[tuple[str, str], list[tuple[str, str, float]]]


def _combined(run: RunFacts, verdicts: list[VerdictFacts]) -> Combined:
    """Combine both orders of each pair by the run's rule, per (dimension, language) and overall per language."""
    by_pair: dict[tuple, dict[str, int | None]] = defaultdict(dict)
    for v in verdicts:
        by_pair[(v.item, v.dimension, v.language, v.model_a, v.model_b)][v.order] = v.score if v.parsed else None
    combined: Combined = defaultdict(list)
    for (_uid, dim, lang, a, b), orders in sorted(by_pair.items()):
        score = combine_orders(run.combine_rule, orders.get("AB"), orders.get("BA"))
        if score is None:
            continue
        combined[(dim, lang)].append((a, b, float(score)))
        combined[("overall", lang)].append((a, b, float(score)))
    return combined


def _rating_rows(run: RunFacts, codes: list[str], combined: Combined) -> list[dict]:
    rows = []
    for (dim, lang), verdicts in sorted(combined.items()):
        result = ratings.rate_verdicts(verdicts, models=codes, margin_mapping=run.margin_mapping, seed=run.seed)
        rows += [
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
            for r in result.ratings
        ]
    return rows


def _win_rate_rows(language: str, matrix: stats.WinRateMatrix) -> list[dict]:
    """Return each pair of models once (a before b), skipping pairs never judged."""
    rows = []
    for i, a in enumerate(matrix.models):
        for j, b in enumerate(matrix.models):
            cell = matrix.cells[i][j]
            if cell is None or a > b:
                continue
            rows.append(
                {
                    "language": language,
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
    return rows


def _bradley_terry_rows(language: str, result: ratings.BradleyTerryRatings) -> list[dict]:
    return [
        {
            "model": r.model,
            "language": language,
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
        for r in result.ratings
    ]


def _bradley_terry(run: RunFacts, codes: list[str], combined: Combined) -> tuple[list[dict], list[dict]]:
    """Rate every language's combined verdicts by Bradley-Terry, with bootstrap intervals over verdicts."""
    rows, summaries = [], []
    for lang in run.languages:
        verdicts = combined.get(("overall", lang))
        if not verdicts:
            continue
        result = ratings.bradley_terry(verdicts, models=codes, seed=run.seed, n_resamples=BRADLEY_TERRY_RESAMPLES)
        rows += _bradley_terry_rows(lang, result)
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


def _pairing_summary(
    run: RunFacts, verdicts: list[VerdictFacts], responses: list[ResponseFacts], bradley_terry: list[dict]
) -> dict | None:
    """For a run judged in rounds (adaptive or auto): its rule, the judge calls made, those a round-robin on the
    same strata needs, and rank stability.

    A stratum is an item and language the judge saw; round-robin judges every pair of the models with a usable
    response there, in both orders.
    """
    if not run.adaptive:
        return None
    strata = {(v.item_id, v.language) for v in verdicts}
    responding: dict[tuple, int] = defaultdict(int)
    for response in responses:
        responding[(response.item_id, response.language)] += 1
    round_robin_calls = sum(responding[s] * (responding[s] - 1) for s in strata)
    return {
        "rule": run.pairing,
        "judge_calls": len(verdicts),
        "round_robin_calls": round_robin_calls,
        "calls_saved": round_robin_calls - len(verdicts),
        "share_of_round_robin": len(verdicts) / round_robin_calls if round_robin_calls else None,
        "rank_stability": {row["language"]: row["rank_stability"] for row in bradley_terry},
        **_stopped_early(verdicts, len(strata), round_robin_calls),
    }


def _stopped_early(verdicts: list[VerdictFacts], n_strata: int, round_robin_calls: int) -> dict:
    """The baseline a run judged in rounds is measured against (``scripts/bench_pairing.py --sweep``): round-robin
    stopped early at the same cost judges every pair of models on the same number of strata, about
    ``judge calls / (round-robin calls per stratum)`` of them; beside it, how many strata the run judged each pair of
    models on (fewest and most), so a reader sees where the rounds went instead of an even spread."""
    per_pair: dict[tuple[str, str], set[tuple]] = defaultdict(set)
    for v in verdicts:
        per_pair[tuple(sorted((v.model_a, v.model_b)))].add((v.item_id, v.language))
    counts = [len(judged) for judged in per_pair.values()]
    per_stratum = round_robin_calls / n_strata if n_strata else 0
    return {
        "strata": n_strata,
        "stopped_early_strata": int(len(verdicts) // per_stratum) if per_stratum else 0,
        "pairs": len(per_pair),
        "fewest_strata_per_pair": min(counts, default=0),
        "most_strata_per_pair": max(counts, default=0),
    }


def subjective_tables(
    run: RunFacts, codes: list[str], verdicts: list[VerdictFacts], responses: list[ResponseFacts]
) -> dict:
    """Build the ratings, Bradley-Terry and win-rate tables and the judge's counts."""
    combined = _combined(run, verdicts)
    rating_rows = _rating_rows(run, codes, combined)
    win_rates = []
    for lang in run.languages:
        matrix = stats.win_rate_matrix(combined.get(("overall", lang), []), models=codes)
        win_rates += _win_rate_rows(lang, matrix)
    bradley_terry, bradley_terry_summary = _bradley_terry(run, codes, combined)
    return {
        "ratings": rating_rows,
        "bradley_terry": bradley_terry,
        "bradley_terry_summary": bradley_terry_summary,
        "pairing_summary": _pairing_summary(run, verdicts, responses, bradley_terry_summary),
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
