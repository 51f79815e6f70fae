"""Settings for the test suite: the production settings with a throwaway key and no HTTPS redirect."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-use-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")

from config.settings import *  # noqa: E402,F403

STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False

# Argon2 as in production, with cheap parameters so that creating users in tests is fast.
PASSWORD_HASHERS = ["config.test_hashers.FastArgon2PasswordHasher"]

# Worker processes started by the llm tests (manage.py db_worker) must reach the test database, so on SQLite it
# lives in a file (one per test session) rather than in memory.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    import tempfile
    from pathlib import Path

    DATABASES["default"].setdefault("TEST", {})["NAME"] = str(  # noqa: F405
        Path(tempfile.gettempdir()) / f"eistudio-test-{os.getpid()}.sqlite3"
    )
    # A file costs an fsync per commit; the test database is thrown away, so skip that.
    # WAL as configured in config.settings, then synchronous=OFF.
    DATABASES["default"]["OPTIONS"]["init_command"] += "; PRAGMA synchronous=OFF"  # noqa: F405

# One process runs the tests: a per-process cache is enough and needs no table (tests/core/test_serve.py checks
# the database cache production uses).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
