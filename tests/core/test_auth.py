"""Signing in: the failure throttle (django-axes with core.throttle's policy) on the sign-in page, the admin sign-in
form and the token endpoint; the client address behind trusted proxies; password hashing."""

from datetime import timedelta

import pytest
from axes.handlers.proxy import AxesProxyHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.db.models import F
from django.http import HttpResponse
from django.test import Client, RequestFactory

from core.throttle import client_address, lockout_delay, lockout_response, normalised_username
from tests.factories import PASSWORD

THROTTLED = "Too many failed sign-in attempts. Try again in"
WRONG = "Please enter a correct username and password"


def sign_in(client, username: str, password: str, address: str = "10.0.0.1", **headers):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


def fail_sign_ins(client, username: str, times: int, address: str = "10.0.0.1", **headers):
    """Post ``times`` wrong passwords for ``username``; return the last answer."""
    for _attempt in range(times):
        response = sign_in(client, username, "wrong-password", address, **headers)
    return response


def text(response) -> str:
    """Return the answer's text with the non-breaking spaces of durations ("15 minutes") made plain."""
    return response.content.decode().replace("\xa0", " ")


def later(seconds: float) -> None:
    """Move every recorded failure ``seconds`` into the past, as if that much time had gone by."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=seconds))


def assert_waits(response, wait: str, seconds: int) -> None:
    """Check a 429 answer saying to wait ``wait``, with ``Retry-After`` about ``seconds`` (less the test's time)."""
    assert response.status_code == 429
    assert f"{THROTTLED} {wait}." in text(response)
    assert seconds - 5 <= int(response["Retry-After"]) <= seconds


LOCKOUT = settings.LOGIN_LOCKOUT_SECONDS  # 900: the first wait, "15 minutes"

# --- the sign-in page -------------------------------------------------------------------------------------


def test_failures_below_the_limit_say_only_that_the_password_is_wrong(client, expert):
    for _attempt in range(settings.LOGIN_MAX_FAILURES - 1):
        response = sign_in(client, expert.username, "wrong-password")

        assert response.status_code == 200
        assert WRONG in text(response)


def test_the_failure_that_reaches_the_limit_says_how_long_to_wait_on_the_form(client, expert):
    response = fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    assert_waits(response, "15 minutes", LOCKOUT)
    assert '<form method="post"' in text(response)
    assert 'role="alert"' in text(response)


def test_right_password_is_refused_after_max_failed_sign_ins(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = sign_in(client, expert.username, PASSWORD)

    assert_waits(response, "15 minutes", LOCKOUT)
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


def test_unicode_and_case_variants_of_a_username_share_one_counter(client, expert):
    # Full-width "ｅ" is "e" after NFKC, as the sign-in form (and Django's ModelBackend behind it) reads it.
    variants = ["ｅxpert1", "EXPERT1", "Expert1", "ｅｘｐｅｒｔ１", "expert1"]
    assert len(variants) == settings.LOGIN_MAX_FAILURES
    for variant in variants:
        response = sign_in(client, variant, "wrong-password")

    assert_waits(response, "15 minutes", LOCKOUT)
    assert_waits(sign_in(client, "expert1", PASSWORD), "15 minutes", LOCKOUT)
    assert set(AccessAttempt.objects.values_list("username", flat=True)) == {"expert1"}


def test_the_lock_lives_in_the_database_so_another_server_process_sees_it(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)
    assert AccessAttempt.objects.filter(username="expert1", ip_address="10.0.0.1").exists()

    # Another process: no cache, a handler built afresh, a new browser.
    cache.clear()
    AxesProxyHandler.get_implementation(force=True)
    response = sign_in(Client(), expert.username, PASSWORD)

    assert_waits(response, "15 minutes", LOCKOUT)


def test_the_right_password_signs_in_once_the_wait_is_over(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)
    later(LOCKOUT + 1)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_each_failure_after_a_wait_doubles_the_next_wait(client, expert):
    assert_waits(fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES), "15 minutes", LOCKOUT)
    later(LOCKOUT + 1)
    assert_waits(sign_in(client, expert.username, "wrong-password"), "30 minutes", 2 * LOCKOUT)
    later(2 * LOCKOUT + 1)
    assert_waits(sign_in(client, expert.username, "wrong-password"), "1 hour", 4 * LOCKOUT)
    later(4 * LOCKOUT + 1)

    assert_waits(sign_in(client, expert.username, "wrong-password"), "2 hours", 8 * LOCKOUT)


def test_attempts_during_a_wait_do_not_lengthen_it(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)
    later(LOCKOUT - 60)

    for _attempt in range(3):
        assert_waits(sign_in(client, expert.username, "wrong-password"), "1 minute", 60)


def test_failures_are_forgotten_after_a_quiet_period(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)
    later(LOCKOUT + 1)
    response = fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)
    assert response.status_code == 200
    assert WRONG in text(response)

    # After a wait, a quiet period as long again forgets the failures: the next one does not double the wait.
    fail_sign_ins(client, expert.username, 1)
    later(2 * LOCKOUT + 1)
    response = sign_in(client, expert.username, "wrong-password")

    assert response.status_code == 200
    assert WRONG in text(response)


