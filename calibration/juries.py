"""Judge juries: a panel of judges whose verdicts are combined (Verga et al. 2024, "Replacing Judges with Juries").

A jury is a ``Judge`` of kind ``jury`` with member judges and an aggregation rule. It asks no endpoint itself: in a
calibration run its members are asked (their calls cached and logged per member, as for any judge) and the jury's
verdict on each comparison is combined from theirs; in an evaluation run each member judges the same pairs and the
combined verdict is stored. Both combine by one definition, ``calibration.agreement.juries.jury_verdict``: each
member's two orders first, then the members. So a jury is evaluated, selected and used exactly like a single judge,
and costs the sum of its members.
"""

import json

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from calibration.agreement.juries import jury_order_scores, jury_verdict
from calibration.models import CalibrationRun, Judge, JudgeKind, JudgeVerdict, JuryAggregation

MIN_MEMBERS = 2


@transaction.atomic
def jury_create(*, name: str, members: list[Judge], aggregation: str) -> Judge:
    """Register a jury of single judges combined by ``aggregation`` (majority or mean)."""
    errors = []
    members = list({m.pk: m for m in members}.values())
    if len(members) < MIN_MEMBERS:
        errors.append(_("A jury needs at least two member judges."))
    nested = sorted(m.name for m in members if m.is_jury)
    if nested:
        errors.append(
            _("A jury's members are single judges; these are juries: %(names)s.") % {"names": ", ".join(nested)}
        )
    if aggregation not in JuryAggregation.values:
        errors.append(_("Unknown jury aggregation %(method)s.") % {"method": aggregation})
    if errors:
        raise ValidationError(errors)
    jury = Judge(name=name, kind=JudgeKind.JURY, aggregation=aggregation)
    jury.full_clean()
    jury.save()
    jury.members.set(members)
    return jury


def expand_candidates(judges: list[Judge]) -> tuple[list[Judge], list[Judge]]:
    """Split candidates into the single judges to ask (juries' members included) and the juries."""
    juries = [j for j in judges if j.is_jury]
    singles = {j.pk: j for j in judges if not j.is_jury}
    for jury in juries:
        for member in jury.members.select_related("endpoint", "prompt_set"):
            singles.setdefault(member.pk, member)
    return sorted(singles.values(), key=lambda j: j.name), juries


def jury_verdicts_store(*, run: CalibrationRun) -> int:
    """Store every jury's verdicts in a collected calibration run, combined from its members'; return how many.

    Verdicts already stored are kept, so a second call stores nothing.
    """
    created = []
    for jury in run.juries.prefetch_related("members"):
        members = sorted(jury.members.all(), key=lambda m: m.name)
        existing = set(run.verdicts.filter(judge=jury).values_list("comparison_id", flat=True))
        by_comparison: dict[int, dict[int, dict[str, int | None]]] = {}
        for judge_id, comparison_id, order, score in run.verdicts.filter(judge__in=members).values_list(
            "judge_id", "comparison_id", "order", "score"
        ):
            by_comparison.setdefault(comparison_id, {}).setdefault(judge_id, {})[order] = score
        for comparison_id, scores in sorted(by_comparison.items()):
            if comparison_id in existing:
                continue
            member_orders = [(scores.get(m.pk, {}).get("AB"), scores.get(m.pk, {}).get("BA")) for m in members]
            verdict = jury_verdict(member_orders, rule=run.combine_rule, method=jury.aggregation)
            raw_output = json.dumps({m.name: list(o) for m, o in zip(members, member_orders, strict=True)})
            for order, score in zip(("AB", "BA"), jury_order_scores(verdict, run.combine_rule), strict=True):
                created.append(
                    JudgeVerdict(
                        calibration_run=run,
                        judge=jury,
                        comparison_id=comparison_id,
                        order=order,
                        raw_output=raw_output,
                        parsed=score is not None,
                        score=score,
                        error="" if score is not None else _("no member gave a verdict in both orders"),
                    )
                )
    JudgeVerdict.objects.bulk_create(created)
    return len(created)


def jury_members(judge: Judge) -> list[Judge]:
    """Return the single judges that give a judge's verdicts: itself, or a jury's members by name."""
    if not judge.is_jury:
        return [judge]
    return list(judge.members.select_related("endpoint", "prompt_set").order_by("name"))
