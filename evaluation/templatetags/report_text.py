"""Template filters that turn a report's codes into words a reader understands, in the active language."""

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import template
from django.utils.translation import gettext as _

from calibration.models import CombineRule
from evaluation.charts import language_name, typology_name

register = template.Library()


@register.filter
def mapping_name(code: str) -> str:
    """Return a margin mapping's readable name with its formula (the report stores its code)."""
    names = {
        "linear": _("linear, f(k) = k"),
        "sqrt": _("square root, f(k) = √k"),
        "log": _("logarithmic, f(k) = 1 + ln k"),
        "fixed": _("fixed, one update per verdict"),
    }
    return names.get(code, code)


@register.filter
def combine_rule_name(code: str) -> str:
    """Return an order-combination rule's readable name (the report stores its code)."""
    return CombineRule(code).label if code in CombineRule.values else code


@register.filter
def typology(code: str | None) -> str:
    """Return the readable name of a ΔZ typology code."""
    return typology_name(code)


@register.filter
def language(code: str) -> str:
    """Return the readable name of a language code."""
    return language_name(code)


@register.filter
def protocol_name(code: str) -> str:
    """Return the short name of a scoring protocol (letter choice marked †: not comparable with log-probability)."""
    return {"logprob": _("log-probability"), "letter": _("letter choice †")}.get(code, code)


@register.filter
def answer_letter(index: int | None) -> str:
    """Return the letter of an option index as the item shows it (0 is A); a dash for no answer."""
    if index is None or index == "":
        return "—"
    return chr(ord("A") + int(index))


@register.filter
def lookup(mapping: dict, key: str) -> object:
    """Return ``mapping[key]``, or the key itself when the mapping has no such entry."""
    return mapping.get(key, key) if mapping else key


def _reason(text: str) -> str:
    """Translate a statistic's undefined reason (stored in English in the report)."""
    fixed = {
        "fewer than two models have verdicts": _("fewer than two models have verdicts"),
        "the models fall into groups that were never compared with each other": _(
            "the models fall into groups that were never compared with each other"
        ),
        "needs at least two models": _("needs at least two models"),
        "every model has the same score": _("every model has the same score"),
        "the typology needs ΔZ in at least two languages": _("the typology needs ΔZ in at least two languages"),
        "no decisive verdict": _("no decisive verdict"),
        "no verdict": _("no verdict"),
        "a variable is constant": _("a variable is constant"),
        "needs at least three paired values": _("needs at least three paired values"),
    }
    if text in fixed:
        return fixed[text]
    match = re.fullmatch(
        r"the maximum-likelihood strengths do not exist: (.+) never beat or tied a model outside (itself|that group); "
        r"add virtual draws for finite strengths",
        text,
    )
    if match:
        return _(
            "the maximum-likelihood strengths do not exist: %(models)s never beat or tied a model outside it; "
            "add virtual draws for finite strengths"
        ) % {"models": match.group(1)}
    return text


# Notes are stored in the report in English (the report's bytes do not depend on who computed it); each known
# form is shown in the reader's language.
_NOTES = [
    (
        re.compile(r"(\d+) objective answers could not be parsed and count as wrong\."),
        lambda m: _("%(n)s objective answers could not be parsed and count as wrong.") % {"n": m[1]},
    ),
    (
        re.compile(r"(\d+) judge replies were unparseable; their pairs are left out, not guessed\."),
        lambda m: _("%(n)s judge replies were unparseable; their pairs are left out, not guessed.") % {"n": m[1]},
    ),
    (
        re.compile(r"ΔZ (\w+) (objective|subjective): (.+)"),
        lambda m: (
            _("ΔZ, %(language)s, %(side)s: %(reason)s")
            % {
                "language": language_name(m[1]),
                "side": _("objective scores") if m[2] == "objective" else _("subjective scores"),
                "reason": _reason(m[3]),
            }
        ),
    ),
    (
        re.compile(r"Bradley-Terry \((\w+)\): (.+)\."),
        lambda m: (
            _("Bradley-Terry (%(language)s): %(reason)s.") % {"language": language_name(m[1]), "reason": _reason(m[2])}
        ),
    ),
    (
        re.compile(r"(\S+): (\d+) prompts got no reply; those items are missing, not counted as wrong\."),
        lambda m: (
            _("%(model)s: %(n)s prompts got no reply; those items are missing, not counted as wrong.")
            % {"model": m[1], "n": m[2]}
        ),
    ),
    (
        re.compile(r"No judge prompt for: (.+); those items were not judged\."),
        lambda m: _("No judge prompt for: %(dims)s; those items were not judged.") % {"dims": m[1]},
    ),
]


@register.filter
def report_note(text: str) -> str:
    """Return a note or undefined reason of a stored report in the active language (unknown text unchanged)."""
    for pattern, translate in _NOTES:
        match = pattern.fullmatch(text)
        if match:
            return translate(match)
    return _reason(text)


@register.filter
def decimals(value: object, places: int = 2) -> str:
    """``floatformat:places`` for a report's many numbers, at a fraction of its cost: rounded half up as floatformat
    rounds, without its localisation pass (the interface languages write decimals the same way and group no
    thousands); "" for no number, as floatformat gives. A report page formats about 800 numbers."""
    if value is None or value == "":
        return ""
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return ""
    if not number.is_finite():
        return str(value)
    rounded = number.quantize(Decimal(1).scaleb(-int(places)), rounding=ROUND_HALF_UP)
    return f"{abs(rounded) if rounded == 0 else rounded:f}"


@register.filter
def percent(value: object) -> str:
    """A share (0-1) as a percentage with two decimals, as EiCAP's tables write them; "—" for no number."""
    if value is None or value == "":
        return "—"
    try:
        return decimals(Decimal(repr(value) if isinstance(value, float) else str(value)) * 100, 2)
    except (InvalidOperation, ValueError, TypeError):
        return "—"
