"""The figure of the calibration report: Krippendorff's alpha with its interval per stratum and rater.

Drawn once with matplotlib (``core.figures``) and written as SVG (shown in the page), PNG and PDF (downloads).
"""

import hashlib
import json
import textwrap

from django.core.cache import cache
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from matplotlib.figure import Figure

from annotation.items.models import Dimension
from calibration.models import CalibrationRun
from calibration.report import report_digest
from core.figures import FORMATS, NEGATIVE, NEUTRAL, POSITIVE, figure_files, new_figure, svg_data_uri
from core.i18n import in_ui_language

# Part of the cache key of drawn figures: bump it when the drawing changes.
FIGURES_VERSION = 2
# The axis always shows 0 to 1 and a little below 0; it widens to hold every estimate and interval (alpha can be far
# below 0), so nothing is clamped.
LOWEST, HIGHEST = -0.2, 1.0
TITLE_WIDTH, LABEL_WIDTH = 58, 72


def wrapped(text: str, width: int) -> str:
    """Break a title or axis label into lines that fit the figure (Chinese, without spaces, by characters)."""
    return "\n".join(textwrap.wrap(text, width=width if " " in text else width // 2)) or text


def axis_range(values: list[float]) -> tuple[float, float]:
    """Return the x range of the forest plot: [-0.2, 1] widened to every value with a margin."""
    low = min([LOWEST, *values])
    high = max([HIGHEST, *values])
    margin = 0.04 * (high - low)
    return (low - margin if low < LOWEST else LOWEST), (high + margin if high > HIGHEST else HIGHEST + margin)


def language_name(code: str) -> str:
    """Return the readable name of a benchmark language code."""
    return {"en": _("English"), "zh": _("Chinese")}.get(code, code)


def stratum_name(stratum: dict, dimension_names: dict[str, str]) -> str:
    """Return a stratum's readable name: overall, a dimension's name or a language's name."""
    key = stratum["key"]
    if key == "overall":
        return _("Overall")
    kind, _sep, code = key.partition(":")
    if kind == "dimension":
        return dimension_names.get(code, code)
    if kind == "language":
        return language_name(code)
    return stratum.get("label", key)


def forest_plot(report: dict, dimension_names: dict[str, str]) -> Figure:
    """Alpha of the experts among themselves and with each judge added, with 95% intervals, per stratum."""
    rows = []
    for stratum in report.get("strata", []):
        name = stratum_name(stratum, dimension_names)
        rows.append((name, _("experts"), stratum["baseline"]["alpha_ordinal"], True))
        for judge, row in stratum["judges"].items():
            rows.append((name, judge, row["alpha_with_judge"], False))
    fig = new_figure(1.6 + 0.27 * max(len(rows), 1))
    ax = fig.subplots()
    title = _("Krippendorff's alpha (ordinal) with %(level)s intervals") % {"level": "95%"}
    ax.set_title(wrapped(title, TITLE_WIDTH), loc="left")
    values = [
        v
        for _stratum, _rater, estimate, _experts in rows
        for v in (estimate.get("value"), estimate.get("ci_low"), estimate.get("ci_high"))
        if v is not None
    ]
    lowest, highest = axis_range(values)
    for i, (_stratum, _rater, estimate, experts) in enumerate(rows):
        value = estimate.get("value")
        colour = NEGATIVE if experts else POSITIVE
        if value is None:
            ax.text(lowest + 0.02, i, _("undefined"), va="center", color=NEUTRAL, fontsize=7.5)
            continue
        low, high = estimate.get("ci_low"), estimate.get("ci_high")
        if low is not None and high is not None:
            ax.plot([low, high], [i, i], color=colour, linewidth=1.6)
        ax.plot([value], [i], marker="s" if experts else "o", color=colour, markersize=5)
    ax.set_yticks(range(len(rows)), [f"{stratum} · {rater}" for stratum, rater, *_rest in rows], fontsize=7.5)
    ax.invert_yaxis()
    ax.set_xlim(lowest, highest)
    ax.axvline(0, color=NEUTRAL, linewidth=0.8, linestyle=":")
    ax.axvline(0.667, color=NEUTRAL, linewidth=0.6, linestyle="--")
    ax.grid(axis="x", alpha=0.3)
    label = _("Krippendorff's alpha (dashed line: 0.667, the lowest for tentative conclusions)")
    ax.set_xlabel(wrapped(label, LABEL_WIDTH))
    experts_handle = ax.plot([], [], marker="s", color=NEGATIVE, label=_("experts among themselves"))[0]
    judge_handle = ax.plot([], [], marker="o", color=POSITIVE, label=_("experts with the judge added"))[0]
    fig.legend(handles=[experts_handle, judge_handle], loc="outside lower center", ncols=2)
    return fig


def dimension_names(report: dict) -> dict[str, str]:
    """Return the name of each dimension stratum of the report in the active language, by code (one query)."""
    codes = {s["key"].partition(":")[2] for s in report.get("strata", []) if s["key"].startswith("dimension:")}
    names: dict[str, str] = {}
    for code, name_en, name_zh in Dimension.objects.filter(code__in=codes).values_list("code", "name_en", "name_zh"):
        names.setdefault(code, in_ui_language(name_en, name_zh))
    return names


def forest_files(run: CalibrationRun, fmt: str, names: dict[str, str] | None = None) -> bytes:
    """Return the forest plot of a run's report in one format and the active language, cached by report content."""
    names = dimension_names(run.report) if names is None else names
    digest = report_digest(run.report)
    names_key = hashlib.sha256(json.dumps(names, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    key = f"calibration-forest:{FIGURES_VERSION}:{run.pk}:{digest}:{get_language() or 'en'}:{fmt}:{names_key}"
    drawn = cache.get(key)
    if drawn is None:
        drawn = figure_files("alpha", lambda: forest_plot(run.report, names), formats=(fmt,))[f"alpha.{fmt}"]
        cache.set(key, drawn, timeout=None)
    return drawn


def page_forest(run: CalibrationRun) -> dict:
    """Return the forest plot as shown on the run's page: caption, the SVG as a data URI, download formats, and
    the dimension names the page shows strata by."""
    names = dimension_names(run.report)
    return {
        "title": _("Krippendorff's alpha with %(level)s intervals") % {"level": "95%"},
        "uri": svg_data_uri(forest_files(run, "svg", names)),
        "formats": list(FORMATS),
        "names": names,
    }
