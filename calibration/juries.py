"""Judge juries: a panel of judges whose verdicts are combined (Verga et al. 2024, "Replacing Judges with Juries").

A jury is a ``Judge`` of kind ``jury`` with member judges and an aggregation rule. It asks no endpoint itself: in a
calibration run its members are asked (their calls cached and logged per member, as for any judge) and the jury's
verdict on each comparison and order is combined from theirs; in an evaluation run each member judges the same
pairs and the combined verdict is stored. So a jury is evaluated, selected and used exactly like a single judge,
and costs the sum of its members.

Creating a jury and storing its verdicts are writes: ``calibration.services.jury_create`` and
``jury_verdicts_store``. This module combines verdicts and reads juries.
"""

import numpy as np

from calibration.models import CalibrationRun, Judge, JuryAggregation

MIN_MEMBERS = 2


def combine_verdicts(scores: list[int | None], method: str) -> int | None:
    """Combine the members' canonical scores (None: no parseable verdict) into the jury's; None when none parsed.

    ``majority``: the winner named by most members (a shared top count is a tie), with the median margin of the
    members who named it, rounded toward the tie. ``mean``: the mean signed score, rounded toward the tie.
    """
    given = [int(s) for s in scores if s is not None]
    if not given:
        return None
    if method == JuryAggregation.MEAN:
        mean = float(np.mean(given))
        return int(np.sign(mean) * np.floor(abs(mean)))
    if method != JuryAggregation.MAJORITY:
        raise ValueError(f"unknown jury aggregation {method!r}")
    signs = np.sign(given)
    outcomes, counts = np.unique(signs, return_counts=True)
    if (counts == counts.max()).sum() > 1:
        return 0
    winner = int(outcomes[counts.argmax()])
    if winner == 0:
        return 0
    margins = [abs(s) for s in given if np.sign(s) == winner]
    return winner * max(1, int(np.floor(np.median(margins))))


def expand_candidates(judges: list[Judge]) -> tuple[list[Judge], list[Judge]]:
    """Split candidates into the single judges to ask (juries' members included) and the juries."""
    juries = [j for j in judges if j.is_jury]
    singles = {j.pk: j for j in judges if not j.is_jury}
    for jury in juries:
        for member in jury.members.select_related("endpoint", "prompt_set"):
            singles.setdefault(member.pk, member)
    return sorted(singles.values(), key=lambda j: j.name), juries


def jury_members(judge: Judge) -> list[Judge]:
    """Return the single judges that give a judge's verdicts: itself, or a jury's members by name."""
    if not judge.is_jury:
        return [judge]
    return list(judge.members.select_related("endpoint", "prompt_set").order_by("name"))


def jury_vs_members_on_run(run: CalibrationRun, method: str = JuryAggregation.MAJORITY) -> dict:
    """Return the agreement with the expert majority of a jury of a run's judges (``method``) and of the best one.

    Used by ``scripts/bench_label_efficiency.py`` on the demo data: the jury is formed in memory from the run's
    stored verdicts, without creating anything.
    """
    from annotation.labelling.models import ExpertLabel
    from calibration import agreement as ag
    from calibration.report import agreement_indicators, combine_orders

    comparisons = list(run.comparison_set.comparisons.order_by("id").values_list("id", flat=True))
    index = {pk: i for i, pk in enumerate(comparisons)}
    labels = ExpertLabel.objects.filter(assignment__comparison__comparison_set=run.comparison_set)
    rows = list(labels.values_list("assignment__comparison_id", "assignment__expert_id", "score"))
    experts = sorted({e for _c, e, _s in rows})
    table = np.full((len(comparisons), len(experts)), np.nan)
    for comparison_id, expert_id, score in rows:
        table[index[comparison_id], experts.index(expert_id)] = score
    judges = [jr.judge for jr in run.judge_runs.select_related("judge").order_by("judge__name")]
    orders = {j.name: (np.full(len(comparisons), np.nan), np.full(len(comparisons), np.nan)) for j in judges}
    for name, comparison_id, order, score in run.verdicts.filter(parsed=True, judge__in=judges).values_list(
        "judge__name", "comparison_id", "order", "score"
    ):
        orders[name][0 if order == "AB" else 1][index[comparison_id]] = score
    single = {name: agreement_indicators(table, ab, ba, run.combine_rule) for name, (ab, ba) in orders.items()}
    majority = ag.majority_winner(table)
    jury = np.full(len(comparisons), np.nan)
    for i in range(len(comparisons)):
        combined = [combine_orders(run.combine_rule, ab[i], ba[i]) for ab, ba in orders.values()]
        verdict = combine_verdicts(combined, method)
        if verdict is not None and not np.isnan(majority[i]):
            jury[i] = float(np.sign(verdict) == majority[i])
    means = {name: float(np.nanmean(v)) for name, v in single.items() if np.isfinite(v).any()}
    best_name = max(means, key=means.get)
    return {
        "jury": float(np.nanmean(jury)),
        "best": means[best_name],
        "best_name": best_name,
        "n": int(np.isfinite(jury).sum()),
    }
