"""SVG figures of an evaluation report, drawn directly (no plotting library, no external assets)."""

from xml.sax.saxutils import escape

PALETTE = ["#2f6f8f", "#a55a00", "#2e7d4f", "#8e3b8e", "#b3261e", "#5f6b7a", "#c28f00", "#1f4e79", "#6a8f2f", "#7a4b2f"]


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(label)}" font-family="system-ui, sans-serif" font-size="12">'
        + "".join(body)
        + "</svg>"
    )


def scatter(points: list[dict], *, x_label: str, y_label: str, title: str) -> str:
    """Objective accuracy (x) against subjective rating (y), one labelled point per model and language."""
    width, height, pad = 560, 380, 50
    if not points:
        return _svg(width, 60, ['<text x="10" y="30">no data</text>'], title)
    xs, ys = [p["x"] for p in points], [p["y"] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)

    def px(v: float) -> float:
        return pad + (v - x0) / (x1 - x0) * (width - 2 * pad)

    def py(v: float) -> float:
        return height - pad - (v - y0) / (y1 - y0) * (height - 2 * pad)

    body = [
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#888"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
        f'text-anchor="middle">{escape(y_label)}</text>',
        f'<text x="{pad}" y="{pad - 20}" font-weight="600">{escape(title)}</text>',
        f'<text x="{pad}" y="{height - pad + 16}" fill="#555">{x0:.2f}</text>',
        f'<text x="{width - pad}" y="{height - pad + 16}" text-anchor="end" fill="#555">{x1:.2f}</text>',
        f'<text x="{pad - 6}" y="{height - pad}" text-anchor="end" fill="#555">{y0:.0f}</text>',
        f'<text x="{pad - 6}" y="{pad + 4}" text-anchor="end" fill="#555">{y1:.0f}</text>',
    ]
    for i, p in enumerate(points):
        colour = PALETTE[i % len(PALETTE)]
        body.append(f'<circle cx="{px(p["x"]):.1f}" cy="{py(p["y"]):.1f}" r="5" fill="{colour}"/>')
        body.append(f'<text x="{px(p["x"]) + 7:.1f}" y="{py(p["y"]) + 4:.1f}">{escape(p["label"])}</text>')
    return _svg(width, height, body, title)


def bars(values: list[tuple[str, float]], *, title: str) -> str:
    """Horizontal bars around zero (for ΔZ)."""
    width, row = 560, 22
    height = 40 + row * max(len(values), 1)
    top = 30
    limit = max([abs(v) for _, v in values] + [1.0])
    mid = 280

    def span(v: float) -> float:
        return v / limit * 200

    body = [
        f'<text x="10" y="18" font-weight="600">{escape(title)}</text>',
        f'<line x1="{mid}" y1="{top - 4}" x2="{mid}" y2="{height - 6}" stroke="#888"/>',
    ]
    for i, (label, value) in enumerate(values):
        y = top + i * row
        x = mid if value >= 0 else mid + span(value)
        colour = "#2e7d4f" if value >= 0 else "#a55a00"
        body.append(f'<rect x="{x:.1f}" y="{y}" width="{abs(span(value)):.1f}" height="{row - 6}" fill="{colour}"/>')
        body.append(f'<text x="10" y="{y + 12}">{escape(label)}</text>')
        body.append(f'<text x="{width - 10}" y="{y + 12}" text-anchor="end">{value:+.2f}</text>')
    return _svg(width, height, body, title)


def heatmap(
    rows: list[str], cols: list[str], values: dict[tuple[str, str], float | None], *, title: str, fmt: str = "{:.2f}"
) -> str:
    """A table of coloured cells (value 0..1 mapped to white..blue; None grey)."""
    cell_w, cell_h, left, top = 70, 24, 170, 60
    width, height = left + cell_w * len(cols) + 10, top + cell_h * len(rows) + 10
    finite = [v for v in values.values() if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    hi = hi if hi > lo else lo + 1
    body = [f'<text x="10" y="18" font-weight="600">{escape(title)}</text>']
    for j, col in enumerate(cols):
        body.append(
            f'<text x="{left + j * cell_w + cell_w / 2}" y="{top - 8}" text-anchor="middle" '
            f'font-size="11">{escape(col)}</text>'
        )
    for i, row in enumerate(rows):
        body.append(f'<text x="10" y="{top + i * cell_h + 16}">{escape(row)}</text>')
        for j, col in enumerate(cols):
            value = values.get((row, col))
            if value is None:
                fill, text = "#eeeeee", "—"
            else:
                t = (value - lo) / (hi - lo)
                shade = int(245 - 150 * t)
                fill, text = f"rgb({shade},{shade + 5 if shade < 250 else 250},250)", fmt.format(value)
            x, y = left + j * cell_w, top + i * cell_h
            body.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}"/>')
            body.append(f'<text x="{x + cell_w / 2}" y="{y + 16}" text-anchor="middle">{text}</text>')
    return _svg(width, height, body, title)


