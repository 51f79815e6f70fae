"""Style (template) metrics of model responses in English and Chinese: plain text in, numbers out, no ORM.

Following FACET's template analysis, each response gets four metrics: formulaic openers counted in its first
two sentences, formulaic closers counted in its last sentence, its length
(``annotation.labelling.text.response_length``:
words in English, characters in Chinese; the same measure as the judge calibration's length bias) and its list
density (list lines / non-blank lines). The phrase lists are inputs, so experts can edit them;
``DEFAULT_OPENERS`` and ``DEFAULT_CLOSERS`` are starting points. docs/statistics.md defines every rule.
"""

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from annotation.items.content import LANGUAGES
from annotation.labelling.text import Language, content_lines, normalise, normalised_lines, response_length
from evaluation.stats import Correlation, _Serialisable, correlation

DEFAULT_OPENERS: dict[Language, tuple[str, ...]] = {
    "en": (
        "I understand how you feel",
        "I can understand how you feel",
        "I'm sorry to hear",
        "I am sorry to hear",
        "I'm so sorry",
        "That sounds really hard",
        "That sounds so hard",
        "That must be really hard",
        "That must be so hard",
        "It sounds like you're going through",
        "I hear you",
        "It's completely understandable",
        "It's understandable to feel",
        "It's okay to feel",
        "It's normal to feel",
        "Your feelings are valid",
        "Thank you for sharing",
        "I can imagine how",
    ),
    "zh": (
        "我理解你的感受",
        "我能理解你的感受",
        "我非常理解你的感受",
        "我能感受到你",
        "听到这个消息我很难过",
        "听起来你",
        "这一定很难受",
        "这真的很不容易",
        "你的感受是正常的",
        "你的感受是合理的",
        "有这样的感受很正常",
        "谢谢你愿意分享",
        "感谢你的分享",
        "抱抱你",
    ),
}
DEFAULT_CLOSERS: dict[Language, tuple[str, ...]] = {
    "en": (
        "You are not alone",
        "You're not alone",
        "I'm here for you",
        "I am here for you",
        "I'm here to listen",
        "I am here to listen",
        "Take care of yourself",
        "Take care",
        "Feel free to reach out",
        "Don't hesitate to reach out",
        "Be gentle with yourself",
        "Be kind to yourself",
        "I hope this helps",
        "You've got this",
    ),
    "zh": (
        "你并不孤单",
        "你不是一个人",
        "我一直在这里",
        "我会一直陪着你",
        "我在这里倾听",
        "我会一直在这里",
        "照顾好自己",
        "希望对你有帮助",
        "希望这些建议对你有帮助",
        "随时可以找我",
        "随时来找我聊",
        "加油",
    ),
}

_EN_TERMINATOR = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_ZH_TERMINATOR = re.compile(r"(?:[。！？!?…]+|\.(?=\s))[”’」』）)\"']*")
_EN_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "a.m", "p.m", "no", "fig"}
)


