"""SVG figures for the calibration report (no plotting library, no external assets)."""

from xml.sax.saxutils import escape


def forest_plot_svg(report: dict, *, width: int = 640) -> str:
    """Draw alpha with its interval for the experts' baseline and each judge, per stratum."""
    rows = []
    for stratum in report.get("strata", []):
        base = stratum["baseline"]["alpha_ordinal"]
        rows.append((stratum["label"], "experts", base))
        for name, row in stratum["judges"].items():
            rows.append((stratum["label"], name, row["alpha_with_judge"]))
    left, right, top, step = 230, 30, 30, 22
    height = top + step * len(rows) + 30
    span = width - left - right

    def x(value: float) -> float:
        clipped = max(-0.2, min(1.0, value))
        return left + (clipped + 0.2) / 1.2 * span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="forest plot of alpha" font-family="system-ui, sans-serif" font-size="12">',
        f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{height - 25}" '
        'stroke="#bbb" stroke-dasharray="3,3"/>',
    ]
    for tick in (-0.2, 0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 8}" text-anchor="middle" fill="#555">{tick:.1f}</text>')
    for i, (stratum, rater, estimate) in enumerate(rows):
        y = top + i * step
        colour = "#2f6f8f" if rater != "experts" else "#a55a00"
        parts.append(f'<text x="8" y="{y + 4}" fill="#333">{escape(stratum)} · {escape(rater)}</text>')
        value = estimate.get("value")
        if value is None:
            parts.append(f'<text x="{left}" y="{y + 4}" fill="#999">undefined</text>')
            continue
        low, high = estimate.get("ci_low"), estimate.get("ci_high")
        if low is not None and high is not None:
            parts.append(
                f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
            )
        parts.append(f'<circle cx="{x(value):.1f}" cy="{y}" r="4" fill="{colour}"><title>{value:.3f}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)