def test_a_username_locked_at_one_address_still_signs_in_from_another(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES, address="10.0.0.1")

    response = sign_in(client, expert.username, PASSWORD, address="10.0.0.2")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_an_address_failing_for_many_usernames_is_locked_for_every_username(client, settings, researcher):
    settings.LOGIN_MAX_FAILURES_PER_ADDRESS = 8
    for name in ("ghost-a", "ghost-b", "ghost-c", "ghost-d"):
        response = fail_sign_ins(client, name, 2, address="10.0.0.1")

    assert_waits(response, "15 minutes", LOCKOUT)
    assert_waits(sign_in(client, researcher.username, PASSWORD, address="10.0.0.1"), "15 minutes", LOCKOUT)
    assert sign_in(client, researcher.username, PASSWORD, address="10.0.0.2").status_code == 302


def test_a_successful_sign_in_does_not_clear_other_usernames_failures_from_its_address(client, expert, researcher):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)
    assert sign_in(client, researcher.username, PASSWORD).status_code == 302
    client.logout()

    assert_waits(sign_in(client, expert.username, "wrong-password"), "15 minutes", LOCKOUT)


# --- the client address behind proxies --------------------------------------------------------------------


def test_x_forwarded_for_is_ignored_without_a_trusted_proxy(client, settings, expert):
    settings.TRUSTED_PROXY_COUNT = 0
    for attempt in range(settings.LOGIN_MAX_FAILURES):
        sign_in(client, expert.username, "wrong-password", HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt}")

    response = sign_in(client, expert.username, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1")

    assert_waits(response, "15 minutes", LOCKOUT)
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"10.0.0.1"}


def test_behind_one_trusted_proxy_the_client_is_the_address_the_proxy_added(client, settings, expert):
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.254"
    # The proxy appends the address it saw; anything before it came from the client and may be forged.
    for forged in ("203.0.113.1", "203.0.113.2, 203.0.113.3", "", "203.0.113.4", "198.51.100.8"):
        header = f"{forged}, 198.51.100.7" if forged else "198.51.100.7"
        sign_in(client, expert.username, "wrong-password", address=proxy, HTTP_X_FORWARDED_FOR=header)

    locked = sign_in(client, expert.username, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="9.9.9.9, 198.51.100.7")
    other = sign_in(Client(), expert.username, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="198.51.100.8")

    assert_waits(locked, "15 minutes", LOCKOUT)
    assert other.status_code == 302
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}


