"""The home page ("My work") and the item page gather parts from every app, through this registry.

The pages live low in the layers (core, items); screening, labelling, calibration and evaluation sit above them.
So each app registers its parts here when it is ready (its ``home.py``, imported by its ``apps.py``), and the
pages ask the registry: nothing below an app imports it. Each part costs a fixed number of queries.

Every part has a name, and a second part under a name already taken raises ``AlreadyRegistered``, as Django's admin
site does for a model registered twice. A home-page panel renders its own template (``templates/<app>/``, linking
only to its own app and the apps below it) from its own context, so panels cannot overwrite each other's values;
item-page sections share the item page's context, and two sections giving the same key raise ``KeyCollision``.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured

PanelContext = Callable[[AbstractBaseUser], dict | None]
ItemSection = Callable[[object], dict]


class AlreadyRegistered(ImproperlyConfigured):
    """A home-page panel or item-page section was registered under a name already taken."""


class KeyCollision(ImproperlyConfigured):
    """Two item-page sections gave the same context key."""


@dataclass(frozen=True)
class Panel:
    """A part of the home page: ``context(user)`` returns its context, or None when the user has no part in it."""

    name: str
    template: str
    position: int
    context: PanelContext


_PANELS: dict[str, Panel] = {}
_ITEM_SECTIONS: dict[str, ItemSection] = {}
_ITEM_LIST_ACTIONS: dict[str, Panel] = {}


def panel(name: str, *, template: str, position: int) -> Callable[[PanelContext], PanelContext]:
    """Register ``func(user) -> context or None`` as the home-page panel ``name``, drawn with ``template``.

    Panels are shown by ``position``, then name.
    """

    def decorator(func: PanelContext) -> PanelContext:
        if name in _PANELS:
            raise AlreadyRegistered(f"a home-page panel named {name!r} is already registered")
        _PANELS[name] = Panel(name=name, template=template, position=position, context=func)
        return func

    return decorator


def item_section(name: str) -> Callable[[ItemSection], ItemSection]:
    """Register ``func(item) -> context`` as the part ``name`` of the item page and its history."""

    def decorator(func: ItemSection) -> ItemSection:
        if name in _ITEM_SECTIONS:
            raise AlreadyRegistered(f"an item-page section named {name!r} is already registered")
        _ITEM_SECTIONS[name] = func
        return func

    return decorator


def home_panels(*, user: AbstractBaseUser) -> list[dict]:
    """Return ``{"name", "template", "context"}`` of every home-page panel the user has a part in, in order."""
    shown = []
    for entry in sorted(_PANELS.values(), key=lambda entry: (entry.position, entry.name)):
        context = entry.context(user)
        if context is not None:
            shown.append({"name": entry.name, "template": entry.template, "context": context})
    return shown


def item_context(*, item: object) -> dict:
    """Return the context of every registered item-page section for ``item``; a key given twice raises."""
    context: dict = {}
    given_by: dict[str, str] = {}
    for name, func in _ITEM_SECTIONS.items():
        for key, value in func(item).items():
            if key in given_by:
                raise KeyCollision(f"item-page sections {given_by[key]!r} and {name!r} both give {key!r}")
            given_by[key] = name
            context[key] = value
    return context


def item_list_action(name: str, *, template: str, position: int) -> Callable[[PanelContext], PanelContext]:
    """Register ``func(user) -> context or None`` as the bulk action ``name`` of the item list, drawn with
    ``template`` (its controls belong to the list's form ``bulk-items``, whose checked ``uids`` they act on)."""

    def decorator(func: PanelContext) -> PanelContext:
        if name in _ITEM_LIST_ACTIONS:
            raise AlreadyRegistered(f"an item-list action named {name!r} is already registered")
        _ITEM_LIST_ACTIONS[name] = Panel(name=name, template=template, position=position, context=func)
        return func

    return decorator


def item_list_actions(*, user: AbstractBaseUser) -> list[dict]:
    """Return ``{"name", "template", "context"}`` of every item-list bulk action the user may take, in order."""
    shown = []
    for entry in sorted(_ITEM_LIST_ACTIONS.values(), key=lambda entry: (entry.position, entry.name)):
        context = entry.context(user)
        if context is not None:
            shown.append({"name": entry.name, "template": entry.template, "context": context})
    return shown
