"""The interface is complete in English and Simplified Chinese.

Templates hold no untranslated user-visible text, every template and Python message has a Chinese translation
with the same placeholders, the compiled catalogue matches its source, and a user's language choice sticks.
"""

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import polib
from django.conf import settings
from django.template.base import DebugLexer, Lexer, TokenType
from django.template.utils import get_app_template_dirs
from django.test import Client
from django.utils import translation
from django.utils.translation import trim_whitespace

from annotation.items.models import Benchmark, Dimension
from core.models import UserProfile
from tests.factories import PASSWORD, make_item

ROOT = Path(settings.BASE_DIR)
LOCALE_DIR = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
PO_PATH = LOCALE_DIR / "django.po"
MO_PATH = LOCALE_DIR / "django.mo"
SKIPPED_DIRS = {".venv", "venv", "node_modules", "tests", "locale", "staticfiles", "__pycache__"}

# Words that may appear untranslated: language names shown in their own language and language badges.
ALLOWED_WORDS = {"EN", "ZH", "English", "中文", "简体中文"}
# Attributes whose text a user reads or hears; ``value`` counts only on buttons (see _visible_attributes).
VISIBLE_ATTRIBUTES = {
    "title",
    "placeholder",
    "aria-label",
    "aria-description",
    "aria-roledescription",
    "aria-valuetext",
    "alt",
    "label",
    "hx-confirm",
    "hx-prompt",
}
BUTTON_INPUT_TYPES = {"submit", "button", "reset"}
# Elements whose text is code, data formats or key names, identical in every language.
LITERAL_TAGS = {"code", "kbd", "samp"}
# A "word": a run of two or more Latin letters, or any run of CJK ideographs.
WORD_RE = re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏ]{2,}|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
ENTITY_RE = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
# Literals a variable prints: {{ "text" }}, {{ x|default:"none" }} ({% firstof %} is checked on its own).
PRINTED_LITERAL_RE = re.compile(r"""(?:\|\s*(?:default|default_if_none|yesno)\s*:\s*|^\s*)("[^"]*"|'[^']*')""")
TRANSLATE_TAG_RE = re.compile(
    r"""\{%\s*trans(?:late)?\s+("[^"]*"|'[^']*')"""  # the literal
    r"""(?:\s*\|\s*[^\s:]+(?::(?:[^\s'":]+|"[^"]*"|'[^']*'))?)*"""  # optional filters
    r"""(?:\s+[^%]*?context\s+("[^"]*"|'[^']*'))?[^%]*%\}"""  # optional context
)
CONSTANT_RE = re.compile(r"""_\(\s*("[^"]*"|'[^']*')\s*\)""")
BLOCK_START_RE = re.compile(r"""^\s*blocktrans(?:late)?(?:\s+.*context\s+("[^"]*"|'[^']*'))?(?:\s+|$)""")
NAMED_PLACEHOLDER_RE = re.compile(r"%\((\w+)\)[#0 +\-]*\d*(?:\.\d+)?[a-zA-Z]")
POSITIONAL_PLACEHOLDER_RE = re.compile(r"(?<!%)(?:%%)*(%[sdifr])")
BRACE_PLACEHOLDER_RE = re.compile(r"(?<!\{)\{(\w*)\}(?!\})")
GETTEXT_FUNCTIONS = {
    # name: (index of msgctxt or None, index of msgid, index of msgid_plural or None)
    "_": (None, 0, None),
    "gettext": (None, 0, None),
    "gettext_lazy": (None, 0, None),
    "gettext_noop": (None, 0, None),
    "ngettext": (None, 0, 1),
    "ngettext_lazy": (None, 0, 1),
    "pgettext": (0, 1, None),
    "pgettext_lazy": (0, 1, None),
    "npgettext": (0, 1, 2),
    "npgettext_lazy": (0, 1, 2),
}


# --- helpers --------------------------------------------------------------------------------------------


def _project_dirs_only(paths: list[Path]) -> list[Path]:
    result = []
    for path in paths:
        path = Path(path).resolve()
        if path.is_dir() and path.is_relative_to(ROOT) and not SKIPPED_DIRS & set(path.relative_to(ROOT).parts):
            result.append(path)
    return result


def template_files() -> list[Path]:
    """Return the project's own templates: settings DIRS and the templates dirs of project apps."""
    dirs = [Path(d) for engine in settings.TEMPLATES for d in engine.get("DIRS", [])]
    dirs += [Path(d) for d in get_app_template_dirs("templates")]
    files = {f for d in _project_dirs_only(dirs) for f in d.rglob("*.html")}
    return sorted(files)


