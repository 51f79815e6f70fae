"""Admin delete confirmations count what a deletion takes (core.deletion) in queries that do not grow with the data;
the release change form shows its pinned items' number instead of an inline row per item."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items.models import Benchmark
from annotation.releases import services as release_services
from annotation.releases.models import Release, ReleaseItem
from tests.factories.items import make_item


@pytest.fixture
def superuser(make_user):
    return make_user(None, username="root", is_staff=True, is_superuser=True)


def _queries(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content[:500]
    return len(captured), response.content.decode()


@pytest.mark.django_db
def test_a_users_delete_confirmation_counts_what_protects_them_in_flat_queries(client, taxonomy, superuser, lead):
    client.force_login(superuser)
    url = f"/admin/auth/user/{lead.pk}/delete/"
    make_item(user=lead)
    small, _ = _queries(client, url)
    for _n in range(12):
        make_item(user=lead)
    large, page = _queries(client, url)
    assert large == small
    assert large <= 10
    assert "and protect it" in page
    # Nothing deleted while protected: the POST is refused with the same page.
    response = client.post(url, {"post": "yes"})
    assert response.status_code == 200
    assert type(lead).objects.filter(pk=lead.pk).exists()


@pytest.mark.django_db
def test_a_cascade_is_counted_and_the_deletion_goes_through(client, taxonomy, superuser):
    client.force_login(superuser)
    for _n in range(3):
        make_item(status="accepted")
    release = release_services.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="0.1.0", title="draft", user=superuser
    )
    url = f"/admin/releases/release/{release.pk}/delete/"
    queries, page = _queries(client, url)
    assert queries <= 10
    assert "and protect it" not in page
    plural = str(ReleaseItem._meta.verbose_name_plural)
    assert f"{plural.capitalize()}: 3" in page or f"{plural}: 3" in page
    response = client.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not Release.objects.filter(pk=release.pk).exists()
    assert not ReleaseItem.objects.filter(release_id=release.pk).exists()


@pytest.mark.django_db
def test_the_release_change_form_counts_its_items_in_flat_queries(client, taxonomy, superuser):
    client.force_login(superuser)
    for _n in range(2):
        make_item(status="accepted")
    release = release_services.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="0.1.0", title="draft", user=superuser
    )
    url = f"/admin/releases/release/{release.pk}/change/"
    small, page = _queries(client, url)
    assert "2 items" in page
    assert f"/releases/facet/{release.version}/" in page
    for _n in range(10):
        make_item(status="accepted")
    release_services.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="0.2.0", title="bigger", user=superuser
    )
    bigger = Release.objects.get(version="0.2.0")
    large, page = _queries(client, f"/admin/releases/release/{bigger.pk}/change/")
    assert "12 items" in page
    assert large == small


@pytest.mark.django_db
def test_delete_selected_counts_the_chosen_rows_without_listing_them_all(client, taxonomy, superuser):
    client.force_login(superuser)
    make_item(status="accepted")
    benchmark = Benchmark.objects.get(slug="facet")
    releases = [
        release_services.release_create(benchmark=benchmark, version=f"0.{n}.0", title=f"draft {n}", user=superuser)
        for n in range(25)
    ]
    response = client.post(
        "/admin/releases/release/",
        {"action": "delete_selected", "_selected_action": [str(release.pk) for release in releases]},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "… and 5 more" in page
    response = client.post(
        "/admin/releases/release/",
        {"action": "delete_selected", "_selected_action": [str(r.pk) for r in releases], "post": "yes"},
    )
    assert response.status_code == 302
    assert not Release.objects.exists()


@pytest.mark.django_db
def test_counts_stop_at_a_cap_and_say_more_than(client, taxonomy, superuser, lead, monkeypatch):
    from core import deletion

    monkeypatch.setattr(deletion, "COUNTED_UP_TO", 3)
    client.force_login(superuser)
    for _n in range(5):
        make_item(user=lead)
    _queries_run, page = _queries(client, f"/admin/auth/user/{lead.pk}/delete/")
    assert "More than 3 items (items.Item) refer to it through" in page
    _queries_run, page = _queries(client, f"/admin/items/benchmark/{Benchmark.objects.get(slug='facet').pk}/delete/")
    assert "More than 3 items (items.Item)" in page
    monkeypatch.setattr(deletion, "COUNTED_UP_TO", 5)
    _queries_run, page = _queries(client, f"/admin/auth/user/{lead.pk}/delete/")
    assert "5 items (items.Item) refer to it through" in page
    assert "More than" not in page
