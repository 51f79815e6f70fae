"""Search and filters on the lists a user scans: comparison sets, screening rounds, evaluation runs, releases."""

import pytest

from annotation.items.models import Benchmark
from annotation.releases import services as releases
from tests.factories import make_item, make_screening_round


@pytest.fixture
def two_releases(taxonomy, lead, admin_user):
    make_item(uid="flt-1", user=lead, status="accepted")
    facet = Benchmark.objects.get(slug="facet")
    spring = releases.release_create(benchmark=facet, version="1.0.0", title="Spring sample", user=admin_user)
    releases.release_freeze(release=spring, user=admin_user, override_reason="test")
    releases.release_create(benchmark=facet, version="1.1.0", title="Autumn draft", user=admin_user)


def rows(html: str) -> str:
    return html.split("<tbody>")[1].split("</tbody>")[0]


def test_releases_are_searched_by_title_and_filtered_by_status(two_releases, admin_user, login):
    client = login(admin_user)
    every = client.get("/releases/").content.decode()
    assert "Spring sample" in rows(every) and "Autumn draft" in rows(every) and 'id="list-count">2 shown' in every
    found = client.get("/releases/?q=spring").content.decode()
    assert "Spring sample" in rows(found) and "Autumn draft" not in rows(found) and 'id="clear-filters"' in found
    drafts = client.get("/releases/?status=draft&benchmark=facet").content.decode()
    assert "Autumn draft" in rows(drafts) and "Spring sample" not in rows(drafts)


def test_an_unknown_filter_value_is_named_and_the_list_left_unfiltered(two_releases, admin_user, login):
    page = login(admin_user).get("/releases/?status=melted").content.decode()
    assert 'role="alert"' in page and "melted" in page
    assert "Spring sample" in rows(page) and "Autumn draft" in rows(page)


def test_rounds_are_searched_by_title_and_filtered_by_status(taxonomy, lead, expert, login):
    make_item(uid="flt-r1", user=lead)
    make_screening_round(user=lead, reviewers=[expert], reviewers_per_item=1, title="Pilot round")
    client = login(lead)
    assert "Pilot round" in rows(client.get("/screening/?q=pilot").content.decode())
    assert "Pilot round" not in rows(client.get("/screening/?q=autumn").content.decode())
    assert "Pilot round" not in rows(client.get("/screening/?status=closed").content.decode())
    assert "Pilot round" in rows(client.get("/screening/?status=open&benchmark=facet").content.decode())


def test_the_filters_read_in_chinese(two_releases, admin_user, login):
    client = login(admin_user)
    client.post("/language/", {"language": "zh-hans", "next": "/"})
    page = client.get("/releases/").content.decode()
    assert "搜索" in page and "筛选" in page and "显示 2 项" in page