def python_files() -> list[Path]:
    """Return the project's Python sources, as ``makemessages`` sees them (tests and the venv left out)."""
    files = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in parts[:-1]):
            continue
        files.append(path)
    return sorted(files)


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def unquote(literal: str) -> str:
    return literal[1:-1]


def load_po() -> polib.POFile:
    return polib.pofile(str(PO_PATH))


def po_keys(po: polib.POFile) -> set[tuple[str | None, str]]:
    return {(e.msgctxt, e.msgid) for e in po if not e.obsolete}


# --- scanning templates for untranslated text -----------------------------------------------------------


def _masked_source(source: str) -> tuple[str, list[tuple[int, str]]]:
    """Blank out everything but literal HTML text, keeping offsets and line breaks.

    Template tags, variables, comments and whole ``{% blocktranslate %}`` / ``{% comment %}`` blocks become
    spaces, so only text a translator never sees is left. Also return printed literals found inside variables
    and tags, as (line, literal).
    """
    chars = list(source)
    printed: list[tuple[int, str]] = []
    in_block = None  # the tag that ends the translated or commented block we are in

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "

    for token in DebugLexer(source).tokenize():
        start, end = token.position
        words = token.split_contents() if token.token_type == TokenType.BLOCK and token.contents else [""]
        if in_block is not None:
            blank(start, end)
            if token.token_type == TokenType.BLOCK and words[0] in in_block:
                in_block = None
            continue
        if token.token_type == TokenType.TEXT:
            continue
        blank(start, end)
        if token.token_type == TokenType.BLOCK:
            if words[0] in {"blocktranslate", "blocktrans"}:
                in_block = {"endblocktranslate", "endblocktrans"}
            elif words[0] == "comment":
                in_block = {"endcomment"}
            elif words[0] == "firstof":
                printed += [(token.lineno, unquote(w)) for w in words[1:] if w[:1] in "\"'"]
        elif token.token_type == TokenType.VAR:
            contents = CONSTANT_RE.sub("", token.contents)  # _("...") is translated
            printed += [(token.lineno, unquote(m)) for m in PRINTED_LITERAL_RE.findall(contents)]
    masked = ENTITY_RE.sub(lambda m: " " * len(m.group()), "".join(chars))
    return masked, printed