def intervals(rows: list[tuple[str, float, float, float]], *, title: str) -> str:
    """Points with intervals (rating mu with ±2 sigma)."""
    width, row, left = 560, 22, 170
    height = 40 + row * max(len(rows), 1)
    if not rows:
        return _svg(width, 60, ['<text x="10" y="30">no data</text>'], title)
    lo = min(r[2] for r in rows)
    hi = max(r[3] for r in rows)
    hi = hi if hi > lo else lo + 1

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - left - 20)

    body = [f'<text x="10" y="18" font-weight="600">{escape(title)}</text>']
    for i, (label, mid, low, high) in enumerate(rows):
        y = 34 + i * row
        body.append(f'<text x="10" y="{y + 4}">{escape(label)}</text>')
        body.append(f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" stroke="#2f6f8f" stroke-width="2"/>')
        body.append(f'<circle cx="{x(mid):.1f}" cy="{y}" r="4" fill="#2f6f8f"><title>{mid:.1f}</title></circle>')
    return _svg(width, height, body, title)


def figures(report: dict) -> dict[str, str]:
    """Return every figure of a report as SVG text, by file name."""
    result = {}
    scatter_points = []
    for row in report.get("analysis", {}).get("standing", []):
        if row.get("accuracy") is not None and row.get("rating") is not None:
            scatter_points.append(
                {"x": row["accuracy"], "y": row["rating"], "label": f"{row['model']} {row['language']}"}
            )
    result["scatter.svg"] = scatter(
        scatter_points, x_label="objective accuracy", y_label="subjective rating", title="Perception vs interaction"
    )
    result["delta_z.svg"] = bars(
        [
            (f"{r['model']} {r['language']}", r["delta"])
            for r in report.get("analysis", {}).get("delta_z", [])
            if r.get("delta") is not None
        ],
        title="ΔZ = Z(subjective) − Z(objective)",
    )
    accuracy = [r for r in report.get("objective", {}).get("accuracy", [])]
    models = sorted({r["model"] for r in accuracy})
    dims = sorted({r["dimension"] for r in accuracy})
    for lang in report.get("languages", []):
        values = {(r["model"], r["dimension"]): r["accuracy"] for r in accuracy if r["language"] == lang}
        if values:
            result[f"accuracy_{lang}.svg"] = heatmap(models, dims, values, title=f"Accuracy by dimension ({lang})")
    ratings = [r for r in report.get("subjective", {}).get("ratings", []) if r["dimension"] == "overall"]
    result["ratings.svg"] = intervals(
        [(f"{r['model']} {r['language']}", r["display"], r["display_low"], r["display_high"]) for r in ratings],
        title="Ratings with ±2σ",
    )
    result["bradley_terry.svg"] = intervals(
        bradley_terry_intervals(report), title="Bradley-Terry strengths (Elo scale) with 95% bootstrap intervals"
    )
    return result


def bradley_terry_intervals(report: dict) -> list[tuple[str, float, float, float]]:
    """Return (label, Elo, low, high) per model and language; an unbounded side is drawn to the edge and marked."""
    rows = [r for r in report.get("subjective", {}).get("bradley_terry", []) if r.get("elo") is not None]
    bounds = [v for r in rows for v in (r["elo"], r["elo_low"], r["elo_high"]) if v is not None]
    if not bounds:
        return []
    edge_low, edge_high = min(bounds), max(bounds)
    drawn = []
    for r in rows:
        label = f"{r['model']} {r['language']}"
        if r["elo_low"] is None or r["elo_high"] is None:
            label += " (∞)"
        low = edge_low if r["elo_low"] is None else r["elo_low"]
        high = edge_high if r["elo_high"] is None else r["elo_high"]
        drawn.append((label, r["elo"], low, high))
    return drawn
