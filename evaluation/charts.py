"""The figures of an evaluation report, each drawn once with matplotlib and written as SVG, PNG and PDF.

Titles, axis labels and names follow the active language; dimension codes are shown by their names, given by the
caller (``dimension_names``) so that this module needs no database.
"""

import math
from collections.abc import Callable

import matplotlib
import numpy as np
from django.utils.translation import gettext as _
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from calibration.charts import language_name
from core.figures import CATEGORICAL, FORMATS, NEGATIVE, NEUTRAL, POSITIVE, figure_files, new_figure, wrap_label
from evaluation.eicap_charts import eicap_builders, eicap_titles

MARKERS = ["o", "s", "^", "D", "v", "P"]


def typology_name(code: str | None) -> str:
    """Return the readable name of a ΔZ typology."""
    names = {
        "cognition-dominant": _("cognition-dominant"),
        "interaction-dominant": _("interaction-dominant"),
        "balanced": _("balanced"),
        "context-dependent": _("context-dependent"),
    }
    return names.get(code, code or "—")


def _empty(fig: Figure, ax: Axes, title: str) -> Figure:
    ax.set_axis_off()
    ax.set_title(title, loc="left")
    ax.text(0.5, 0.5, _("No data"), ha="center", va="center", transform=ax.transAxes, color=NEUTRAL)
    return fig


def _model_label(row: dict, with_language: bool) -> str:
    return f"{row['model']} · {language_name(row['language'])}" if with_language else row["model"]


def scatter(report: dict) -> Figure:
    """Objective accuracy (x) against subjective rating (y): a colour per model, a marker per language."""
    rows = [
        r
        for r in report.get("analysis", {}).get("standing", [])
        if r.get("accuracy") is not None and r.get("rating") is not None
    ]
    fig = new_figure(4.0)
    ax = fig.subplots()
    title = _("Perception (objective accuracy) against interaction (subjective rating)")
    if not rows:
        return _empty(fig, ax, title)
    models = sorted({r["model"] for r in rows})
    languages = sorted({r["language"] for r in rows})
    for r in rows:
        colour = CATEGORICAL[models.index(r["model"]) % len(CATEGORICAL)]
        marker = MARKERS[languages.index(r["language"]) % len(MARKERS)]
        ax.scatter(r["accuracy"], r["rating"], color=colour, marker=marker, s=36, zorder=3)
        ax.annotate(
            _model_label(r, len(languages) > 1),
            (r["accuracy"], r["rating"]),
            textcoords="offset points",
            xytext=(5, 4),
            fontsize=7.5,
        )
    ax.set_xlabel(_("Objective accuracy (share of items answered correctly)"))
    ax.set_ylabel(_("Subjective rating (TrueSkill, display scale)"))
    ax.set_title(title, loc="left")
    ax.margins(x=0.15, y=0.12)
    ax.grid(alpha=0.3)
    if len(languages) > 1:
        handles = [
            ax.scatter([], [], color=NEUTRAL, marker=MARKERS[i % len(MARKERS)], label=language_name(lang))
            for i, lang in enumerate(languages)
        ]
        ax.legend(handles=handles, title=_("Language"), loc="best")
    return fig


def _height(rows: int) -> float:
    return 1.2 + 0.32 * max(rows, 1)


def delta_z(report: dict) -> Figure:
    """ΔZ per model and language as bars around zero, the value written beside each bar."""
    rows = [r for r in report.get("analysis", {}).get("delta_z", []) if r.get("delta") is not None]
    fig = new_figure(_height(len(rows)))
    ax = fig.subplots()
    title = _("ΔZ = Z(subjective) − Z(objective)")
    if not rows:
        return _empty(fig, ax, title)
    languages = {r["language"] for r in rows}
    labels = [_model_label(r, len(languages) > 1) for r in rows]
    values = [r["delta"] for r in rows]
    y = np.arange(len(rows))
    ax.barh(y, values, color=[POSITIVE if v >= 0 else NEGATIVE for v in values], height=0.6)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.axvline(0, color=NEUTRAL, linewidth=0.8)
    limit = max(max(abs(v) for v in values), 0.5) * 1.35
    ax.set_xlim(-limit, limit)
    for i, v in enumerate(values):
        ax.text(v + (0.03 if v >= 0 else -0.03) * limit, i, f"{v:+.2f}", va="center", ha="left" if v >= 0 else "right")
    ax.set_xlabel(_("ΔZ (positive: rated higher than its accuracy suggests)"))
    ax.set_title(title, loc="left")
    return fig


