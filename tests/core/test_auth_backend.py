"""The request user's backend (core.backends.auth) reads the user, its roles and its permissions in one query, and
the permissions are exactly the ones Django's ModelBackend gives."""

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.backends.auth import RequestUserBackend


def _read(user) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        read = RequestUserBackend().get_user(user.pk)
        assert read is not None
        read.get_all_permissions()
        read.has_perm("items.change_item")
    return len(captured), read


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["expert", "lead_expert", "researcher", "admin"])
def test_a_users_permissions_come_with_it_in_one_query_and_match_the_model_backend(make_user, role):
    user = make_user(role, username=f"user-{role}")
    # A permission of its own, one its role also gives (counted once), and one nobody else has.
    user.user_permissions.add(
        Permission.objects.get(codename="view_item"), Permission.objects.get(codename="delete_session")
    )
    queries, read = _read(user)
    assert queries == 1
    expected = ModelBackend().get_all_permissions(type(user).objects.get(pk=user.pk))
    assert read.get_all_permissions() == expected
    assert "sessions.delete_session" in expected
    assert read.has_perm("items.change_item") == ("items.change_item" in expected)


@pytest.mark.django_db
def test_a_superuser_holds_every_permission_and_a_user_without_roles_none(make_user):
    root = make_user(None, username="root", is_superuser=True, is_staff=True)
    queries, read = _read(root)
    assert queries == 1
    assert read.get_all_permissions() == {
        f"{app}.{code}" for app, code in Permission.objects.values_list("content_type__app_label", "codename")
    }
    nobody = make_user(None, username="nobody")
    queries, read = _read(nobody)
    assert queries == 1
    assert read.get_all_permissions() == set()


@pytest.mark.django_db
def test_an_inactive_user_is_not_read(make_user):
    user = make_user("expert", username="gone", is_active=False)
    assert RequestUserBackend().get_user(user.pk) is None
