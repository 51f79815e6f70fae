import json
import pytest
from tests.browser.test_item_edit import sign_in
from tests.core.test_blindness import study  # noqa: F401
from evaluation.models import EvaluationRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROBE = """() => {
  const w = window.innerWidth; const out = [];
  function clipped(e) { for (let p = e.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o !== 'visible') return true; } return false; }
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.left + e.scrollWidth > w + 1 && getComputedStyle(e).overflowX === 'visible' && !clipped(e)) out.push(e.scrollWidth + ' ' + e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(r.left) + '-' + Math.round(r.right) + ' ' + getComputedStyle(e).position + ' ' + e.outerHTML.slice(0, 200));
  }
  return [document.scrollingElement.scrollWidth, out.slice(0, 12)];
}"""

def test_probe(browser, live_server, study):
    user = study["admin"]
    ctx = browser.new_context(viewport={"width": 390, "height": 800})
    page = ctx.new_page()
    sign_in(page, live_server, user)
    res = {}
    ev = EvaluationRun.objects.exclude(report=None).first().pk
    for url in ["/releases/facet/3.0.0/", f"/evaluation/{ev}/"]:
        page.goto(f"{live_server.url}{url}")
        res[url] = page.evaluate(PROBE)
    json.dump(res, open("/tmp/dayone/probe3.json", "w"), indent=1, ensure_ascii=False)
