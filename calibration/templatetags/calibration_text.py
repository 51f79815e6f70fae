"""Template filters that show a calibration report's stored English reasoning and codes in the reader's language."""

import re

from django import template
from django.utils.translation import gettext as _

from calibration.charts import stratum_name

register = template.Library()

_NUMBER = r"(-?[\d.]+|—|None|n/a|-inf|nan)"
_LINES = [
    (
        re.compile(
            rf"(.+): alpha with judge {_NUMBER} \[{_NUMBER}, {_NUMBER}\] vs experts {_NUMBER}: "
            r"(significantly worse, excluded|not significantly worse)\."
        ),
        lambda m: (
            (
                _(
                    "%(judge)s: alpha with the judge %(value)s [%(low)s, %(high)s] against the experts' %(base)s: "
                    "significantly worse, excluded."
                )
                if m[6].startswith("significantly")
                else _(
                    "%(judge)s: alpha with the judge %(value)s [%(low)s, %(high)s] against the experts' %(base)s: "
                    "not significantly worse."
                )
            )
            % {"judge": m[1], "value": m[2], "low": m[3], "high": m[4], "base": m[5]}
        ),
    ),
    (
        re.compile(r"(.+): alpha with the judge is undefined \((.*)\)\."),
        lambda m: _("%(judge)s: alpha with the judge is undefined (%(reason)s).") % {"judge": m[1], "reason": m[2]},
    ),
    (
        re.compile(r"The experts' own alpha is undefined: (.*)"),
        lambda m: _("The experts' own alpha is undefined: %(reason)s") % {"reason": m[1]},
    ),
    (
        re.compile(rf"Highest lower bound: (.+) \({_NUMBER}\)\."),
        lambda m: _("Highest lower bound: %(judge)s (%(value)s).") % {"judge": m[1], "value": m[2]},
    ),
]


@register.filter
def suggestion_line(text: str) -> str:
    """Return one line of the stored suggestion reasoning in the active language (unknown text unchanged)."""
    for pattern, translate in _LINES:
        match = pattern.fullmatch(text)
        if match:
            return translate(match)
    return text


@register.filter
def stratum_title(stratum: dict, names: dict[str, str] | None) -> str:
    """Return a stratum's readable name (overall, a dimension's name or a language)."""
    return stratum_name(stratum, names or {})
