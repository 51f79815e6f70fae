"""Labelling's part of the home page ("My work"): the comparison sets assigned to the user, with progress.

Registered with ``core.home`` (``annotation.labelling.apps``).
"""

from django.contrib.auth.models import AbstractBaseUser

from annotation.labelling.models import ExpertProgress
from annotation.queue.selectors import progress_figures
from core import home


def labelling_sets(*, user: AbstractBaseUser) -> list[dict]:
    """Return the comparison sets assigned to the user (labelled, assigned, left); one query."""
    rows = (
        ExpertProgress.objects.filter(expert=user, assigned__gt=0)
        .values("comparison_set_id", "comparison_set__name", "labelled", "assigned")
        .order_by("comparison_set__name")
    )
    return [
        {
            "set_id": row["comparison_set_id"],
            "name": row["comparison_set__name"],
            **progress_figures(done=row["labelled"], total=row["assigned"]),
        }
        for row in rows
    ]


@home.panel("labelling", template="labelling/_home_panel.html", position=20)
def labelling_panel(user: AbstractBaseUser) -> dict | None:
    """The user's labelling sets, for those who label."""
    if not user.has_perm("labelling.label_comparisons"):
        return None
    return {"labelling_sets": labelling_sets(user=user)}
