"""Report pages fit the window: no horizontal scroll at 1280 and 1920 px, in English and in Chinese, and every
figure is drawn within its card (the evaluation report, its drill-down and the calibration report).

``REPORT_SCREENSHOTS=<dir>`` saves a full-page screenshot of each page, width and language there.
"""

import os
from pathlib import Path

import pytest

from calibration.models import CalibrationRun
from core.models import UserProfile
from tests.browser.test_evaluation_report import finished_run
from tests.browser.test_item_edit import sign_in
from tests.evaluation.conftest import frozen_release, primary  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 1920)
OVERFLOW = """() => {
  const page = document.documentElement;
  const figures = [...document.querySelectorAll('.report-figure img')].map(img => {
    const card = img.closest('.card').getBoundingClientRect();
    const box = img.getBoundingClientRect();
    return {src: img.alt, loaded: img.complete && img.naturalWidth > 0, inside: box.right <= card.right + 0.5
            && box.left >= card.left - 0.5, width: box.width};
  });
  return {scroll: page.scrollWidth, client: page.clientWidth, figures};
}"""


def test_report_pages_have_no_horizontal_scroll_in_english_and_chinese(
    page, live_server, frozen_release, primary, make_endpoint, researcher  # noqa: F811  (fixtures imported above)
):
    run = finished_run(
        name="layout", release=frozen_release, make_endpoint=make_endpoint, user=researcher, timeout=180
    )
    calibration = CalibrationRun.objects.filter(report__isnull=False).first()
    assert calibration is not None, "the primary-judge fixture computes a calibration report"
    pages = [
        f"/evaluation/{run.pk}/",
        f"/evaluation/{run.pk}/drill/?model=M01&language=en",
        f"/calibration/runs/{calibration.pk}/",
    ]
    sign_in(page, live_server, researcher)
    for language in ("en", "zh-hans"):
        UserProfile.objects.update_or_create(user=researcher, defaults={"language": language})
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            for path in pages:
                page.goto(f"{live_server.url}{path}")
                assert page.locator("html").get_attribute("lang") == language
                # Lazy figures load when near the viewport: bring each one there (a jump to the bottom skips the
                # middle ones), then wait until every one has finished loading, drawn or broken.
                for figure in page.locator(".report-figure img").all():
                    figure.scroll_into_view_if_needed()
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.report-figure img')].every(i => i.complete)",
                    timeout=180_000,
                )
                found = page.evaluate(OVERFLOW)
                if os.environ.get("REPORT_SCREENSHOTS"):
                    name = f"{path.strip('/').split('?')[0].replace('/', '-')}-{width}-{language}.png"
                    page.screenshot(path=str(Path(os.environ["REPORT_SCREENSHOTS"]) / name), full_page=True)
                where = f"{path} at {width} px in {language}"
                assert found["scroll"] <= found["client"], f"{where}: page {found['scroll']} px wide"
                if "drill" not in path:
                    assert found["figures"], f"{where}: no figure"
                for figure in found["figures"]:
                    assert figure["loaded"], f"{where}: {figure['src']} not shown"
                    assert figure["inside"] and figure["width"] > 200, f"{where}: {figure}"