@pytest.mark.parametrize(
    ("count", "forwarded", "expected"),
    [
        (0, None, "10.0.0.1"),
        (0, "198.51.100.7", "10.0.0.1"),
        (1, "198.51.100.7", "198.51.100.7"),
        (1, "203.0.113.9, 198.51.100.7", "198.51.100.7"),
        (2, "198.51.100.7, 10.0.0.200", "198.51.100.7"),
        (2, "203.0.113.9,198.51.100.7 , 10.0.0.200", "198.51.100.7"),
        (1, "2001:db8::7", "2001:db8::7"),
        # A request that did not come through the proxies, or a header the proxy did not write: REMOTE_ADDR.
        (1, None, "10.0.0.1"),
        (2, "198.51.100.7", "10.0.0.1"),
        (1, "203.0.113.9, not-an-address", "10.0.0.1"),
    ],
)
def test_client_address(settings, count, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = count
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    request = RequestFactory().post("/login/", REMOTE_ADDR="10.0.0.1", **headers)

    assert client_address(request) == expected


# --- the policy: progressive waits ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failures", "seconds"),
    [(0, 0), (4, 0), (5, 900), (6, 1800), (7, 3600), (11, 57600), (12, 86400), (13, 86400), (10_000, 86400)],
)
def test_lockout_delay_starts_at_the_limit_doubles_and_is_capped(failures, seconds):
    delay = lockout_delay(failures, limit=5, first=timedelta(seconds=900), longest=timedelta(days=1))

    assert delay == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        ("expert1", "expert1"),
        ("ｅｘｐｅｒｔ１", "expert1"),
        ("EXPERT1", "expert1"),
        ("Straße", "strasse"),
        (None, None),
    ],
)
def test_normalised_username_is_nfkc_and_case_folded(username, expected):
    assert normalised_username(None, {"username": username}) == expected


@pytest.mark.parametrize(
    ("path", "content_type"), [("/api/elsewhere/", "application/json"), ("/elsewhere/", "text/html")]
)
def test_a_lockout_no_view_explained_answers_429_saying_how_long_to_wait(client, expert, path, content_type):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)
    request = RequestFactory().post(path, REMOTE_ADDR="10.0.0.1")

    response = lockout_response(request, HttpResponse("Please enter a correct username"), {"username": "Expert1"})

    assert_waits(response, "15 minutes", LOCKOUT)
    assert response["Content-Type"].startswith(content_type)
    assert "correct username" not in text(response)


# --- the admin sign-in form and the token endpoint --------------------------------------------------------


def test_admin_sign_in_form_says_how_long_to_wait(client, admin_user):
    fail_sign_ins(client, admin_user.username, settings.LOGIN_MAX_FAILURES)

    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": admin_user.username, "password": PASSWORD, "next": "/admin/"},
        REMOTE_ADDR="10.0.0.1",
    )

    assert_waits(response, "15 minutes", LOCKOUT)
    assert 'id="login-form"' in text(response)
    assert "_auth_user_id" not in client.session


def test_admin_sign_in_failures_count_towards_the_same_lock(client, admin_user):
    for _attempt in range(settings.LOGIN_MAX_FAILURES):
        response = client.post(
            "/admin/login/", {"username": admin_user.username, "password": "wrong-password"}, REMOTE_ADDR="10.0.0.1"
        )

    assert_waits(response, "15 minutes", LOCKOUT)
    assert_waits(sign_in(client, admin_user.username, PASSWORD), "15 minutes", LOCKOUT)


def test_token_endpoint_answers_429_json_saying_how_long_to_wait(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = client.post("/api/token/", {"username": expert.username, "password": PASSWORD}, REMOTE_ADDR="10.0.0.1")

    assert response.status_code == 429
    assert LOCKOUT - 5 <= int(response["Retry-After"]) <= LOCKOUT
    assert response.json() == {"detail": "Too many failed sign-in attempts. Try again in 15\xa0minutes."}


def test_token_endpoint_failures_count_with_normalised_usernames_towards_the_same_lock(client, expert):
    for name in ["ｅxpert1", "EXPERT1", "expert1", "Expert1"]:
        response = client.post("/api/token/", {"username": name, "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
        assert response.status_code == 400

    response = client.post(
        "/api/token/",
        {"username": "ｅxpert1", "password": "wrong"},
        content_type="application/json",
        REMOTE_ADDR="10.0.0.1",
    )

    assert response.status_code == 429
    assert_waits(sign_in(client, expert.username, PASSWORD), "15 minutes", LOCKOUT)


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
