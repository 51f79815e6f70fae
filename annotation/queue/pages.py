"""What the review and label pages share as pages: app.js fetches the next item's page ahead of time."""

from django.http import HttpRequest


def is_prefetch(request: HttpRequest) -> bool:
    """Whether the page is fetched ahead, not yet seen: by ``<link rel="prefetch">`` (``Sec-Purpose``) or app.js
    (``Purpose: prefetch``; a script cannot send ``Sec-Purpose``). Its clock must not start."""
    purpose = f"{request.headers.get('Sec-Purpose', '')} {request.headers.get('Purpose', '')}"
    return "prefetch" in purpose
