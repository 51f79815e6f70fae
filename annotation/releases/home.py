"""Releases' bulk action on the item list: add the checked items to a draft release (registered with ``core.home``
by ``annotation.releases.apps``, as the item list sits below releases in the layers). One query."""

from django.contrib.auth.models import AbstractBaseUser

from annotation.releases.models import Release
from core import home


@home.item_list_action("releases-add", template="releases/_bulk_add.html", position=10)
def _add_to_release(user: AbstractBaseUser) -> dict | None:
    if not user.has_perm("releases.manage_release"):
        return None
    drafts = list(Release.objects.filter(status=Release.Status.DRAFT).select_related("benchmark").order_by("-id")[:50])
    return {"drafts": drafts}
