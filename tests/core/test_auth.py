"""Signing in: the failure throttle on the login page, the admin login and the token endpoint; password hashing."""

from django.conf import settings
from django.contrib.auth.hashers import make_password

from tests.factories import PASSWORD

# --- sign-in throttling -----------------------------------------------------------------------------------


def sign_in(client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def fail_sign_ins(client, username: str, times: int, address: str = "10.0.0.1") -> None:
    for _attempt in range(times):
        response = sign_in(client, username, "wrong-password", address)
        assert response.status_code == 200
        assert "Please enter a correct username and password" in response.content.decode()


def test_right_password_is_refused_after_max_failed_sign_ins(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 200
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_right_password_signs_in_after_fewer_failures_than_the_limit(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_successful_sign_in_resets_the_failure_count(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)
    assert sign_in(client, expert.username, PASSWORD).status_code == 302
    client.logout()
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_lockout_of_a_username_holds_from_another_address(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES, address="10.0.0.1")

    response = sign_in(client, expert.username, PASSWORD, address="10.0.0.2")

    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_lockout_of_an_address_holds_for_other_usernames(client, expert, researcher):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES, address="10.0.0.1")

    response = sign_in(client, researcher.username, PASSWORD, address="10.0.0.1")

    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_sign_in_page_refuses_a_locked_out_account(client, admin_user):
    fail_sign_ins(client, admin_user.username, settings.LOGIN_MAX_FAILURES)

    client.post(
        "/admin/login/?next=/admin/",
        {"username": admin_user.username, "password": PASSWORD, "next": "/admin/"},
        REMOTE_ADDR="10.0.0.1",
    )

    assert "_auth_user_id" not in client.session


def test_token_endpoint_refuses_a_locked_out_account(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = client.post("/api/token/", {"username": expert.username, "password": PASSWORD}, REMOTE_ADDR="10.0.0.1")

    assert "token" not in response.json()


# --- password hashing -------------------------------------------------------------------------------------


def test_production_settings_hash_new_passwords_with_argon2():
    from config import settings as production

    assert production.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"


def test_passwords_are_stored_hashed_with_argon2(expert):
    expert.refresh_from_db()

    assert expert.password.startswith("argon2$")
    assert PASSWORD not in expert.password
    assert expert.check_password(PASSWORD)


def test_older_pbkdf2_hash_is_upgraded_to_argon2_on_sign_in(client, expert, settings):
    from config import settings as production

    settings.PASSWORD_HASHERS = production.PASSWORD_HASHERS
    expert.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    expert.save(update_fields=["password"])

    assert sign_in(client, expert.username, PASSWORD).status_code == 302

    expert.refresh_from_db()
    assert expert.password.startswith("argon2$")
