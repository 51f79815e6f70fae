"""Sign-in backend: Django's ModelBackend reading a request's user, profile, roles and permissions in 2 queries.

Django's backend reads the user, then (as pages ask) the profile, the groups, the user's own permissions and the
groups' permissions: five queries before a page reads anything of its own. Here the user comes with its profile
(one join) and the names of its groups (a subquery, read by ``core.roles.user_roles``), and every permission in
one query.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import OuterRef, Q, StringAgg, Subquery, Value

# Between the group names of a user read in one subquery (a character no group name of the site holds).
GROUP_NAMES_SEPARATOR = "\x1f"


def group_names_of(user: AbstractBaseUser) -> set[str] | None:
    """Return the names of ``user``'s groups read with it by ``RequestUserBackend``; None if it was read otherwise."""
    if not hasattr(user, "group_names_read"):
        return None
    return set(filter(None, (user.group_names_read or "").split(GROUP_NAMES_SEPARATOR)))


class RequestUserBackend(ModelBackend):
    """ModelBackend with the reads of a signed-in request's user joined and prefetched."""

    def get_user(self, user_id: object) -> AbstractBaseUser | None:
        user_model = get_user_model()
        memberships = user_model.groups.through.objects.filter(user_id=OuterRef("pk")).order_by().values("user_id")
        names = memberships.annotate(names=StringAgg("group__name", delimiter=Value(GROUP_NAMES_SEPARATOR)))
        user = (
            user_model._default_manager.select_related("profile")
            .annotate(group_names_read=Subquery(names.values("names")[:1]))
            .filter(pk=user_id)
            .first()
        )
        return user if user is not None and self.user_can_authenticate(user) else None

    def get_all_permissions(self, user_obj: AbstractBaseUser, obj: object = None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            if user_obj.is_superuser:
                perms = Permission.objects.all()
            else:
                perms = Permission.objects.filter(Q(user=user_obj) | Q(group__user=user_obj))
            names = perms.order_by().values_list("content_type__app_label", "codename").distinct()
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in names}
        return user_obj._perm_cache
