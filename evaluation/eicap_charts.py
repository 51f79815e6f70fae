"""The figures of a report's EiCAP analyses, one set per language: subcategory heatmap, turn decomposition,
inter-model agreement and score margins. Drawn from the report's ``eicap`` section alone, in the active language.

Models scored by letter choice carry a dagger (†) and a note: EiCAP reports the two protocols apart.
"""

import math

import matplotlib
import numpy as np
from django.utils.translation import gettext as _
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from core.figures import CATEGORICAL, NEUTRAL, new_figure, wrap_label

LETTER_MARK = "†"


def _label(code: str, protocols: dict[str, str]) -> str:
    return code + (LETTER_MARK if protocols.get(code) == "letter" else "")


def _protocols(eicap: dict) -> dict[str, str]:
    return {r["model"]: r["protocol"] for r in eicap.get("protocols", [])}


def _empty(fig: Figure, ax: Axes, title: str) -> Figure:
    ax.set_axis_off()
    ax.set_title(title, loc="left")
    ax.text(0.5, 0.5, _("No data"), ha="center", va="center", transform=ax.transAxes, color=NEUTRAL)
    return fig


def _not_comparable_note(ax: Axes, eicap: dict) -> None:
    """Add the protocol note under the x axis's label when the report mixes protocols."""
    if eicap.get("mixed_protocols"):
        note = _("† letter choice (chat-only API): another protocol, not comparable with log-probability scoring")
        label = ax.get_xlabel()
        ax.set_xlabel(f"{label}\n{note}" if label else note, fontsize=7.5)


def _cells(ax: Axes, values: np.ndarray, *, vmin: float = 0, vmax: float = 1) -> object:
    """Draw a matrix as vector cells with each value written in it (— where there is none)."""
    cmap = matplotlib.colormaps["cividis"].with_extremes(bad="#dddddd")
    rows, cols = values.shape
    image = ax.pcolormesh(
        np.arange(cols + 1) - 0.5,
        np.arange(rows + 1) - 0.5,
        np.ma.masked_invalid(values),
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        edgecolors="white",
        linewidth=0.5,
    )
    ax.invert_yaxis()
    for i in range(rows):
        for j in range(cols):
            v = values[i, j]
            text = "—" if math.isnan(v) else f"{v:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=6.5, color="white" if v < 0.55 else "black")
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    return image


def heatmap(eicap: dict, language: str, names: dict[str, str]) -> Figure:
    """Accuracy per model (rows) and subcategory (columns, grouped by layer in taxonomy order), with the macro."""
    rows = [r for r in eicap.get("subcategories", []) if r["language"] == language]
    protocols = _protocols(eicap)
    models = list(dict.fromkeys(r["model"] for r in rows))
    subcategories = list(dict.fromkeys(r["subcategory"] for r in rows))
    layer_of = {r["subcategory"]: r["layer"] for r in rows}
    order = {s: i for i, s in enumerate(subcategories)}
    # Columns by layer (in the order layers first appear), then by the order the report gives.
    layers = list(dict.fromkeys(layer_of[s] for s in subcategories))
    subcategories.sort(key=lambda s: (layers.index(layer_of[s]), order[s]))
    macro = {r["model"]: r["macro"] for r in eicap.get("summary", []) if r["language"] == language}
    values = np.full((len(models), len(subcategories) + 1), np.nan)
    for r in rows:
        values[models.index(r["model"]), subcategories.index(r["subcategory"])] = r["accuracy"]
    for i, m in enumerate(models):
        values[i, -1] = macro.get(m, np.nan)
    width = min(max(5.0, 2.0 + 0.42 * len(subcategories)), 13.0)
    fig = new_figure(2.6 + 0.36 * max(len(models), 1), width=width)
    ax = fig.subplots()
    title = _("Accuracy by layer and subcategory (%(language)s)") % {"language": _language(language)}
    if not rows:
        return _empty(fig, ax, title)
    image = _cells(ax, values)
    labels = [wrap_label(names.get(s, s), 18) for s in subcategories] + [_("Macro")]
    ax.set_xticks(range(len(labels)), labels, fontsize=6.5)
    ax.tick_params(axis="x", labelrotation=50)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    ax.set_yticks(range(len(models)), [_label(m, protocols) for m in models])
    # A line between layers, and the layer's name above its columns.
    start, centres = 0, []
    for layer in layers:
        width_cols = sum(1 for s in subcategories if layer_of[s] == layer)
        ax.axvline(start - 0.5, color="black", linewidth=1.0)
        centres.append(start - 0.5 + width_cols / 2)
        start += width_cols
    ax.axvline(start - 0.5, color="black", linewidth=1.0)
    top = ax.secondary_xaxis("top")
    top.set_xticks(centres, [wrap_label(names.get(layer, layer), 14) for layer in layers], fontsize=6.5)
    top.tick_params(length=0)
    colourbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    colourbar.set_label(_("Accuracy"))
    ax.set_ylabel(_("Model"))
    ax.set_title(title, loc="left")
    _not_comparable_note(ax, eicap)
    return fig


def _language(code: str) -> str:
    return {"en": _("English"), "zh": _("Chinese")}.get(code, code)


