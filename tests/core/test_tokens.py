"""API tokens: they expire after API_TOKEN_TTL_DAYS and are revoked when the user's password changes."""

from datetime import timedelta

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from tests.factories import PASSWORD

NEW_PASSWORD = "another-pass-2027"


def api_get(token: Token | str):
    key = token if isinstance(token, str) else token.key
    return Client().get("/api/", HTTP_AUTHORIZATION=f"Token {key}")


def age(token: Token, days: float) -> None:
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=days))


def obtain(username: str, password: str):
    return Client().post("/api/token/", {"username": username, "password": password})


# --- expiry -----------------------------------------------------------------------------------------------


def test_a_fresh_token_is_accepted(expert):
    token = Token.objects.create(user=expert)

    assert api_get(token).status_code == 200


def test_an_expired_token_is_refused_with_401_saying_it_expired_and_how_to_get_a_new_one(expert, settings):
    token = Token.objects.create(user=expert)
    age(token, settings.API_TOKEN_TTL_DAYS + 0.01)

    response = api_get(token)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    detail = response.json()["detail"]
    assert detail.startswith("This API token expired on ")
    assert "/api/token/" in detail


def test_a_token_is_accepted_until_its_lifetime_is_over(expert, settings):
    token = Token.objects.create(user=expert)
    age(token, settings.API_TOKEN_TTL_DAYS - 0.01)

    assert api_get(token).status_code == 200


@pytest.mark.parametrize(("ttl_days", "age_days", "expected"), [(1, 2, 401), (3, 2, 200)])
def test_the_token_lifetime_is_configurable(expert, settings, ttl_days, age_days, expected):
    settings.API_TOKEN_TTL_DAYS = ttl_days
    token = Token.objects.create(user=expert)
    age(token, age_days)

    assert api_get(token).status_code == expected


def test_the_token_endpoint_returns_the_same_token_while_it_is_fresh(expert):
    first = obtain(expert.username, PASSWORD).json()["token"]

    assert obtain(expert.username, PASSWORD).json()["token"] == first


def test_the_token_endpoint_replaces_an_expired_token(expert, settings):
    old = Token.objects.create(user=expert)
    age(old, settings.API_TOKEN_TTL_DAYS + 1)

    response = obtain(expert.username, PASSWORD)

    assert response.status_code == 200
    new = response.json()["token"]
    assert new != old.key
    assert api_get(new).status_code == 200
    assert api_get(old.key).status_code == 401


# --- revocation when the password changes -----------------------------------------------------------------


def test_set_password_and_save_revokes_the_users_tokens(expert):
    token = Token.objects.create(user=expert)
    expert.set_password(NEW_PASSWORD)
    expert.save()

    response = api_get(token)

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_a_new_token_after_a_password_change_works(expert):
    old = obtain(expert.username, PASSWORD).json()["token"]
    expert.set_password(NEW_PASSWORD)
    expert.save()

    new = obtain(expert.username, NEW_PASSWORD).json()["token"]

    assert new != old
    assert api_get(new).status_code == 200
    assert api_get(old).status_code == 401


def test_writing_a_new_hash_directly_revokes_the_users_tokens(expert):
    token = Token.objects.create(user=expert)
    expert.password = make_password(NEW_PASSWORD)
    expert.save(update_fields=["password"])

    assert api_get(token).status_code == 401


def test_disabling_password_sign_in_revokes_the_users_tokens(expert):
    token = Token.objects.create(user=expert)
    expert.set_unusable_password()
    expert.save()

    assert api_get(token).status_code == 401


def test_changing_a_password_in_the_admin_revokes_the_users_tokens(client, make_user, expert):
    token = Token.objects.create(user=expert)
    client.force_login(make_user("admin", username="admin1"))

    response = client.post(
        f"/admin/auth/user/{expert.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )

    assert response.status_code == 302
    expert.refresh_from_db()
    assert expert.check_password(NEW_PASSWORD)
    assert not Token.objects.filter(pk=token.pk).exists()
    assert api_get(token).status_code == 401


def test_saving_a_user_without_changing_the_password_keeps_their_tokens(client, expert):
    token = Token.objects.create(user=expert)
    expert.email = "new@example.org"
    expert.save()
    client.post("/login/", {"username": expert.username, "password": PASSWORD})  # records the last sign-in

    assert api_get(token).status_code == 200


def test_another_users_password_change_keeps_this_users_tokens(expert, researcher):
    token = Token.objects.create(user=expert)
    researcher.set_password(NEW_PASSWORD)
    researcher.save()

    assert api_get(token).status_code == 200
