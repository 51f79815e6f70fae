"""Orders in which a comparison set serves its comparisons, other than the stratified random order of its queue.

An app above labelling registers a server for an order name (calibration registers "active":
``calibration.allocation``); ``annotation.labelling.selectors.label_next`` hands a set in that order to it. Labelling
never
imports the app that serves.
"""

from collections.abc import Callable

Server = Callable[..., object]
_SERVERS: dict[str, Server] = {}


def register(order: str) -> Callable[[Server], Server]:
    """Register the decorated function as the server of ``order``: ``(*, comparison_set, expert, after)``."""

    def decorate(func: Server) -> Server:
        _SERVERS[order] = func
        return func

    return decorate


def server(order: str) -> Server | None:
    """Return the server registered for ``order``, or None (the set is then served in queue order)."""
    return _SERVERS.get(order)
