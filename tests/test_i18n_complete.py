"""Every page, report, figure and error message is complete in Chinese: no English interface word is left.

The study of the blindness audit (responses, comparison sets, labels, a calibration run and an evaluation run) is
built, then every route of the resolver is crawled as each role with the interface in Chinese, following the links
pages offer (drill-downs, reports, the next item). On every HTML answer the text a user reads (text nodes and
visible attributes) is taken, the data it shows (item text, names, codes, usernames: every text value stored in the
database) is cut out, and any English word left, other than a short list of technical terms, fails the test. The
figures of the reports are drawn in Chinese and their texts checked the same way, and so are the error messages of
a bad import.

Run with ``PRINT_UNTRANSLATED=1`` to print every English text found (grouped, with the pages it is on) instead of
only the first ones. ``I18N_LOCALE_PATHS`` (a path list separated by ``:``) points the test at a temporary compiled
catalogue, to check translations before they are merged into ``locale/``.
"""

import html
import json
import logging
import os
import re
from collections import defaultdict, deque
from html.parser import HTMLParser

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import translation
from django.utils.translation import trans_real

from core.models import UserProfile
from tests.core import crawl
from tests.core.test_blindness import study  # noqa: F401  (the fixture, shared)

# Technical terms and abbreviations a Chinese interface keeps in Latin letters.
ALLOWED = {
    "API", "JSON", "JSONL", "CSV", "TSV", "PDF", "PNG", "SVG", "LaTeX", "URL", "HTTP", "HTTPS", "ID", "LLM", "AI",
    "TrueSkill", "Elo", "Bradley", "Terry", "Krippendorff", "Fleiss", "Cohen", "Kendall", "Spearman", "Wilson",
    "Benjamini", "Hochberg", "EQ", "Bench", "MCQ", "OpenAI", "EN", "ZH", "English", "SHA", "UTC", "CI",
    "htmx", "pk", "uid", "kappa", "alpha", "tau", "mu", "sigma", "AB", "BA", "vs", "min", "max", "ms", "Token",
    "tokens", "token", "RPM", "TPM", "JS", "UUID", "Markdown", "md", "txt", "zip", "tex", "json", "csv", "jsonl",
    "Web", "Django", "Schema", "Ctrl", "Enter", "Esc", "Tab", "Shift", "chat", "completions", "Verga", "et", "al",
    "en", "zh",  # language codes
    "eistudio", "emobench", "EmoBench", "Sabour", "ACL",  # import formats and the benchmark they come from
}
# Text that is a name, an address, a command or an identifier in every language: cut out before looking for words.
LITERAL_PATTERNS = [
    re.compile(r"EI Studio"),
    re.compile(r"Label Studio"),  # the annotation tool a set is exchanged with
    re.compile(r"https?://\S+"),
    re.compile(r"python manage\.py \S+(?: [A-Z_]+)*"),
    re.compile(r"\b\w+(?:\.\w+)+\b"),  # dotted names: llm.run_llm, config.settings
    re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"),  # setting and variable names: OPENAI_API_KEY
]
ROLES = ("admin", "lead_expert", "expert", "researcher")
URLS_PER_ROUTE = 3
FORBIDDEN_PER_ROUTE = 1
# Text of these elements is code or data in every language.
LITERAL_TAGS = {"code", "kbd", "samp", "pre", "script", "style", "textarea", "svg"}
VISIBLE_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt", "label", "hx-confirm", "hx-prompt"}
LATIN_WORD = re.compile(r"(?<![\w./:@#-])[A-Za-z][a-z]*(?:'[a-z]+)?(?![\w/@-])")
SHORTEST_DATA = 3


