"""Pages every app shares: the admin site's permissions and link, and the interface-language switch."""

import re

import pytest
from django.test import Client
from django.utils import translation
from django.utils.translation import gettext

from core.models import UserProfile
from tests.factories import PASSWORD
from tests.permissions import ADMIN_LOGIN, assert_page_outcome, assert_written_only_if_allowed, expand, request_as

# --- the admin site ---------------------------------------------------------------------------------------

# fmt: off
PAGE_MATRIX = [
    # method  path        payload  anonymous    researcher   expert       lead_expert  admin
    ("GET",  "/admin/",   None,    ADMIN_LOGIN, 403,         403,         403,         200),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(PAGE_MATRIX))
def test_page_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    assert_page_outcome(response, path, expected)
    assert_written_only_if_allowed(method, expected, before)


def test_admin_is_staff_and_offered_the_admin_link(taxonomy, admin_user, login):
    body = login(admin_user).get("/").content.decode()

    assert admin_user.is_staff
    assert 'href="/admin/"' in body


# --- language switcher ------------------------------------------------------------------------------------


def html_lang(response) -> str:
    return re.search(r'<html lang="([^"]+)">', response.content.decode()).group(1)


def test_pages_render_in_english_by_default(taxonomy, expert, login):
    response = login(expert).get("/items/")

    assert html_lang(response) == "en"
    assert response["Content-Language"] == "en"


def test_switching_to_chinese_is_stored_on_the_profile_and_applied_to_pages(taxonomy, expert, login):
    client = login(expert)

    response = client.post("/language/", {"language": "zh-hans", "next": "/items/"})

    assert response.status_code == 302
    assert response["Location"] == "/items/"
    expert.refresh_from_db()
    assert expert.profile.language == "zh-hans"
    page = client.get("/items/")
    assert html_lang(page) == "zh-hans"
    assert page["Content-Language"] == "zh-hans"


def test_chosen_language_follows_the_user_into_a_new_session(taxonomy, expert, login):
    login(expert).post("/language/", {"language": "zh-hans", "next": "/"})
    other = Client()
    assert other.login(username=expert.username, password=PASSWORD)

    assert html_lang(other.get("/")) == "zh-hans"


def test_profile_language_wins_over_the_browser_language(taxonomy, expert, login):
    client = login(expert)
    client.post("/language/", {"language": "en", "next": "/"})

    response = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert html_lang(response) == "en"
    assert response["Content-Language"] == "en"


def test_unsupported_language_shows_an_error_and_changes_nothing(taxonomy, expert, login):
    client = login(expert)
    client.post("/language/", {"language": "zh-hans", "next": "/"})

    response = client.post("/language/", {"language": "fr", "next": "/items/"})

    assert response.status_code == 302
    assert response["Location"] == "/items/"
    expert.refresh_from_db()
    assert expert.profile.language == "zh-hans"
    page = client.get("/items/")
    with translation.override("zh-hans"):
        message = gettext("Unsupported language %(lang)s.") % {"lang": "fr"}
    assert f'<li class="msg-error">{message}</li>' in page.content.decode()
    assert html_lang(page) == "zh-hans"


@pytest.mark.parametrize("target", ["https://evil.example/phish", "//evil.example/phish", "http://testserver.evil/"])
def test_language_switch_does_not_follow_next_to_another_host(taxonomy, expert, login, target):
    response = login(expert).post("/language/", {"language": "zh-hans", "next": target})

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_language_switch_only_accepts_post(taxonomy, expert, login):
    response = login(expert).get("/language/?language=zh-hans")

    assert response.status_code == 405
    assert not UserProfile.objects.filter(user=expert).exists()


def test_the_sign_in_page_has_a_language_switch_that_works_before_signing_in(taxonomy, expert):
    client = Client()
    page = client.get("/login/").content.decode()
    assert 'id="language-select"' in page and "简体中文" in page

    response = client.post("/language/", {"language": "zh-hans", "next": "/login/"})

    assert response.status_code == 302 and response["Location"] == "/login/"
    chinese = client.get("/login/")
    assert html_lang(chinese) == "zh-hans" and "登录" in chinese.content.decode()
    # Signing in keeps the choice: it becomes the user's language.
    client.post("/login/", {"username": expert.username, "password": PASSWORD})
    expert.refresh_from_db()
    assert expert.profile.language == "zh-hans"
    assert html_lang(client.get("/items/")) == "zh-hans"


def test_an_unsupported_language_on_the_sign_in_page_is_refused_with_a_message(taxonomy):
    client = Client()
    response = client.post("/language/", {"language": "fr", "next": "/login/"}, follow=True)
    assert "Unsupported language fr." in response.content.decode()
    assert html_lang(client.get("/login/")) == "en"
