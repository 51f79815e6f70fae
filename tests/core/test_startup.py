"""A web process freezes what start-up created, so that full garbage collections skip it (core.startup)."""

import gc
import sys

from core.startup import settle


def test_settle_imports_the_views_and_freezes_the_objects_of_start_up():
    try:
        settle()
        assert gc.get_freeze_count() > 10_000
        assert "annotation.items.views" in sys.modules and "evaluation.views" in sys.modules
    finally:
        gc.unfreeze()


def test_the_wsgi_and_asgi_entry_points_settle(monkeypatch):
    calls = []
    monkeypatch.setattr("core.startup.settle", lambda: calls.append(1))
    for name in ("config.wsgi", "config.asgi"):
        sys.modules.pop(name, None)
        __import__(name)
    assert calls == [1, 1]
