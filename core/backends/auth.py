"""Sign-in backend: Django's ModelBackend reading a request's user, profile, roles and permissions in 1 query.

Django's backend reads the user, then (as pages ask) the profile, the groups, the user's own permissions and the
groups' permissions: five queries before a page reads anything of its own. Here the user comes with its profile
(one join), the names of its groups (a subquery, read by ``core.roles.user_roles``) and the names of its
permissions, its own and its groups' (a second subquery, read by ``get_all_permissions``). A superuser, who has
every permission, still reads them in one query when asked.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import Exists, OuterRef, Q, StringAgg, Subquery, Value
from django.db.models.functions import Concat

# Between the group (or permission) names of a user read in one subquery (a character no name of the site holds).
GROUP_NAMES_SEPARATOR = "\x1f"


def group_names_of(user: AbstractBaseUser) -> set[str] | None:
    """Return the names of ``user``'s groups read with it by ``RequestUserBackend``; None if it was read otherwise."""
    if not hasattr(user, "group_names_read"):
        return None
    return _split(user.group_names_read)


def _split(joined: str | None) -> set[str]:
    return set(filter(None, (joined or "").split(GROUP_NAMES_SEPARATOR)))


def _permission_names() -> Subquery:
    """The ``app_label.codename`` of every permission of the outer user, its own and its groups', joined."""
    user_model = get_user_model()
    outer = OuterRef(OuterRef("pk"))
    own = user_model.user_permissions.through.objects.filter(user_id=outer).values("permission_id")
    granted = Permission.group_set.through.objects.filter(group__user=outer).values("permission_id")
    superuser = Exists(user_model._default_manager.filter(pk=outer, is_superuser=True))
    # Each permission once (INs, not joins: a permission held twice is not repeated), in one aggregate row; a
    # superuser holds every one (as ModelBackend says).
    perms = Permission.objects.filter(Q(pk__in=own) | Q(pk__in=granted) | Q(superuser)).order_by()
    perms = perms.annotate(grouped=Value(1))
    name = Concat("content_type__app_label", Value("."), "codename")
    names = perms.values("grouped").annotate(names=StringAgg(name, delimiter=Value(GROUP_NAMES_SEPARATOR)))
    return Subquery(names.values("names")[:1])


class RequestUserBackend(ModelBackend):
    """ModelBackend with the reads of a signed-in request's user joined into one query."""

    def get_user(self, user_id: object) -> AbstractBaseUser | None:
        user_model = get_user_model()
        memberships = user_model.groups.through.objects.filter(user_id=OuterRef("pk")).order_by().values("user_id")
        names = memberships.annotate(names=StringAgg("group__name", delimiter=Value(GROUP_NAMES_SEPARATOR)))
        user = (
            user_model._default_manager.select_related("profile")
            .annotate(group_names_read=Subquery(names.values("names")[:1]), permission_names_read=_permission_names())
            .filter(pk=user_id)
            .first()
        )
        if user is None or not self.user_can_authenticate(user):
            return None
        user._perm_cache = _split(user.permission_names_read)
        return user

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
