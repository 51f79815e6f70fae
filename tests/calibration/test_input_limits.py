"""The judge prompt form's few-shot JSON is refused when nested too deep or holding a NUL, with a form error."""

import pytest

from annotation.items.models import Dimension
from calibration.forms import JudgePromptForm

pytestmark = pytest.mark.django_db


def form(few_shot: str) -> JudgePromptForm:
    dimension = Dimension.objects.filter(subjective=True).first()
    return JudgePromptForm(
        {
            "dimension": dimension.pk,
            "criteria": "warmth",
            "analysis_steps": "read both",
            "length_penalty": "none",
            "few_shot": few_shot,
        }
    )


def test_few_shot_json_nested_100000_deep_is_a_form_error(taxonomy):
    bound = form("[" * 100_000 + "]" * 100_000)

    assert not bound.is_valid()
    assert bound.errors["few_shot"] == ["Not valid JSON: JSON nested more than 64 levels deep (at character 65)"]


def test_few_shot_json_holding_a_nul_is_a_form_error_naming_the_place(taxonomy):
    bound = form('[{"a": "x", "b": "y\\u0000"}]')

    assert not bound.is_valid()
    assert bound.errors["few_shot"] == ["The field $[0].b contains a NUL character (\\u0000), which cannot be stored."]