class VisibleText(HTMLParser):
    """Collect the text nodes and visible attributes a user reads, leaving out code and data elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in LITERAL_TAGS:
            self.skip += 1
        for name, value in attrs:
            if value and (name in VISIBLE_ATTRIBUTES or (name == "value" and tag == "button")):
                self.texts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in LITERAL_TAGS and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.texts.append(data.strip())


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def data_strings() -> list[str]:
    """Return every text value stored in the project's tables (and usernames), longest first."""
    found: set[str] = set()
    text_fields = (models.CharField, models.TextField, models.JSONField, models.SlugField)
    for label in crawl.PROJECT_APPS:
        for model in apps.get_app_config(label).get_models():
            fields = [f.name for f in model._meta.concrete_fields if isinstance(f, text_fields)]
            if not fields:
                continue
            for row in model._default_manager.values_list(*fields)[:2000]:
                for value in row:
                    for text in _strings(value):
                        # Pages break long texts into lines (linebreaksbr) and lists: each line is data too.
                        found.update(line.strip(" -*•\t") for line in [text, *text.splitlines()])
    found.update(get_user_model().objects.values_list("username", flat=True))
    return sorted((s for s in found if len(s) >= SHORTEST_DATA), key=len, reverse=True)


def english_words(text: str, data: list[str]) -> list[str]:
    """Return the English words of a text a user reads, after cutting out stored data and technical terms."""
    text = html.unescape(text)
    if text.endswith(("…", "...")):  # a truncated data value
        return []
    for pattern in LITERAL_PATTERNS:
        text = pattern.sub(" ", text)
    for value in data:
        if value in text:
            text = text.replace(value, " ")
    words = [w.split("'")[0] for w in LATIN_WORD.findall(text)]
    return [w for w in words if len(w) > 1 and w not in ALLOWED and w.lower() not in ALLOWED]


def page_findings(body: str, data: list[str]) -> list[str]:
    """Return the texts of a page that still hold English words, each as the text itself."""
    parser = VisibleText()
    parser.feed(body)
    return [text for text in parser.texts if english_words(text, data)]


@pytest.fixture
def chinese_catalogue(settings):
    """Use the locale paths of ``I18N_LOCALE_PATHS`` when given (a temporary compiled catalogue)."""
    extra = os.environ.get("I18N_LOCALE_PATHS")
    if extra:
        settings.LOCALE_PATHS = [*extra.split(":"), *settings.LOCALE_PATHS]
        trans_real._translations = {}
        trans_real._default = None
        translation.activate("zh-hans")
    yield
    if extra:
        trans_real._translations = {}
        trans_real._default = None
    translation.deactivate()


def _report(findings: dict[str, set[str]], what: str, data: list[str]) -> str:
    lines = [f"{len(findings)} English texts {what}:"]
    for text, where in sorted(findings.items()):
        words = " ".join(english_words(text, data))
        lines.append(f"  {text!r}  [{words}]  ({len(where)}x, e.g. {sorted(where)[0]})")
    return "\n".join(lines)


def crawl_in_chinese(client: object, user: object, table: dict, starts: list, data: list[str]) -> dict[str, set[str]]:
    """Crawl breadth first as ``user`` in Chinese; return each English text found with the URLs it is on."""
    from tests.core.test_blindness import may_use, requirement

    UserProfile.objects.update_or_create(user=user, defaults={"language": "zh-hans"})
    client.force_login(user)
    client.raise_request_exception = False
    queue: deque = deque()
    seen: set = set()
    per_route: dict[str, int] = defaultdict(int)
    findings: dict[str, set[str]] = defaultdict(set)

    def enqueue(link: crawl.Link) -> None:
        route = crawl.route_of(link.url, table)
        if route is None or (link.url, link.htmx) in seen or route.name.startswith("admin:"):
            return
        needed = requirement(route)
        allowed = needed is None or may_use(user, needed)
        if per_route[route.key] >= (URLS_PER_ROUTE if allowed else FORBIDDEN_PER_ROUTE):
            return
        seen.add((link.url, link.htmx))
        per_route[route.key] += 1
        queue.append(link)

    for link in starts:
        enqueue(link)
    while queue:
        link = queue.popleft()
        response = client.get(link.url, headers={"HX-Request": "true"} if link.htmx else {})
        if response.status_code >= 500:
            findings[f"HTTP {response.status_code}"].add(link.url)
            continue
        for new in crawl.links(link.url, response):
            enqueue(new)
        content_type = response.get("Content-Type", "")
        if content_type.startswith("text/html"):
            for text in page_findings(response.content.decode("utf-8", "replace"), data):
                findings[text].add(link.url)
        elif content_type.startswith("application/json") and response.status_code >= 400:
            detail = crawl.json_detail(response)
            if detail and english_words(detail, data):
                findings[detail].add(link.url)
    return findings


