"""The items app's part of the home page ("My work"): recent status decisions on the user's items.

Registered with ``core.home`` (``annotation.items.apps``).
"""

from django.contrib.auth.models import AbstractBaseUser

from annotation.items.models import StatusDecision
from core import home

DECISIONS_LIMIT = 8


def recent_decisions(*, user: AbstractBaseUser) -> list:
    """Return the latest status decisions (other than creation) on items the user created; one query."""
    return list(
        StatusDecision.objects.filter(item__created_by=user)
        .exclude(source=StatusDecision.Source.CREATED)
        .select_related("item", "decided_by")
        .order_by("-id")[:DECISIONS_LIMIT]
    )


@home.panel("items", template="items/_home_panel.html", position=30)
def items_panel(user: AbstractBaseUser) -> dict | None:
    """The latest decisions on the items the user created, for those who author items."""
    if not user.has_perm("items.add_item"):
        return None
    return {"recent_decisions": recent_decisions(user=user)}