class _VisibleTextFinder(HTMLParser):
    """Collect (line, text) of HTML text and user-visible attribute values, skipping scripts, styles and code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[int, str, str]] = []  # (line, text, how to show it)
        self._raw_text_tag: str | None = None
        self._literal_depth = 0  # inside <code>, <kbd> or <samp>: machine text and key names, never translated

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_startendtag(tag, attrs)
        if tag in {"script", "style"}:
            self._raw_text_tag = tag
        elif tag in LITERAL_TAGS:
            self._literal_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        for name, value in self._visible_attributes(tag, attrs):
            self.found.append((line, value, f'{name}="{" ".join(value.split())}"'))

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw_text_tag:
            self._raw_text_tag = None
        elif tag in LITERAL_TAGS:
            self._literal_depth = max(0, self._literal_depth - 1)

    def handle_data(self, data: str) -> None:
        if self._raw_text_tag or self._literal_depth:
            return
        line = self.getpos()[0]
        for offset, text in enumerate(data.split("\n")):
            if text.strip():
                self.found.append((line + offset, text, text.strip()))

    @staticmethod
    def _visible_attributes(tag: str, attrs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        values = {name: value or "" for name, value in attrs}
        visible = [(name, value) for name, value in values.items() if name in VISIBLE_ATTRIBUTES]
        if tag == "input" and values.get("type", "").strip().lower() in BUTTON_INPUT_TYPES and "value" in values:
            visible.append(("value", values["value"]))
        return visible


def untranslated_text(source: str) -> list[tuple[int, str]]:
    """Return (line, text) for each piece of user-visible template text that holds an untranslated word."""
    masked, printed = _masked_source(source)
    finder = _VisibleTextFinder()
    finder.feed(masked)
    finder.close()
    problems = []
    for line, text, shown in sorted(finder.found + [(line, text, text) for line, text in printed]):
        if any(word not in ALLOWED_WORDS for word in WORD_RE.findall(text)):
            problems.append((line, shown))
    return problems


# --- what makemessages extracts from templates ----------------------------------------------------------


def template_messages(source: str) -> list[tuple[int, str | None, str, str | None]]:
    """Return (line, msgctxt, msgid, msgid_plural) for every translatable string in a template source.

    Mirrors ``django.utils.translation.template.templatize``: literals of ``{% translate %}`` and ``_()``
    (found by regular expression), and ``{% blocktranslate %}`` bodies with ``{{ var }}`` as ``%(var)s``.
    """
    found: list[tuple[int, str | None, str, str | None]] = []

    def line_of(offset: int) -> int:
        return source.count("\n", 0, offset) + 1

    for m in TRANSLATE_TAG_RE.finditer(source):
        context = unquote(m.group(2)) if m.group(2) else None
        found.append((line_of(m.start()), context, unquote(m.group(1)).replace("%", "%%"), None))
    for tag in re.finditer(r"\{[{%].*?[}%]\}", source, re.DOTALL):
        for m in CONSTANT_RE.finditer(tag.group()):
            found.append((line_of(tag.start()), None, unquote(m.group(1)), None))

    block: dict | None = None
    for token in Lexer(source).tokenize():
        if block is None:
            if token.token_type == TokenType.BLOCK and (m := BLOCK_START_RE.match(token.contents)):
                context = unquote(m.group(1)) if m.group(1) else None
                trimmed = "trimmed" in token.split_contents()
                block = {"line": token.lineno, "context": context, "trimmed": trimmed, "parts": [[]]}
            continue
        if token.token_type == TokenType.BLOCK:
            name = token.contents.strip()
            if name == "plural":
                block["parts"].append([])
            elif name in {"endblocktranslate", "endblocktrans"}:
                texts = ["".join(p) for p in block["parts"]]
                if block["trimmed"]:
                    texts = [trim_whitespace(t) for t in texts]
                plural = texts[1] if len(texts) > 1 else None
                found.append((block["line"], block["context"], texts[0], plural))
                block = None
        elif token.token_type == TokenType.VAR:
            block["parts"][-1].append(f"%({token.contents})s")
        elif token.token_type == TokenType.TEXT:
            block["parts"][-1].append(token.contents.replace("%", "%%"))
    return found


def python_messages(source: str) -> list[tuple[int, str | None, str, str | None]]:
    """Return (line, msgctxt, msgid, msgid_plural) for gettext calls with literal arguments in Python code."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in GETTEXT_FUNCTIONS:
            continue
        ctx_i, id_i, plural_i = GETTEXT_FUNCTIONS[name]
        indices = [i for i in (ctx_i, id_i, plural_i) if i is not None]
        if len(node.args) <= max(indices):
            continue
        values = [node.args[i] for i in indices]
        if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            continue
        context = node.args[ctx_i].value if ctx_i is not None else None
        plural = node.args[plural_i].value if plural_i is not None else None
        found.append((node.lineno, context, node.args[id_i].value, plural))
    return found


# --- placeholders ---------------------------------------------------------------------------------------


def placeholders(text: str) -> tuple[list[str], list[str], list[str], int]:
    """Return the named, positional and brace placeholders of a message, sorted, and its count of ``%%``."""
    return (
        sorted(NAMED_PLACEHOLDER_RE.findall(text)),
        sorted(POSITIONAL_PLACEHOLDER_RE.findall(text)),
        sorted(BRACE_PLACEHOLDER_RE.findall(text)),
        text.count("%%"),
    )


# --- 1. no untranslated text in templates ---------------------------------------------------------------


def test_project_templates_are_found():
    names = {rel(f) for f in template_files()}
    assert "core/templates/base.html" in names and "templates/items/item_list.html" in names
    assert not any(".venv" in n or "site-packages" in n for n in names)


def test_untranslated_text_finder_flags_bare_text_and_attributes_but_not_translated_text():
    source = (
        "{% load i18n %}<h1>Bare heading</h1>\n"
        '<p title="Bare title">{% translate "Wrapped" %}</p>\n'
        "<p>{% blocktranslate with n=x %}Wrapped {{ n }} too{% endblocktranslate %} r{{ rev }} → —</p>\n"
        "<script>const label = 'not visible';</script><style>.a { color: red }</style>\n"
        '{# a comment #}{% comment %}Hidden note{% endcomment %}<input type="submit" value="Go now">\n'
        '<input name="q" placeholder="{% translate \'Search\' %}"><span lang="en">&nbsp;&amp;</span>\n'
        '<td>{{ value|default:"nothing" }}</td><td>{{ value|default:_("none") }}</td>\n'
        "<span>未翻译</span><span>EN</span><span>中文</span> <kbd>Ctrl+Enter</kbd> <code>{'item': 'uid'}</code>\n"
    )
    assert untranslated_text(source) == [
        (1, "Bare heading"),
        (2, 'title="Bare title"'),
        (5, 'value="Go now"'),
        (7, "nothing"),
        (8, "未翻译"),
    ]


