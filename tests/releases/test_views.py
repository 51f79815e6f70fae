"""Release pages, API and admin: a frozen release refuses every change; the checklist speaks the interface
language."""

import pytest
from django.utils import translation

from annotation.releases.models import Release
from annotation.releases.views import checklist_display

pytestmark = pytest.mark.django_db


def test_frozen_release_refuses_ui_api_and_admin(frozen, admin_user, login):
    client = login(admin_user)
    base = f"/releases/facet/{frozen.version}/"
    response = client.post(base + "edit/", {"title": "changed"}, follow=True)
    assert "is frozen and cannot change" in response.content.decode()
    response = client.post(base + "freeze/", {"confirm": "on", "override_reason": "x"}, follow=True)
    assert "is frozen and cannot change" in response.content.decode()
    response = client.post(f"/api/releases/{frozen.pk}/items/", {"remove": ["rel-0"]}, content_type="application/json")
    assert response.status_code == 400 and "frozen" in response.content.decode()
    response = client.post(f"/api/releases/{frozen.pk}/freeze/", {}, content_type="application/json")
    assert response.status_code == 400
    response = client.post(f"/admin/releases/release/{frozen.pk}/change/", {"title": "admin edit"})
    assert response.status_code == 403
    response = client.post(f"/admin/releases/release/{frozen.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert Release.objects.get(pk=frozen.pk).title == "FACET 1.0.0" and frozen.entries.count() == 4


def test_checklist_is_worded_in_the_interface_language(frozen, admin_user, login):
    checks = checklist_display(frozen.validation["checks"])
    assert checks[0]["summary"] == "4 items"
    with translation.override("zh-hans"):
        zh = checklist_display(frozen.validation["checks"])
    assert zh[0]["summary"] == "4 道题目" and zh[1]["summary"] == "4 道题目中 4 道已通过"
