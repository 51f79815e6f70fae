"""Sign-in backend: Django's ModelBackend reading a request's user, profile, roles and permissions in 3 queries.

Django's backend reads the user, then (as pages ask) the profile, the groups, the user's own permissions and the
groups' permissions: five queries before a page reads anything of its own. Here the user comes with its profile
(one join) and its groups (one prefetch), and every permission in one query.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import Q


class RequestUserBackend(ModelBackend):
    """ModelBackend with the reads of a signed-in request's user joined and prefetched."""

    def get_user(self, user_id: object) -> AbstractBaseUser | None:
        user_model = get_user_model()
        user = (
            user_model._default_manager.select_related("profile")
            .prefetch_related("groups")
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
