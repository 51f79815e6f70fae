"""The report's ``decimals`` filter writes every number exactly as Django's ``floatformat`` would, in both languages."""

import math
import random

import pytest
from django.template.defaultfilters import floatformat
from django.utils import translation

from evaluation.templatetags.report_text import decimals

VALUES = [0, 1, -1, 0.5, 0.125, 0.0125, 2.675, -0.0004, -0.5, 1234.5678, 1e-9, -1e-9, 12, "0.3", None, "", math.nan]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_decimals_matches_floatformat(language):
    rng = random.Random(7)
    values = VALUES + [rng.uniform(-1000, 1000) for _ in range(500)] + [round(rng.random(), 4) for _ in range(200)]
    with translation.override(language):
        for value in values:
            for places in range(5):
                assert decimals(value, places) == floatformat(value, places), (value, places)
