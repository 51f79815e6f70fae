"""The calibration report's alpha figure: drawn once with matplotlib, shown scaled in the page, downloadable as
SVG, PNG and PDF with the same bytes every time, in English and Chinese; the page's tables say what they count."""

import base64
import re

from django.core.cache import cache
from django.utils import translation

from calibration.charts import forest_plot
from core.figures import figure_files
from tests.factories import make_calibration_run


def _run(labelled_set, make_endpoint, researcher):
    return make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2")},
        name="figures",
        combine_rule="summed",
        user=researcher,
        bootstrap=50,
    )


def test_alpha_figure_is_an_image_in_the_page_and_downloads_in_three_reproducible_formats(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    run = _run(labelled_set, make_endpoint, researcher)
    client = login(researcher)
    html = client.get(f"/calibration/runs/{run.pk}/").content.decode()
    uri = re.search(r'<img src="data:image/svg\+xml;base64,([^"]+)" alt="([^"]+)"', html)
    assert uri and "alpha" in uri[2]
    svg = base64.b64decode(uri[1])
    assert b"viewBox" in svg and b"<svg" in svg
    assert "<svg" not in html, "no inline SVG: its style attributes would break the CSP"
    downloads = {fmt: client.get(f"/calibration/runs/{run.pk}/report.{fmt}") for fmt in ("svg", "png", "pdf")}
    assert downloads["svg"].content == svg
    assert downloads["png"].content.startswith(b"\x89PNG") and downloads["png"]["Content-Type"] == "image/png"
    assert downloads["pdf"].content.startswith(b"%PDF") and b"CreationDate" not in downloads["pdf"].content
    # Reproducible bytes: drawn again from nothing, the same files.
    cache.clear()
    again = {fmt: client.get(f"/calibration/runs/{run.pk}/report.{fmt}").content for fmt in ("svg", "png", "pdf")}
    assert again == {fmt: r.content for fmt, r in downloads.items()}


def test_alpha_figure_and_tables_use_names_and_headers_in_chinese(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    run = _run(labelled_set, make_endpoint, researcher)
    client = login(researcher)
    html = client.get(f"/calibration/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    # The confusion matrices have row and column headers.
    assert html.count('<th scope="row">') >= 3 and "B wins" in html and "A wins" in html
    # A dimension stratum is shown by its name, not its code.
    assert "emotion_matching" not in re.sub(r'href="[^"]*"', "", html)
    with translation.override("zh"):
        files = figure_files("alpha", lambda: forest_plot(run.report, {"emotion_matching": "情绪匹配"}))
    assert files["alpha.pdf"].startswith(b"%PDF")
    # The Chinese name is drawn with the CJK font, embedded as a TrueType subset (Type 42) in the PDF.
    assert b"NotoSansCJK" in files["alpha.pdf"] and b"FontFile2" in files["alpha.pdf"]


def _report(values: list[tuple[float, float, float]]) -> dict:
    """A report with one stratum: the experts' alpha, then one judge per further value."""
    estimate = [{"value": v, "ci_low": low, "ci_high": high} for v, low, high in values]
    return {
        "strata": [
            {
                "key": "overall",
                "baseline": {"alpha_ordinal": estimate[0]},
                "judges": {f"judge {n}": {"alpha_with_judge": e} for n, e in enumerate(estimate[1:], 1)},
            }
        ]
    }


def test_the_alpha_axis_fits_every_estimate_and_interval_and_clamps_none():
    from calibration.charts import axis_range, wrapped

    assert axis_range([0.3, 0.9]) == (-0.2, 1.0 + 0.04 * 1.2)
    fig = forest_plot(_report([(0.71, 0.6, 0.8), (-0.267, -0.55, 0.02)]), {})
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert low < -0.55 and high >= 1.0
    drawn_x = {round(float(x), 3) for line in ax.get_lines() for x in line.get_xdata()}
    assert {-0.267, -0.55, 0.71} <= drawn_x, "each estimate and bound drawn where it is, not at the edge"
    # Title and label are broken into lines that fit the figure, in either language.
    assert "\n" in ax.get_xlabel() and all(len(line) <= 72 for line in ax.get_xlabel().splitlines())
    assert all(
        len(line) <= 29
        for line in wrapped("克里彭多夫阿尔法系数（有序）及其百分之九十五置信区间，虚线为零点六六七", 58).splitlines()
    )
