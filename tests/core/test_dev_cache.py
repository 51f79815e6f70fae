"""Development (`make run`) shares the database cache between the web process and the worker, as production does."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings

from core.apps import create_cache_table_after_migrate

ROOT = Path(__file__).resolve().parents[2]


def _cache_backend(env: dict) -> str:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "import json; print(json.dumps(settings.CACHES['default']))"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "DATABASE_URL", "CACHE_BACKEND")}
    base["DJANGO_SETTINGS_MODULE"] = "config.settings"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["BACKEND"]


def test_make_run_settings_choose_the_database_cache():
    # scripts/run.sh sets DEBUG=1 on the local SQLite database: the worker's figures must reach the web process.
    assert _cache_backend({"DEBUG": "1"}) == "django.core.cache.backends.db.DatabaseCache"
    assert _cache_backend({}) == "django.core.cache.backends.db.DatabaseCache"
    assert _cache_backend({"DEBUG": "1", "CACHE_BACKEND": "locmem"}).endswith("LocMemCache")


def test_the_test_settings_keep_a_per_process_cache(settings):
    assert settings.CACHES["default"]["BACKEND"].endswith("LocMemCache")


@pytest.mark.django_db(transaction=True)
def test_every_migrate_creates_the_cache_table():
    table = "eistudio_cache_migrate_test"
    cache = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": table}
    with override_settings(CACHES={"default": cache}):
        create_cache_table_after_migrate(using="default")
        assert table in connection.introspection.table_names()
        create_cache_table_after_migrate(using="default")  # present already: nothing to do
    with connection.schema_editor() as editor:
        editor.execute(f"DROP TABLE {table}")
