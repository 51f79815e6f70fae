"""The home page ("My work") and the item page gather parts from every app, through this registry.

The pages live low in the layers (core, items); screening, labelling, calibration and evaluation sit above them.
So each app registers its parts here when it is ready (its ``home.py``, imported by its ``apps.py``), and the
pages ask the registry: nothing below an app imports it. Each part costs a fixed number of queries.
"""

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser

Panel = Callable[[AbstractBaseUser], dict]
ItemSection = Callable[[object], dict]
_PANELS: list[Panel] = []
_ITEM_SECTIONS: list[ItemSection] = []


def panel(func: Panel) -> Panel:
    """Register ``func(user) -> context`` as a part of the home page."""
    _PANELS.append(func)
    return func


def item_section(func: ItemSection) -> ItemSection:
    """Register ``func(item) -> context`` as a part of the item page and its history."""
    _ITEM_SECTIONS.append(func)
    return func


def home_context(*, user: AbstractBaseUser) -> dict:
    """Return the context of every registered home-page part for ``user``."""
    context: dict = {}
    for func in _PANELS:
        context.update(func(user))
    return context


def item_context(*, item: object) -> dict:
    """Return the context of every registered item-page part for ``item``."""
    context: dict = {}
    for func in _ITEM_SECTIONS:
        context.update(func(item))
    return context
