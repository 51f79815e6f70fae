"""The length of a model response: one measure for calibration's length bias and evaluation's style metrics."""

import pytest

from annotation.labelling.text import content_lines, response_length


def test_length_counts_english_words_and_chinese_characters_without_punctuation_or_symbols():
    assert response_length("Don't worry—it's about well-being, really.", "en") == 6
    assert response_length("**Bold** text\n- and a list item", "en") == 6
    assert response_length("你好，世界！AI 2024 😊", "zh") == 10
    assert response_length("  \n ", "zh") == 0


def test_list_markers_and_markdown_are_not_words():
    assert response_length("1. Breathe slowly\n2. Call a friend — today", "en") == 6
    assert response_length("（一）深呼吸\n- 给朋友 打电话", "zh") == 9


def test_content_lines_drop_blank_lines_list_markers_and_emphasis():
    assert content_lines("**Hi** there\n\n- one\n  2) two") == ["Hi there", "one", "two"]


def test_unknown_language_is_rejected():
    with pytest.raises(ValueError, match="language"):
        response_length("hi", "fr")
