"""Style metrics of responses in English and Chinese; no database."""

import json

import pytest
from scipy import stats as scipy_stats

from annotation.labelling.text import response_length
from evaluation import style

ENGLISH = """I understand how you feel. That sounds really hard! Mr. Smith said e.g. this helps.

Here are a few ideas:
- Take a walk.
- Call a friend you trust.
1. Breathe slowly
You are not alone. Take care of yourself."""

CHINESE = "我理解你的感受。这真的很不容易！\n1、深呼吸\n2、出去走走\n（一）找朋友聊聊。你并不孤单，加油！"


def test_default_phrase_lists_hold_the_papers_examples_in_both_languages():
    assert "I understand how you feel" in style.DEFAULT_OPENERS["en"]
    assert "You are not alone" in style.DEFAULT_CLOSERS["en"]
    assert "我理解你的感受" in style.DEFAULT_OPENERS["zh"]
    assert "你并不孤单" in style.DEFAULT_CLOSERS["zh"]


def test_english_sentences_split_on_terminal_punctuation_and_line_breaks_but_not_abbreviations():
    assert style.split_sentences(ENGLISH, "en") == [
        "I understand how you feel.",
        "That sounds really hard!",
        "Mr. Smith said e.g. this helps.",
        "Here are a few ideas:",
        "Take a walk.",
        "Call a friend you trust.",
        "Breathe slowly",
        "You are not alone.",
        "Take care of yourself.",
    ]
    assert style.split_sentences('He said "stop." Then he left... J. K. Rowling wrote it.', "en") == [
        'He said "stop."',
        "Then he left...",
        "J. K. Rowling wrote it.",
    ]


def test_chinese_sentences_split_on_full_width_and_ascii_terminators():
    assert style.split_sentences(CHINESE, "zh") == [
        "我理解你的感受。",
        "这真的很不容易!",
        "深呼吸",
        "出去走走",
        "找朋友聊聊。",
        "你并不孤单,加油!",
    ]
    assert style.split_sentences("他说：“好的。”然后走了。版本3.5很好", "zh") == [
        "他说:“好的。”",
        "然后走了。",
        "版本3.5很好",
    ]


def test_phrases_match_case_insensitively_whole_words_and_curly_apostrophes():
    assert style.count_phrases("i’m SORRY to hear that", ["I'm sorry to hear"], "en") == 1
    assert style.count_phrases("I hear your point", ["I hear you"], "en") == 0
    assert style.count_phrases("Take care of yourself. Take care!", ["Take care", "Take care of yourself"], "en") == 2
    assert style.count_phrases("加油加油", ["加油"], "zh") == 2


def test_openers_count_only_in_the_first_two_sentences_and_closers_only_in_the_last():
    text = "Hello there. Nice day. I understand how you feel. You are not alone. Bye."
    result = style.response_style(text, "en")
    assert result.openers == 0 and result.closers == 0
    result = style.response_style(ENGLISH, "en")
    assert result.openers == 2  # "I understand how you feel", "That sounds really hard"
    assert result.closers == 1  # "Take care of yourself"; "You are not alone" is in the second-to-last sentence
    chinese = style.response_style(CHINESE, "zh")
    assert (chinese.openers, chinese.closers) == (2, 2)


def test_custom_phrase_lists_replace_the_defaults():
    result = style.response_style(
        "Dear friend, hello. Goodbye now.", "en", openers=["dear friend"], closers=["goodbye"]
    )
    assert (result.openers, result.closers) == (1, 1)


def test_style_length_is_the_response_length_shared_with_calibration():
    text = "**Bold** text\n- and a list item"
    assert style.response_style(text, "en").length == response_length(text, "en") == 6


def test_list_density_is_list_lines_over_non_blank_lines():
    result = style.response_style(ENGLISH, "en")
    assert (result.list_lines, result.lines) == (3, 6)
    assert result.list_density == pytest.approx(0.5)
    assert style.response_style("1.5 million people agree.\n2) Yes", "en").list_lines == 1
    assert style.response_style("", "en").list_density is None
    assert style.response_style(CHINESE, "zh").list_density == pytest.approx(3 / 4)


def test_style_summary_averages_over_responses_and_is_json_clean():
    summary = style.style_summary([ENGLISH, "Okay.", ""], "en")
    assert summary.n_responses == 3
    assert summary.openers == pytest.approx(2 / 3)
    assert summary.list_density == pytest.approx((0.5 + 0.0) / 2)
    assert summary.share_with_opener == pytest.approx(1 / 3)
    json.dumps(summary.as_dict(), allow_nan=False)
    empty = style.style_summary([], "zh")
    assert empty.openers is None and empty.undefined_reason == "no responses"


def test_style_metrics_correlate_with_ratings_by_spearman():
    metrics = {
        "a": {"openers": 0.9, "length": 300, "list_density": None},
        "b": {"openers": 0.5, "length": 120, "list_density": 0.2},
        "c": {"openers": 0.1, "length": 200, "list_density": 0.2},
        "d": {"openers": 0.3, "length": 150, "list_density": 0.2},
    }
    ratings = {"a": 900.0, "b": 1100.0, "c": 1300.0, "d": 1200.0}
    result = style.style_rating_correlations(metrics, ratings)
    expected = scipy_stats.spearmanr([0.9, 0.5, 0.1, 0.3], [900, 1100, 1300, 1200])
    assert result["openers"].r == pytest.approx(expected.statistic) == -1
    assert result["openers"].p_value == pytest.approx(expected.pvalue)
    assert result["length"].n == 4
    assert result["list_density"].r is None and result["list_density"].undefined_reason == "a variable is constant"


def test_unknown_language_is_rejected():
    with pytest.raises(ValueError, match="language"):
        style.split_sentences("hi", "fr")
