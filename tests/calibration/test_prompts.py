"""Judge verdicts: parsing the judge's reply and turning it to the canonical orientation (pure)."""

import pytest

from calibration import prompts


def test_verdict_parsing_and_canonical_orientation():
    assert prompts.parse_verdict("Reasoning...\nVerdict: [[B]] ++++") == prompts.Verdict("B", 4)
    assert prompts.parse_verdict("结论：[[TIE]]") == prompts.Verdict("TIE", 0)
    for bad in ("Verdict: [[A]]", "Verdict: [[A]] ++++++", "The answer is A", "Verdict: [[TIE]] +"):
        with pytest.raises(prompts.VerdictError):
            prompts.parse_verdict(bad)
    assert prompts.canonical_from_order(prompts.Verdict("A", 3), "AB") == 3
    assert prompts.canonical_from_order(prompts.Verdict("A", 3), "BA") == -3
    assert prompts.canonical_from_order(prompts.Verdict("B", 2), "BA") == 2
