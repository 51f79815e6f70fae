"""Collectors hand a finished run's results to the app that started it, registered by the run's purpose.

This is the one way results leave the llm app: when a run reaches a finished status (done, failed or cancelled),
``llm.lifecycle`` calls the collector registered for ``run.purpose`` once, after the status change commits. A
collector reads ``RunItem.ref`` (the structured reference its app gave each prompt) and stores what the app needs.
Apps register collectors with ``@register("purpose")`` in a module imported from ``AppConfig.ready``; a run whose
purpose has no collector (runs started by hand from the LLM pages) is simply marked collected.
"""

from collections.abc import Callable

from llm.models import Run

Collector = Callable[[Run], None]

_REGISTRY: dict[str, Collector] = {}


def register(purpose: str) -> Callable[[Collector], Collector]:
    """Register the collector of runs started for ``purpose`` (a decorator); a purpose has at most one."""
    if not purpose:
        raise ValueError("a collector needs a purpose")

    def decorator(function: Collector) -> Collector:
        if purpose in _REGISTRY and _REGISTRY[purpose] is not function:
            raise ValueError(f"a collector for purpose {purpose!r} is already registered")
        _REGISTRY[purpose] = function
        return function

    return decorator


def get(purpose: str) -> Collector | None:
    """Return the collector registered for ``purpose``, if any."""
    return _REGISTRY.get(purpose)


def purposes() -> list[str]:
    """Return the purposes that have a collector, sorted."""
    return sorted(_REGISTRY)
