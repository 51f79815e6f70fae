"""Strings of Django's own that our Chinese catalogue translates, Django's catalogue not having them (yet).

``makemessages`` reads only this project's files: naming a string here puts it in ``locale/`` (it takes precedence
over Django's catalogue), so the interface reads Chinese everywhere.
"""

from django.utils.translation import get_language, gettext_noop

DJANGO_STRINGS = (
    gettext_noop("- Select an option -"),  # the empty choice of a select in Django 6.1's forms
)


def in_ui_language(en: str, zh: str) -> str:
    """Return the Chinese text when the interface is in Chinese and there is one, else the English."""
    return zh if zh and (get_language() or "en").startswith("zh") else en