def test_templates_hold_no_untranslated_user_visible_text():
    problems = []
    for path in template_files():
        for line, text in untranslated_text(path.read_text(encoding="utf-8")):
            problems.append(f"{rel(path)}:{line}: {text}")
    assert not problems, "Wrap these in {% translate %} / {% blocktranslate %}:\n" + "\n".join(problems)


# --- 2. the Chinese catalogue is complete and compiled --------------------------------------------------


def test_chinese_catalogue_declares_chinese_plural_forms():
    po = load_po()
    assert po.metadata.get("Plural-Forms", "").replace(" ", "") == "nplurals=1;plural=0;"
    assert po.metadata.get("Content-Type") == "text/plain; charset=UTF-8"
    assert not po.metadata_is_fuzzy, "the catalogue header is still marked fuzzy"
    wrong = [e.msgid for e in po if e.msgid_plural and not e.obsolete and set(e.msgstr_plural) != {0}]
    assert not wrong, f"plural entries need exactly msgstr[0] in Chinese: {wrong}"


def test_every_message_has_a_chinese_translation():
    po = load_po()
    untranslated = [e.msgid for e in po.untranslated_entries()]
    fuzzy = [e.msgid for e in po.fuzzy_entries()]
    assert not untranslated, f"{len(untranslated)} untranslated messages: {untranslated}"
    assert not fuzzy, f"{len(fuzzy)} fuzzy messages (check them, then remove the flag): {fuzzy}"


def test_translations_keep_the_placeholders_of_their_message():
    problems = []
    for entry in load_po():
        if entry.obsolete:
            continue
        if entry.msgid_plural:
            pairs = [(entry.msgid_plural, s) for s in entry.msgstr_plural.values()]
        else:
            pairs = [(entry.msgid, entry.msgstr)]
        for source, translated in pairs:
            if translated and placeholders(source) != placeholders(translated):
                problems.append(f"{source!r} -> {translated!r}")
    assert not problems, "placeholders differ:\n" + "\n".join(problems)


def test_compiled_catalogue_matches_the_po_file():
    def messages(catalogue: polib._BaseFile) -> dict:
        return {
            (e.msgctxt, e.msgid, e.msgid_plural or None): (
                tuple(sorted(e.msgstr_plural.items())) if e.msgid_plural else e.msgstr
            )
            for e in catalogue
            if e.msgid
            and not getattr(e, "obsolete", False)
            and not getattr(e, "fuzzy", False)
            and (all(e.msgstr_plural.values()) if e.msgid_plural else e.msgstr)
        }

    assert MO_PATH.exists(), "compile the catalogue: manage.py compilemessages"
    po, mo = load_po(), polib.mofile(str(MO_PATH))
    expected, compiled = messages(po), messages(mo)
    stale = sorted(str(k[1]) for k in expected.keys() - compiled.keys())
    extra = sorted(str(k[1]) for k in compiled.keys() - expected.keys())
    changed = sorted(str(k[1]) for k in expected.keys() & compiled.keys() if expected[k] != compiled[k])
    assert not (stale or extra or changed), (
        f"django.mo is out of date; run compilemessages. Missing: {stale}; extra: {extra}; changed: {changed}"
    )
    assert mo.metadata.get("Plural-Forms", "").replace(" ", "") == "nplurals=1;plural=0;"


# --- 3. every string in the templates and the code is in the catalogue ----------------------------------


def test_template_message_extraction_matches_makemessages():
    source = (
        '{% load i18n %}{% translate "Save" %}{% trans \'Cancel\' context "button" %}'
        '{{ x|default:_("none") }}{% blocktranslate with n=a %}Page {{ n }} is 100%{% endblocktranslate %}'
        "{% blocktranslate count counter=c %}{{ counter }} item{% plural %}{{ counter }} items{% endblocktranslate %}"
        "{% blocktranslate trimmed %}\n  One\n  two\n{% endblocktranslate %}"
    )
    assert {m[1:] for m in template_messages(source)} == set(
        [
            (None, "Save", None),
            ("button", "Cancel", None),
            (None, "none", None),
            (None, "Page %(n)s is 100%%", None),
            (None, "%(counter)s item", "%(counter)s items"),
            (None, "One two", None),
        ]
    )


