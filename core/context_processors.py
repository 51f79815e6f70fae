from django.conf import settings
from django.http import HttpRequest

from core.roles import ROLE_LABELS, user_roles


def roles(request: HttpRequest) -> dict:
    """Expose the signed-in user's role labels to every template."""
    names = user_roles(getattr(request, "user", None))
    return {"user_role_labels": [ROLE_LABELS[n] for n in names]}


def currency(request: HttpRequest) -> dict:
    """Expose the currency of endpoint prices (``PRICE_CURRENCY``), shown next to every cost and budget."""
    return {"currency": settings.PRICE_CURRENCY}
