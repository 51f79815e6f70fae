"""What a web process does once Django is set up, before its first request (``config.wsgi``, ``config.asgi``).

Every view module is imported (through the URL configuration), then the objects alive at that moment (about
290,000: Django, the apps, NumPy, SciPy) are moved out of the garbage collector's reach with ``gc.freeze()``. They
live as long as the process anyway; left in, each full collection walked all of them, and a request that triggered
one took about 200 ms longer (measured with ``scripts/bench_pages.py``, docs/performance.md). Frozen, a full
collection walks only what requests created.
"""

import gc

from django.urls import get_resolver


def settle() -> None:
    """Import every view module, collect once, and freeze the survivors: later collections skip them."""
    get_resolver().url_patterns  # noqa: B018 (evaluating the property imports every URLconf and view module)
    gc.collect()
    gc.freeze()