def test_every_template_string_is_in_the_catalogue():
    po = load_po()
    keys = po_keys(po)
    plurals = {(e.msgctxt, e.msgid): e.msgid_plural for e in po if not e.obsolete}
    missing = []
    for path in template_files():
        for line, context, msgid, plural in template_messages(path.read_text(encoding="utf-8")):
            if (context, msgid) not in keys or (plural and plurals[(context, msgid)] != plural):
                missing.append(f"{rel(path)}:{line}: {msgid!r}")
    assert not missing, "run makemessages and translate:\n" + "\n".join(missing)


def test_every_python_string_marked_for_translation_is_in_the_catalogue():
    keys = po_keys(load_po())
    missing = []
    for path in python_files():
        for line, context, msgid, _plural in python_messages(path.read_text(encoding="utf-8")):
            if (context, msgid) not in keys:
                missing.append(f"{rel(path)}:{line}: {msgid!r}")
    assert not missing, "run makemessages and translate:\n" + "\n".join(missing)


# --- 4. the interface switches to Chinese and remembers it ----------------------------------------------


def _zh(message: str) -> str:
    with translation.override("zh-hans"):
        return translation.gettext(message)


def test_interface_is_english_by_default(taxonomy, make_user, login):
    client = login(make_user("expert", username="english-expert"))
    response = client.get("/items/")
    assert response.status_code == 200
    assert response.headers["Content-Language"] == "en"
    assert '<html lang="en">' in response.text
    assert ">Items</a>" in response.text


def test_chosen_chinese_is_shown_on_items_and_taxonomy_and_kept_for_the_next_login(taxonomy, make_user, login):
    user = make_user("expert", username="zh-expert")
    make_item(uid="i18n-item", user=user)
    dimension = Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition")
    benchmark = Benchmark.objects.get(slug="facet")
    client = login(user)

    response = client.post("/language/", {"language": "zh-hans", "next": "/items/"})
    assert response.status_code == 302
    assert response.headers["Location"] == "/items/"
    assert UserProfile.objects.get(user=user).language == "zh-hans"

    items = client.get("/items/")
    assert items.status_code == 200
    assert items.headers["Content-Language"] == "zh-hans"
    assert '<html lang="zh-hans">' in items.text
    assert _zh("Items") == "题目"
    assert ">题目</a>" in items.text  # the navigation link
    assert ">分类体系</a>" in items.text
    assert _zh("Export JSONL") in items.text
    assert "i18n-item" in items.text
    assert dimension.name_zh in items.text
    assert dimension.name_en not in items.text
    assert ">Items</a>" not in items.text

    tax = client.get("/taxonomy/")
    assert tax.status_code == 200
    assert f"<h1>{_zh('Taxonomy')}</h1>" in tax.text
    assert benchmark.name_zh in tax.text
    assert dimension.name_zh in tax.text
    assert _zh("Crisis risk levels") in tax.text
    assert "Hidden Emotion Recognition" not in tax.text

    client.logout()
    client = login(user)
    assert "题目" in client.get("/items/").text
    fresh = Client()
    assert fresh.login(username=user.username, password=PASSWORD)
    again = fresh.get("/items/")
    assert again.headers["Content-Language"] == "zh-hans"
    assert ">题目</a>" in again.text


def test_switching_back_to_english_is_remembered(taxonomy, make_user, login):
    user = make_user("researcher", username="switcher")
    client = login(user)
    client.post("/language/", {"language": "zh-hans"})
    assert ">题目</a>" in client.get("/items/").text
    client.post("/language/", {"language": "en"})
    assert ">Items</a>" in client.get("/items/").text
    assert UserProfile.objects.get(user=user).language == "en"


def test_unsupported_language_is_refused_with_a_message(taxonomy, make_user, login):
    user = make_user("expert", username="odd-language")
    client = login(user)
    response = client.post("/language/", {"language": "xx", "next": "/items/"}, follow=True)
    assert "Unsupported language xx." in response.text
    assert not UserProfile.objects.filter(user=user, language="xx").exists()
