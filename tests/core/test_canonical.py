"""The canonical JSON form that checksums are computed from."""

from core.canonical import canonical_json


def test_canonical_json_sorts_keys_drops_whitespace_and_keeps_utf8():
    assert canonical_json({"b": [1, 2], "a": {"z": "你好", "y": None}}) == '{"a":{"y":null,"z":"你好"},"b":[1,2]}'


def test_canonical_json_is_the_same_for_equal_mappings_built_in_another_order():
    assert canonical_json({"x": 1, "y": 2}) == canonical_json({"y": 2, "x": 1})