def accuracy_heatmap(report: dict, language: str, dimension_names: dict[str, str]) -> Figure:
    """Accuracy per model (rows) and dimension (columns) in one language, each cell labelled with its value."""
    rows = [r for r in report.get("objective", {}).get("accuracy", []) if r["language"] == language]
    models = sorted({r["model"] for r in rows})
    dims = sorted({r["dimension"] for r in rows}, key=lambda code: dimension_names.get(code, code))
    values = np.full((len(models), len(dims)), np.nan)
    for r in rows:
        values[models.index(r["model"]), dims.index(r["dimension"])] = r["accuracy"]
    width = min(max(4.5, 1.6 + 0.75 * len(dims)), 9.0)
    fig = new_figure(1.9 + 0.36 * max(len(models), 1), width=width)
    ax = fig.subplots()
    title = _("Accuracy by dimension (%(language)s)") % {"language": language_name(language)}
    if not rows:
        return _empty(fig, ax, title)
    cmap = matplotlib.colormaps["cividis"].with_extremes(bad="#dddddd")
    # A mesh of vector cells (not an image), so the PDF and SVG stay vector at any zoom.
    image = ax.pcolormesh(
        np.arange(len(dims) + 1) - 0.5,
        np.arange(len(models) + 1) - 0.5,
        np.ma.masked_invalid(values),
        cmap=cmap,
        vmin=0,
        vmax=1,
        edgecolors="white",
        linewidth=0.5,
    )
    ax.invert_yaxis()
    ax.set_xticks(range(len(dims)), [wrap_label(dimension_names.get(d, d), 16) for d in dims], fontsize=7.5)
    ax.set_yticks(range(len(models)), models)
    ax.tick_params(axis="x", labelrotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    for i in range(len(models)):
        for j in range(len(dims)):
            v = values[i, j]
            text = "—" if math.isnan(v) else f"{v:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7.5, color="white" if v < 0.55 else "black")
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    colourbar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
    colourbar.set_label(_("Accuracy"))
    ax.set_xlabel(_("Dimension"))
    ax.set_ylabel(_("Model"))
    ax.set_title(title, loc="left")
    return fig


def _intervals(rows: list[tuple[str, str, float, float, float]], *, title: str, x_label: str) -> Figure:
    """Points with horizontal intervals: (model, language, estimate, low, high), a colour per language."""
    fig = new_figure(_height(len(rows)))
    ax = fig.subplots()
    if not rows:
        return _empty(fig, ax, title)
    languages = sorted({lang for _m, lang, *_rest in rows})
    for i, (_model, lang, mid, low, high) in enumerate(rows):
        colour = CATEGORICAL[languages.index(lang) % len(CATEGORICAL)]
        marker = MARKERS[languages.index(lang) % len(MARKERS)]
        ax.errorbar(mid, i, xerr=[[mid - low], [high - mid]], fmt=marker, color=colour, capsize=3, markersize=5)
    labels = [f"{model} · {language_name(lang)}" if len(languages) > 1 else model for model, lang, *_r in rows]
    ax.set_yticks(range(len(rows)), labels)
    ax.invert_yaxis()
    ax.margins(x=0.08)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(x_label)
    ax.set_title(title, loc="left")
    return fig


def ratings(report: dict) -> Figure:
    """The overall TrueSkill rating of each model and language with its 95% interval."""
    rows = [
        (r["model"], r["language"], r["display"], r["display_low"], r["display_high"])
        for r in report.get("subjective", {}).get("ratings", [])
        if r["dimension"] == "overall" and r.get("display") is not None and r.get("display_low") is not None
    ]
    return _intervals(
        rows,
        title=_("Overall TrueSkill ratings with %(level)s intervals (μ ± 1.96σ)") % {"level": "95%"},
        x_label=_("Rating (display scale)"),
    )


def bradley_terry(report: dict) -> Figure:
    """Bradley-Terry strengths on the Elo scale with 95% bootstrap intervals (an unbounded side runs to the edge)."""
    return _intervals(
        bradley_terry_intervals(report),
        title=_("Bradley-Terry strengths with 95% bootstrap intervals"),
        x_label=_("Strength (Elo scale; ∞: interval unbounded on that side)"),
    )


def bradley_terry_intervals(report: dict) -> list[tuple[str, str, float, float, float]]:
    """Return (model, language, Elo, low, high) per model and language; an unbounded side is drawn to the edge."""
    rows = [r for r in report.get("subjective", {}).get("bradley_terry", []) if r.get("elo") is not None]
    bounds = [v for r in rows for v in (r["elo"], r["elo_low"], r["elo_high"]) if v is not None]
    if not bounds:
        return []
    edge_low, edge_high = min(bounds), max(bounds)
    drawn = []
    for r in rows:
        model = r["model"] + (" (∞)" if r["elo_low"] is None or r["elo_high"] is None else "")
        low = edge_low if r["elo_low"] is None else r["elo_low"]
        high = edge_high if r["elo_high"] is None else r["elo_high"]
        drawn.append((model, r["language"], r["elo"], low, high))
    return drawn


def figure_builders(report: dict, dimension_names: dict[str, str] | None = None) -> dict[str, Callable[[], Figure]]:
    """Return the report's figures by file stem, each as a function that draws it."""
    names = dimension_names or {}
    builders: dict[str, Callable[[], Figure]] = {
        "scatter": lambda: scatter(report),
        "delta_z": lambda: delta_z(report),
        "ratings": lambda: ratings(report),
        "bradley_terry": lambda: bradley_terry(report),
    }
    present = {r["language"] for r in report.get("objective", {}).get("accuracy", [])}
    for lang in report.get("languages", []):
        if lang in present:
            builders[f"accuracy_{lang}"] = lambda lang=lang: accuracy_heatmap(report, lang, names)
    return builders | eicap_builders(report, names)


def figure_titles() -> dict[str, str]:
    """Return the caption of each figure stem (accuracy heatmaps by prefix) in the active language."""
    return {
        "scatter": _("Perception against interaction"),
        "delta_z": _("ΔZ per model"),
        "ratings": _("TrueSkill ratings"),
        "bradley_terry": _("Bradley-Terry strengths"),
        "accuracy": _("Accuracy by dimension"),
        **eicap_titles(),
    }


def figures(
    report: dict, dimension_names: dict[str, str] | None = None, *, formats: tuple[str, ...] = FORMATS
) -> dict[str, bytes]:
    """Return every figure of a report as ``<stem>.<format>`` bytes (SVG, PNG and PDF unless ``formats`` says)."""
    files: dict[str, bytes] = {}
    for stem, build in figure_builders(report, dimension_names).items():
        files.update(figure_files(stem, build, formats=formats))
    return files
