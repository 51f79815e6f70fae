"""Judge juries: a panel of judges whose verdicts are combined (Verga et al. 2024, "Replacing Judges with Juries").

A jury is a ``Judge`` of kind ``jury`` with member judges and an aggregation rule. It asks no endpoint itself: in a
calibration run its members are asked (their calls cached and logged per member, as for any judge) and the jury's
verdict on each comparison is combined from theirs; in an evaluation run each member judges the same pairs and the
combined verdict is stored. Both combine by one definition, ``calibration.agreement.juries.jury_verdict``: each
member's two orders first, then the members. So a jury is evaluated, selected and used exactly like a single judge,
and costs the sum of its members.

Creating a jury and storing its verdicts are writes: ``calibration.services.jury_create`` and
``jury_verdicts_store``. This module reads juries.
"""

from calibration.models import Judge

MIN_MEMBERS = 2


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
