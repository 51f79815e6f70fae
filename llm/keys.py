"""Which environment variables an endpoint may name for its API key.

The sending process reads the named variable and sends its value to the endpoint's base URL as a bearer token.
An admin who could name ``SECRET_KEY`` or ``DATABASE_URL`` and point the base URL at their own host could
therefore read the server's secrets with *Test connection*. So a name must match ``LLM_API_KEY_ENV_PATTERN``
(by default names ending in ``_API_KEY``) and may never be a Django setting, a variable this application reads
itself (every name ``config/settings`` reads from the environment), or a ``DJANGO_*`` or ``PG*`` variable, even
when it matches the pattern. The rule is checked when an endpoint is saved and again every time a key is read.
"""

import re
import sys
from functools import cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

# Django reads DJANGO_*; libpq (the PostgreSQL client) reads PG* such as PGPASSWORD.
RESERVED_PREFIXES = ("DJANGO_", "PG")
ALWAYS_RESERVED = frozenset({"SECRET_KEY", "DATABASE_URL"})
ENVIRONMENT_READ = re.compile(
    r"""(?:environ\.get|environ\.setdefault|getenv|env_bool|env_int|env_float|env_list)\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']"""
    r"""|environ\[\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*\]"""
)


@cache
def _names_read_by_settings(settings_module: str) -> frozenset[str]:
    """Return the environment variables the settings modules read (scanned once from their source)."""
    package = settings_module.rpartition(".")[0] or settings_module
    names: set[str] = set()
    for name, module in list(sys.modules.items()):
        if name != settings_module and not name.startswith(package + "."):
            continue
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py"):
            for found in ENVIRONMENT_READ.findall(Path(path).read_text(encoding="utf-8")):
                names.add(found[0] or found[1])
    return frozenset(names)


def reserved_names() -> frozenset[str]:
    """Return the variable names no endpoint may use, whatever the pattern: settings and what the app reads."""
    setting_names = {name for name in dir(settings) if name.isupper()}
    return ALWAYS_RESERVED | setting_names | _names_read_by_settings(settings.SETTINGS_MODULE or "config.settings")


def api_key_env_problem(name: str) -> str:
    """Return why an endpoint may not name ``name`` as its API key variable, or "" when it may (or names none)."""
    if not name:
        return ""
    upper = name.upper()
    if upper in reserved_names() or upper.startswith(RESERVED_PREFIXES):
        return _(
            "The API key variable %(name)s is not allowed: it is a Django setting or a variable this application "
            "reads itself (DJANGO_* and PG* included), and its value must never be sent to an endpoint."
        ) % {"name": name}
    pattern = settings.LLM_API_KEY_ENV_PATTERN
    if not re.fullmatch(pattern, name):
        return _(
            "The API key variable %(name)s is not allowed: key variable names must match %(pattern)s (setting "
            "LLM_API_KEY_ENV_PATTERN), for example OPENAI_API_KEY."
        ) % {"name": name, "pattern": pattern}
    return ""


def validate_api_key_env(value: str) -> None:
    """Refuse an API key variable name that the rule above does not allow."""
    problem = api_key_env_problem(value)
    if problem:
        raise ValidationError(problem, code="api_key_env_not_allowed")


def api_key_env_status(name: str, environ: dict) -> str:
    """Return "none", "not_allowed", "set" or "not_set" for a key variable; a refused one is never looked up."""
    if not name:
        return "none"
    if api_key_env_problem(name):
        return "not_allowed"
    return "set" if environ.get(name) else "not_set"