def turns(eicap: dict, language: str) -> Figure:
    """Per model: turn 1 right, turn 2 right and both wrong among two-turn probes, with 95% Wilson intervals."""
    rows = [r for r in eicap.get("turns", []) if r["language"] == language]
    protocols = _protocols(eicap)
    fig = new_figure(1.6 + 0.55 * max(len(rows), 1))
    ax = fig.subplots()
    title = _("Turn decomposition of two-turn probes (%(language)s)") % {"language": _language(language)}
    if not rows:
        return _empty(fig, ax, title)
    series = [("turn1", _("Turn 1 right")), ("turn2", _("Turn 2 right")), ("both_wrong", _("Both turns wrong"))]
    height = 0.8 / len(series)
    for k, (field, name) in enumerate(series):
        y = np.arange(len(rows)) + (k - 1) * height
        mid = np.array([r[field] for r in rows], dtype=float)
        # Clipped at zero: a Wilson bound at 0 or 1 may sit a rounding error inside the estimate.
        err = np.clip(
            np.array([[r[field] - r[f"{field}_low"], r[f"{field}_high"] - r[field]] for r in rows]).T, 0, None
        )
        ax.barh(y, mid, height=height, color=CATEGORICAL[k], label=name)
        ax.errorbar(mid, y, xerr=err, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    labels = [_turn_label(r, protocols) for r in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(_("Share of two-turn probes"))
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, fontsize=7)
    ax.set_title(title, loc="left", pad=18)
    _not_comparable_note(ax, eicap)
    return fig


def _turn_label(row: dict, protocols: dict[str, str]) -> str:
    """The model's name and its T1−T2 gap with the gap's 95% bootstrap interval."""
    if row.get("gap") is None:
        return _label(row["model"], protocols)
    gap = _("T1−T2 %(gap)+.2f [%(low)+.2f, %(high)+.2f]") % {
        "gap": row["gap"],
        "low": row["gap_low"],
        "high": row["gap_high"],
    }
    return f"{_label(row['model'], protocols)}\n{gap}"


def agreement(eicap: dict, language: str) -> Figure:
    """The fraction of probes on which two models reach the same outcome, one panel per protocol."""
    rows = [r for r in eicap.get("agreement", []) if r["language"] == language]
    protocols = list(dict.fromkeys(r["protocol"] for r in rows))
    marks = _protocols(eicap)
    size = max((len({r["a"] for r in rows if r["protocol"] == p}) for p in protocols), default=1)
    fig = new_figure(1.8 + 0.45 * size, width=min(4.0 + 3.2 * max(len(protocols) - 1, 0), 9.0))
    title = _("Inter-model agreement on probe outcomes (%(language)s)") % {"language": _language(language)}
    if not rows:
        return _empty(fig, fig.subplots(), title)
    axes = fig.subplots(1, len(protocols), squeeze=False)[0]
    names = {"logprob": _("log-probability"), "letter": _("letter choice")}
    image = None
    for ax, protocol in zip(axes, protocols, strict=True):
        mine = [r for r in rows if r["protocol"] == protocol]
        models = list(dict.fromkeys(r["a"] for r in mine))
        values = np.full((len(models), len(models)), np.nan)
        for r in mine:
            if r["agreement"] is not None:
                values[models.index(r["a"]), models.index(r["b"])] = r["agreement"]
        image = _cells(ax, values)
        labels = [_label(m, marks) for m in models]
        ax.set_xticks(range(len(models)), labels, fontsize=7)
        ax.set_yticks(range(len(models)), labels, fontsize=7)
        ax.set_xlabel(names.get(protocol, protocol))
    fig.colorbar(image, ax=list(axes), fraction=0.05, pad=0.02).set_label(_("Agreement"))
    axes[0].set_title(title, loc="left")
    return fig


def margins(eicap: dict, language: str) -> Figure:
    """The distribution of each log-probability model's margins (key minus best distractor), as step histograms."""
    rows = [r for r in eicap.get("margins", []) if r["language"] == language]
    fig = new_figure(3.2)
    ax = fig.subplots()
    title = _("Score margins: key minus best distractor (%(language)s)") % {"language": _language(language)}
    if not rows:
        return _empty(fig, ax, title)
    edges = np.asarray(rows[0]["edges"], dtype=float)
    step = float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
    # The open-ended outer bins are drawn one bin wide beyond the edges.
    bounds = np.concatenate([[edges[0] - step], edges, [edges[-1] + step]])
    for k, r in enumerate(rows):
        shares = np.asarray(r["counts"], dtype=float) / max(r["n"], 1)
        ax.stairs(
            shares,
            bounds,
            color=CATEGORICAL[k % len(CATEGORICAL)],
            linewidth=1.4,
            label=_("%(model)s (mean %(mean)+.2f, %(positive)s%% positive)")
            % {"model": r["model"], "mean": r["mean"], "positive": f"{100 * r['share_positive']:.0f}"},
        )
    ax.axvline(0, color=NEUTRAL, linewidth=0.8, linestyle="--")
    ax.set_xlabel(_("Margin (mean log-probability per token; outer bins open-ended)"))
    ax.set_ylabel(_("Share of probes"))
    ax.legend(loc="upper left", fontsize=7)
    ax.set_title(title, loc="left")
    return fig


def eicap_builders(report: dict, names: dict[str, str]) -> dict:
    """Return the EiCAP figures of a report by file stem, each as a function that draws it."""
    eicap = report.get("eicap") or {}
    builders = {}
    for lang in eicap.get("languages", []):
        builders[f"eicap_heatmap_{lang}"] = lambda lang=lang: heatmap(eicap, lang, names)
        builders[f"eicap_turns_{lang}"] = lambda lang=lang: turns(eicap, lang)
        builders[f"eicap_agreement_{lang}"] = lambda lang=lang: agreement(eicap, lang)
        builders[f"eicap_margins_{lang}"] = lambda lang=lang: margins(eicap, lang)
    return builders


def eicap_titles() -> dict[str, str]:
    """Return the caption of each EiCAP figure by stem prefix, in the active language."""
    return {
        "eicap_heatmap": _("EiCAP: accuracy by layer and subcategory"),
        "eicap_turns": _("EiCAP: turn decomposition"),
        "eicap_agreement": _("EiCAP: inter-model agreement"),
        "eicap_margins": _("EiCAP: score margins"),
    }
