"""PNG and PDF versions of the report figures, drawn with matplotlib from the same report data as the SVGs."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from evaluation.charts import bradley_terry_intervals  # noqa: E402

# Fixed metadata so that the same report gives the same bytes.
_METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def _save(fig: plt.Figure, fmt: str) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt], bbox_inches="tight", dpi=150)
    plt.close(fig)
    return buffer.getvalue()


def _scatter(report: dict) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(6, 4))
    for row in report.get("analysis", {}).get("standing", []):
        if row.get("accuracy") is not None and row.get("rating") is not None:
            ax.scatter(row["accuracy"], row["rating"])
            ax.annotate(f"{row['model']} {row['language']}", (row["accuracy"], row["rating"]), fontsize=8)
    ax.set_xlabel("objective accuracy")
    ax.set_ylabel("subjective rating")
    ax.set_title("Perception vs interaction")
    return fig


def _delta(report: dict) -> plt.Figure:
    rows = [r for r in report.get("analysis", {}).get("delta_z", []) if r.get("delta") is not None]
    fig, ax = plt.subplots(figsize=(6, 0.4 * max(len(rows), 1) + 1))
    labels = [f"{r['model']} {r['language']}" for r in rows]
    values = [r["delta"] for r in rows]
    ax.barh(labels, values, color=["#2e7d4f" if v >= 0 else "#a55a00" for v in values])
    ax.axvline(0, color="#888")
    ax.set_title("ΔZ = Z(subjective) − Z(objective)")
    return fig


def _ratings(report: dict) -> plt.Figure:
    rows = [
        r
        for r in report.get("subjective", {}).get("ratings", [])
        if r["dimension"] == "overall" and r.get("display") is not None
    ]
    fig, ax = plt.subplots(figsize=(6, 0.4 * max(len(rows), 1) + 1))
    for i, r in enumerate(rows):
        ax.errorbar(
            r["display"],
            i,
            xerr=[[r["display"] - r["display_low"]], [r["display_high"] - r["display"]]],
            fmt="o",
            color="#2f6f8f",
        )
    ax.set_yticks(range(len(rows)), [f"{r['model']} {r['language']}" for r in rows])
    ax.set_title("Ratings with 95% intervals")
    return fig


def _bradley_terry(report: dict) -> plt.Figure:
    rows = bradley_terry_intervals(report)
    fig, ax = plt.subplots(figsize=(6, 0.4 * max(len(rows), 1) + 1))
    for i, (_label, elo, low, high) in enumerate(rows):
        ax.errorbar(elo, i, xerr=[[elo - low], [high - elo]], fmt="o", color="#2f6f8f")
    ax.set_yticks(range(len(rows)), [label for label, *_ in rows])
    ax.set_title("Bradley-Terry strengths (Elo scale), 95% bootstrap intervals")
    return fig


FIGURES = {"scatter": _scatter, "delta_z": _delta, "ratings": _ratings, "bradley_terry": _bradley_terry}


def raster_files(report: dict) -> dict[str, bytes]:
    """Return ``<figure>.png`` and ``<figure>.pdf`` for each figure."""
    files = {}
    for name, draw in FIGURES.items():
        for fmt in ("png", "pdf"):
            files[f"{name}.{fmt}"] = _save(draw(report), fmt)
    return files