def test_every_page_reads_in_chinese_for_every_role(study, client, caplog, chinese_catalogue):  # noqa: F811
    caplog.set_level(logging.ERROR, logger="django.request")
    routes = crawl.routes()
    table = crawl.route_table(routes)
    data = data_strings()
    seeds = [crawl.Link(url) for route in routes for url in crawl.seed_urls(route, table)]
    findings: dict[str, set[str]] = defaultdict(set)
    for role in ROLES:
        for text, where in crawl_in_chinese(client, study[role], table, seeds, data).items():
            findings[text] |= {f"{role} {url}" for url in where}
    message = _report(findings, "left on pages in Chinese", data)
    if os.environ.get("PRINT_UNTRANSLATED"):
        print("\n" + message)
    assert not findings, message if len(findings) < 60 else message[:6000] + "\n…(PRINT_UNTRANSLATED=1 for all)"


def _figure_texts(fig: object) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def test_report_figures_are_drawn_in_chinese(study, chinese_catalogue):  # noqa: F811
    from calibration.charts import dimension_names as calibration_names
    from calibration.charts import forest_plot
    from calibration.models import CalibrationRun
    from core.figures import draw
    from evaluation.charts import figure_builders
    from evaluation.models import EvaluationRun
    from evaluation.report.files import dimension_names

    data = data_strings()
    findings: dict[str, set[str]] = defaultdict(set)
    with translation.override("zh-hans"):
        for run in EvaluationRun.objects.filter(report__isnull=False):
            for stem, build in figure_builders(run.report, dimension_names(run, run.report)).items():
                for text in _figure_texts(draw(build)):
                    if english_words(text, data):
                        findings[text].add(stem)
        for run in CalibrationRun.objects.filter(report__isnull=False):
            fig = draw(lambda run=run: forest_plot(run.report, calibration_names(run.report)))
            for text in _figure_texts(fig):
                if english_words(text, data):
                    findings[text].add("alpha")
    assert EvaluationRun.objects.filter(report__isnull=False).exists()
    assert CalibrationRun.objects.filter(report__isnull=False).exists()
    message = _report(findings, "left in figures drawn in Chinese", data)
    if os.environ.get("PRINT_UNTRANSLATED"):
        print("\n" + message)
    assert not findings, message


def test_import_errors_read_in_chinese(study, client, chinese_catalogue):  # noqa: F811
    """A bad response import, a bad label import and a bad item import name the fault in Chinese."""
    user = study["researcher"]
    UserProfile.objects.update_or_create(user=user, defaults={"language": "zh-hans"})
    client.force_login(user)
    data = data_strings()
    bad_lines = {
        "not json": b"{not json\n",
        "missing fields": json.dumps({"item": "blind-open-1"}).encode() + b"\n",
        "unknown item": json.dumps({"item": "nope", "language": "en", "model": "m", "text": "t"}).encode() + b"\n",
    }
    from annotation.labelling import services as labelling
    from core.errors import ServiceError

    findings: dict[str, set[str]] = defaultdict(set)
    with translation.override("zh-hans"):
        for case, payload in bad_lines.items():
            try:
                labelling.responses_import(data=payload, user=user)
            except (ServiceError, ValueError) as exc:
                messages = getattr(exc, "messages", None) or [str(exc)]
                for message in messages:
                    # The file's own field names are data: they are what the file says, in every language.
                    message = re.sub(r"\b(item|language|model|text|file|line)\b(?=[:：])", " ", message)
                    message = re.sub(r"'[^']*'", " ", message)  # the file's own values, quoted
                    if english_words(message, data):
                        findings[message].add(case)
            else:
                pytest.fail(f"the import of {case} was accepted")
    message = _report(findings, "left in import errors in Chinese", [])
    if os.environ.get("PRINT_UNTRANSLATED"):
        print("\n" + message)
    assert not findings, message
