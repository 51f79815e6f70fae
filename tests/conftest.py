import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.test import Client
from django.utils import translation

from annotation.items import services
from annotation.items.models import Benchmark
from tests import pg_flush
from tests.factories import PASSWORD, UserFactory
from tests.simulator import (  # noqa: F401  (fixtures)
    fast_retries,
    make_endpoint,
    simulator,
    simulator_idle,
    simulator_server,
)
from tests.workers import workers  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT.parent / "shared" / "data" / "external"

pg_flush.install()  # transactional tests end with DELETE, not TRUNCATE, on PostgreSQL (see tests/pg_flush.py)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load the taxonomy once per test database; tests roll back on top of it."""
    with django_db_blocker.unblock():
        services.taxonomy_load_fixture("taxonomy.json")
        services.taxonomy_load_fixture("emobench_taxonomy.json")


@pytest.fixture(autouse=True)
def _fresh_process_state():
    """Give every test an empty cache (the API's request throttles count in it) and the default language.

    Failed sign-ins are counted by django-axes in the database, so the test's rollback forgets them.
    """
    cache.clear()
    yield
    cache.clear()
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _client_login_passes_a_request(monkeypatch):
    """Make ``Client.login`` pass a request to ``authenticate``, as every sign-in path of the site does.

    django-axes refuses an ``authenticate`` call without a request (it could not be throttled).
    """
    login = Client.login

    def login_with_a_request(self, **credentials):
        credentials.setdefault("request", HttpRequest())
        return login(self, **credentials)

    monkeypatch.setattr(Client, "login", login_with_a_request)


@pytest.fixture
def taxonomy(db: None) -> None:
    """Load the FACET/EiCAP and EmoBench taxonomies (skipped when already present)."""
    if not Benchmark.objects.filter(slug="facet").exists():
        services.taxonomy_load_fixture("taxonomy.json")
        services.taxonomy_load_fixture("emobench_taxonomy.json")


@pytest.fixture
def make_user(db: None):
    def make(role: str | None = None, **kwargs: object):
        return UserFactory(role=role, **kwargs)

    return make


@pytest.fixture
def expert(make_user):
    return make_user("expert", username="expert1")


@pytest.fixture
def lead(make_user):
    return make_user("lead_expert", username="lead1")


@pytest.fixture
def researcher(make_user):
    return make_user("researcher", username="researcher1")


@pytest.fixture
def admin_user(make_user):
    return make_user("admin", username="admin1")


@pytest.fixture
def login(client):
    def do(user) -> object:
        assert client.login(username=user.username, password=PASSWORD)
        return client

    return do


@pytest.fixture
def external_data() -> Path:
    """Path of the shared real datasets; skip when they are not on this machine."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"shared external data not found at {EXTERNAL}")
    return EXTERNAL


def chromium_path() -> str | None:
    """Return the Chromium binary for browser tests, if installed."""
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None
