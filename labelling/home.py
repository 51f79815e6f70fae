"""Labelling's part of the home page ("My work"): the comparison sets assigned to the user, with progress.

Registered with ``core.home`` (``labelling.apps``).
"""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count

from core import home
from labelling.models import LabelAssignment


def labelling_sets(*, user: AbstractBaseUser) -> list[dict]:
    """Return the comparison sets assigned to the user with (labelled, assigned, left); one grouped query."""
    rows = (
        LabelAssignment.objects.filter(expert=user)
        .values("comparison__comparison_set_id", "comparison__comparison_set__name")
        .annotate(done=Count("label"), total=Count("id"))
        .order_by("comparison__comparison_set__name")
    )
    return [
        {
            "set_id": row["comparison__comparison_set_id"],
            "name": row["comparison__comparison_set__name"],
            "done": row["done"],
            "total": row["total"],
            "left": row["total"] - row["done"],
            "percent": round(100 * row["done"] / row["total"]) if row["total"] else 0,
        }
        for row in rows
    ]


@home.panel
def labelling_panel(user: AbstractBaseUser) -> dict:
    """The user's labelling sets, for those who label."""
    if not user.has_perm("labelling.label_comparisons"):
        return {}
    return {"labelling_sets": labelling_sets(user=user)}
