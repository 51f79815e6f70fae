"""List density of Chinese responses whose items are numbered with circled numbers (①, ②, ...)."""

import pytest

from evaluation import style


def test_circled_numbers_count_as_list_lines():
    result = style.response_style("①记录情绪\n②找人聊聊", "zh")
    assert (result.list_lines, result.lines) == (2, 2)
    assert result.list_density == pytest.approx(1.0)
    assert result.length == 8


def test_circled_numbers_mix_with_other_lines_in_the_density():
    text = "我理解你的感受。\n可以试试：\n①记录情绪\n②找人聊聊\n③早点休息\n你并不孤单。"
    result = style.response_style(text, "zh")
    assert (result.list_lines, result.lines) == (3, 6)
    assert result.list_density == pytest.approx(0.5)
    assert style.style_summary([text, "①记录情绪"], "zh").list_density == pytest.approx((0.5 + 1.0) / 2)