def split_sentences(text: str, language: Language) -> list[str]:
    """Split a response into sentences; a line break always ends one.

    English: a run of ``.``, ``!``, ``?`` or ``…`` (with closing quotes or brackets) ends a sentence when followed
    by whitespace or the end of the line, except after a common abbreviation (Mr., e.g., etc.) or a single
    capital initial. Chinese: ``。！？!?…`` (with closing quotes or brackets) end a sentence wherever they are;
    a full stop ``.`` only when followed by whitespace. List markers and Markdown emphasis are removed first.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
    sentences = []
    for line in content_lines(text):
        start = 0
        pattern = _EN_TERMINATOR if language == "en" else _ZH_TERMINATOR
        for match in pattern.finditer(line):
            if language == "en" and match.group().startswith(".") and len(match.group().rstrip("\"'”’)]")) == 1:
                before = line[start : match.start()].split()
                word = before[-1] if before else ""
                initial = len(word) == 1 and word.isupper() and word != "I"
                if word.lower() in _EN_ABBREVIATIONS or initial:
                    continue
            piece = line[start : match.end()].strip()
            if piece:
                sentences.append(piece)
            start = match.end()
        rest = line[start:].strip()
        if rest:
            sentences.append(rest)
    return sentences


@functools.lru_cache(maxsize=64)
def _phrases_pattern(phrases: tuple[str, ...], language: Language) -> re.Pattern[str] | None:
    """Compile the phrases into one case-insensitive alternation, longest phrase first."""
    bodies = []
    for phrase in sorted({normalise(p).strip() for p in phrases if p.strip()}, key=lambda p: (-len(p), p)):
        words = phrase.split()
        bodies.append(r"\s*".join(map(re.escape, words)) if language == "zh" else r"\s+".join(map(re.escape, words)))
    if not bodies:
        return None
    pattern = "|".join(bodies)
    if language == "en":
        pattern = rf"(?<![^\W_])(?:{pattern})(?![^\W_])"
    return re.compile(pattern, re.IGNORECASE)


def count_phrases(text: str, phrases: Iterable[str], language: Language) -> int:
    """Count occurrences of the phrases in ``text``, case-insensitively and without overlaps.

    English phrases match whole words only; Chinese phrases match anywhere. The text is scanned left to right
    and at each position the longest phrase that starts there is taken, so ``Take care of yourself`` counts once,
    not also as ``Take care``.
    """
    pattern = _phrases_pattern(tuple(phrases), language)
    return 0 if pattern is None else sum(1 for _ in pattern.finditer(normalise(text)))


@dataclass(frozen=True)
class ResponseStyle(_Serialisable):
    """The style metrics of one response; ``list_density`` is None for an empty response."""

    openers: int
    closers: int
    length: int
    sentences: int
    list_lines: int
    lines: int
    list_density: float | None


def response_style(
    text: str,
    language: Language,
    *,
    openers: Sequence[str] | None = None,
    closers: Sequence[str] | None = None,
) -> ResponseStyle:
    """Measure one response: openers in the first two sentences, closers in the last one, length, list density.

    With a single sentence, that sentence is both the opening and the closing one.
    """
    openers = DEFAULT_OPENERS[language] if openers is None else openers
    closers = DEFAULT_CLOSERS[language] if closers is None else closers
    sentences = split_sentences(text, language)
    lines = normalised_lines(text)
    list_lines = sum(1 for is_list, _ in lines if is_list)
    return ResponseStyle(
        openers=count_phrases(" ".join(sentences[:2]), openers, language) if sentences else 0,
        closers=count_phrases(sentences[-1], closers, language) if sentences else 0,
        length=response_length(text, language),
        sentences=len(sentences),
        list_lines=list_lines,
        lines=len(lines),
        list_density=list_lines / len(lines) if lines else None,
    )


@dataclass(frozen=True)
class StyleSummary(_Serialisable):
    """Mean style metrics over one model's responses in one language."""

    n_responses: int
    openers: float | None
    closers: float | None
    length: float | None
    list_density: float | None
    share_with_opener: float | None
    share_with_closer: float | None
    undefined_reason: str | None = None

    def metrics(self) -> dict[str, float | None]:
        """Return the four FACET metrics by name."""
        return {
            "openers": self.openers,
            "closers": self.closers,
            "length": self.length,
            "list_density": self.list_density,
        }


def style_summary(
    texts: Iterable[str],
    language: Language,
    *,
    openers: Sequence[str] | None = None,
    closers: Sequence[str] | None = None,
) -> StyleSummary:
    """Average the style metrics over responses (list density over responses that have any text)."""
    styles = [response_style(text, language, openers=openers, closers=closers) for text in texts]
    if not styles:
        return StyleSummary(0, None, None, None, None, None, None, "no responses")
    densities = [style.list_density for style in styles if style.list_density is not None]
    return StyleSummary(
        n_responses=len(styles),
        openers=float(np.mean([style.openers for style in styles])),
        closers=float(np.mean([style.closers for style in styles])),
        length=float(np.mean([style.length for style in styles])),
        list_density=float(np.mean(densities)) if densities else None,
        share_with_opener=float(np.mean([style.openers > 0 for style in styles])),
        share_with_closer=float(np.mean([style.closers > 0 for style in styles])),
    )


def style_rating_correlations(
    metrics: Mapping[str, Mapping[str, float | None]], ratings: Mapping[str, float]
) -> dict[str, Correlation]:
    """Return Spearman's rho across models between each style metric and the models' ratings.

    ``metrics[model][metric]`` (e.g. ``StyleSummary.metrics()``) and ``ratings[model]``; models without a
    rating or without a value for a metric are left out of that metric's correlation.
    """
    names = sorted({metric for by_metric in metrics.values() for metric in by_metric})
    result = {}
    for metric in names:
        models = [
            model for model, by_metric in metrics.items() if by_metric.get(metric) is not None and model in ratings
        ]
        result[metric] = correlation(
            [float(metrics[model][metric]) for model in models],  # type: ignore[arg-type]
            [float(ratings[model]) for model in models],
            method="spearman",
        )
    return result
