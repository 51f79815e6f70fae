"""Accounts in the admin site: only a superuser grants superuser status or individual permissions, or edits a
superuser's account; an admin (staff with the admin role) assigns roles."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

from tests.factories import PASSWORD

REFUSED = "Only a superuser may grant superuser status or individual permissions"
SUPERUSER_ACCOUNT = "Only a superuser may change a superuser"
NEW_PASSWORD = "another-pass-2027"


@pytest.fixture
def superuser(make_user):
    return make_user(None, username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def as_admin(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def as_superuser(client, superuser):
    client.force_login(superuser)
    return client


def change_form(user, **changes: object) -> dict:
    """Return what the admin's change form posts for ``user`` unchanged, with ``changes`` on top."""
    data = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on",
        "groups": [str(pk) for pk in user.groups.values_list("pk", flat=True)],
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        "last_login_0": "",
        "last_login_1": "",
    }
    if user.is_staff:
        data["is_staff"] = "on"
    data.update(changes)
    return data


def role(name: str) -> str:
    return str(Group.objects.get(name=name).pk)


def a_permission() -> str:
    return str(Permission.objects.get(content_type__app_label="auth", codename="delete_user").pk)


def text(response) -> str:
    return response.content.decode().replace("\u2019", "'")


# --- what a non-superuser admin sees and may post ---------------------------------------------------------


def test_a_non_superuser_admin_sees_superuser_status_and_permissions_read_only(as_admin, expert):
    html = as_admin.get(f"/admin/auth/user/{expert.pk}/change/").content.decode()

    assert 'name="groups"' in html
    assert 'name="is_superuser"' not in html
    assert 'name="user_permissions"' not in html


def test_a_non_superuser_admin_may_still_assign_roles(as_admin, expert):
    response = as_admin.post(f"/admin/auth/user/{expert.pk}/change/", change_form(expert, groups=[role("lead_expert")]))

    assert response.status_code == 302
    assert list(expert.groups.values_list("name", flat=True)) == ["lead_expert"]


def test_a_forged_post_cannot_make_another_user_a_superuser(as_admin, expert):
    response = as_admin.post(f"/admin/auth/user/{expert.pk}/change/", change_form(expert, is_superuser="on"))

    assert response.status_code == 403
    assert REFUSED in text(response)
    expert.refresh_from_db()
    assert not expert.is_superuser


def test_a_forged_post_cannot_make_the_admin_itself_a_superuser(as_admin, admin_user):
    response = as_admin.post(f"/admin/auth/user/{admin_user.pk}/change/", change_form(admin_user, is_superuser="on"))

    assert response.status_code == 403
    admin_user.refresh_from_db()
    assert not admin_user.is_superuser


def test_a_forged_post_cannot_grant_individual_permissions(as_admin, admin_user, expert):
    for target in (expert, admin_user):
        response = as_admin.post(
            f"/admin/auth/user/{target.pk}/change/", change_form(target, user_permissions=[a_permission()])
        )

        assert response.status_code == 403
        assert REFUSED in text(response)
        assert not target.user_permissions.exists()


def test_a_forged_add_cannot_create_a_superuser(as_admin):
    response = as_admin.post(
        "/admin/auth/user/add/",
        {
            "username": "sneaky",
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "is_superuser": "on",
            "user_permissions": [a_permission()],
        },
    )

    assert response.status_code == 403
    assert not get_user_model().objects.filter(username="sneaky").exists()


def test_a_non_superuser_admin_may_add_an_account(as_admin):
    response = as_admin.post(
        "/admin/auth/user/add/",
        {"username": "newcomer", "usable_password": "true", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    user = get_user_model().objects.get(username="newcomer")
    assert not user.is_superuser
    assert user.check_password(NEW_PASSWORD)


# --- a superuser's account --------------------------------------------------------------------------------


def test_a_non_superuser_admin_sees_a_superusers_account_read_only(as_admin, superuser):
    response = as_admin.get(f"/admin/auth/user/{superuser.pk}/change/")

    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="username"' not in html
    assert 'name="groups"' not in html


def test_a_non_superuser_admin_cannot_change_a_superusers_account(as_admin, superuser):
    response = as_admin.post(
        f"/admin/auth/user/{superuser.pk}/change/", change_form(superuser, groups=[role("expert")], is_active="")
    )

    assert response.status_code == 403
    assert SUPERUSER_ACCOUNT in text(response)
    superuser.refresh_from_db()
    assert superuser.is_active
    assert not superuser.groups.exists()


def test_a_non_superuser_admin_cannot_change_a_superusers_password(as_admin, superuser):
    assert as_admin.get(f"/admin/auth/user/{superuser.pk}/password/").status_code == 403

    response = as_admin.post(
        f"/admin/auth/user/{superuser.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )

    assert response.status_code == 403
    assert SUPERUSER_ACCOUNT in text(response)
    superuser.refresh_from_db()
    assert superuser.check_password(PASSWORD)


# --- a superuser may ---------------------------------------------------------------------------------------


def test_a_superuser_may_grant_superuser_status_and_permissions(as_superuser, expert):
    response = as_superuser.post(
        f"/admin/auth/user/{expert.pk}/change/",
        change_form(expert, is_superuser="on", user_permissions=[a_permission()]),
    )

    assert response.status_code == 302
    expert.refresh_from_db()
    assert expert.is_superuser
    assert expert.user_permissions.count() == 1


def test_a_superuser_may_change_another_superusers_password(as_superuser, make_user):
    other = make_user(None, username="root2", is_staff=True, is_superuser=True)

    response = as_superuser.post(
        f"/admin/auth/user/{other.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )

    assert response.status_code == 302
    other.refresh_from_db()
    assert other.check_password(NEW_PASSWORD)
