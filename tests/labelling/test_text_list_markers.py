"""List markers that Unicode normalisation would turn into plain text: circled and parenthesised numbers."""

import pytest

from annotation.labelling.text import content_lines, response_length


def test_circled_numbers_are_list_markers_and_are_removed_before_counting():
    # NFKC turns ① into 1, which no longer reads as a marker; the marker is found in the line as written.
    assert content_lines("①记录情绪\n②找人聊聊") == ["记录情绪", "找人聊聊"]
    assert content_lines("⑳ 最后一步") == ["最后一步"]
    assert response_length("①记录情绪\n②找人聊聊", "zh") == 8  # 记录情绪找人聊聊: the markers are not characters
    assert response_length("① Breathe slowly\n② Call a friend", "en") == 5


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        ("⑴ 深呼吸", "深呼吸"),  # NFKC: (1)
        ("⒈ Breathe", "Breathe"),  # NFKC: 1.
        ("１．深呼吸", "深呼吸"),  # full-width digit and stop
        ("（一）深呼吸", "深呼吸"),
        ("- Breathe", "Breathe"),
    ],
)
def test_markers_that_normalisation_produces_or_keeps_still_count(line, rest):
    assert content_lines(line) == [rest]


def test_text_that_only_looks_like_a_marker_after_normalisation_is_kept():
    assert content_lines("1.5 公斤") == ["1.5 公斤"]
    assert content_lines("记录①") == ["记录1"]
