"""Evaluation report figures: drawn once with matplotlib as SVG (shown in the page), PNG and PDF (downloads), with
reproducible bytes, readable names in the page's language, an accuracy heatmap per language in every format, and a
cache so that a finished report's page does not redraw them."""

import base64
import re
import time

from django.core.cache import cache
from django.utils import translation

from evaluation.charts import figures
from evaluation.report.files import report_files_names
from tests.factories import make_evaluation_run


def _run(frozen_release, make_endpoint, researcher):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    return make_evaluation_run(
        name="figures", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )


def test_figures_render_to_the_same_bytes_twice_in_every_format(frozen_release, primary, make_endpoint, researcher):
    run = _run(frozen_release, make_endpoint, researcher)
    first, second = figures(run.report, {}), figures(run.report, {})
    assert first == second
    stems = {name.rsplit(".", 1)[0] for name in first}
    assert {"scatter", "delta_z", "ratings", "bradley_terry", "accuracy_en"} <= stems
    for stem in stems:
        svg, png, pdf = first[f"{stem}.svg"], first[f"{stem}.png"], first[f"{stem}.pdf"]
        assert b"viewBox" in svg and png.startswith(b"\x89PNG") and pdf.startswith(b"%PDF")
        assert b"<dc:date>" not in svg and b"CreationDate" not in pdf
    # The accuracy heatmap is offered as PNG and PDF too.
    assert {"accuracy_en.png", "accuracy_en.pdf"} <= set(report_files_names(["en"]))


def test_page_shows_scaled_figures_with_names_and_downloads_every_format(
    frozen_release, primary, make_endpoint, researcher, login
):
    run = _run(frozen_release, make_endpoint, researcher)
    client = login(researcher)
    cache.clear()
    html = client.get(f"/evaluation/{run.pk}/").content.decode()
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)" alt="([^"]+)"', html)
    assert len(images) >= 5
    assert "<svg" not in html, "no inline SVG: its style attributes would break the CSP"
    heatmap = next(base64.b64decode(uri) for uri, alt in images if "Accuracy by dimension" in alt)
    downloaded = client.get(f"/evaluation/{run.pk}/files/accuracy_en.svg").content
    assert downloaded == heatmap
    for fmt, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF")):
        assert client.get(f"/evaluation/{run.pk}/files/accuracy_en.{fmt}").content.startswith(magic)
    # The dimensions are named, the language spelled out, the typology in words.
    assert "English" in html
    accuracy_table = html.split('id="accuracy"', 1)[1].split("</table>")[0]
    assert "emotion_" not in re.sub(r'href="[^"]*"', "", accuracy_table)


def test_figures_follow_the_page_language_and_draw_chinese_text(frozen_release, primary, make_endpoint, researcher):
    run = _run(frozen_release, make_endpoint, researcher)
    with translation.override("zh"):
        files = figures(run.report, {row["dimension"]: "情绪识别" for row in run.report["objective"]["accuracy"]})
    pdf = files["accuracy_en.pdf"]
    assert b"NotoSansCJK" in pdf and b"FontFile2" in pdf, "CJK glyphs embedded as a TrueType subset"
    english = figures(run.report, {})["accuracy_en.pdf"]
    assert b"NotoSansCJK" not in english


def test_a_finished_report_page_reads_its_figures_from_the_cache(
    frozen_release, primary, make_endpoint, researcher, login
):
    run = _run(frozen_release, make_endpoint, researcher)
    client = login(researcher)
    cache.clear()
    start = time.perf_counter()
    first = client.get(f"/evaluation/{run.pk}/").content
    cold = time.perf_counter() - start
    start = time.perf_counter()
    second = client.get(f"/evaluation/{run.pk}/").content
    warm = time.perf_counter() - start
    images = re.compile(rb'<img src="data:image/svg[^"]+"')
    assert images.findall(first) == images.findall(second)
    print(f"report page: first view {cold:.3f} s (figures drawn), next view {warm:.3f} s (figures from the cache)")
    assert warm < cold / 3, f"cached page {warm:.3f}s, first view {cold:.3f}s"


def test_stored_english_notes_codes_and_answer_indices_read_as_words_in_the_page_language():
    from evaluation.templatetags.report_text import answer_letter, report_note, typology

    assert [answer_letter(i) for i in (0, 1, 2, None)] == ["A", "B", "C", "—"]
    note = "Bradley-Terry (en): the models fall into groups that were never compared with each other."
    assert report_note(note) == note.replace("(en)", "(English)")
    assert report_note("ΔZ zh objective: every model has the same score") == (
        "ΔZ, Chinese, objective scores: every model has the same score"
    )
    assert report_note("3 objective answers could not be parsed and count as wrong.") == (
        "3 objective answers could not be parsed and count as wrong."
    )
    assert typology("context-dependent") == "context-dependent" and typology(None) == "—"
    with translation.override("zh-hans"):
        assert report_note(note) == "Bradley-Terry（英文）：模型分成了彼此从未比较过的几组。"
        assert "英文" in report_note("ΔZ en subjective: needs at least two models")
        assert report_note("an unknown note") == "an unknown note"
