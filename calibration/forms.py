"""Forms of the calibration pages: judge prompts, judges and calibration runs."""

import json

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.items.models import Benchmark, Dimension
from annotation.labelling.models import ComparisonSet
from calibration.models import CombineRule, Judge, JuryAggregation, PromptSet
from core.inputs import InputRefused, parse_json
from llm.models import Endpoint


class JudgePromptForm(forms.Form):
    dimension = forms.ModelChoiceField(label=_("Dimension"), queryset=Dimension.objects.filter(subjective=True))
    criteria = forms.CharField(label=_("Criteria, in priority order"), widget=forms.Textarea(attrs={"rows": 6}))
    analysis_steps = forms.CharField(
        label=_("Required analysis before the verdict"), widget=forms.Textarea(attrs={"rows": 4})
    )
    length_penalty = forms.CharField(label=_("Length penalty"), widget=forms.Textarea(attrs={"rows": 2}))
    few_shot = forms.CharField(
        label=_("Few-shot pairs (JSON list)"), widget=forms.Textarea(attrs={"rows": 6}), required=False
    )
    notes = forms.CharField(label=_("What changed"), required=False)

    def clean_few_shot(self) -> list:
        raw = self.cleaned_data.get("few_shot") or "[]"
        try:
            value = parse_json(raw)
        except InputRefused as exc:
            # A NUL is named by its field; too deep a nesting is a fault of the JSON as a whole.
            message = str(exc) if exc.field else gettext("Not valid JSON: %(error)s") % {"error": exc.reason}
            raise forms.ValidationError(message) from exc
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(gettext("Not valid JSON: %(error)s") % {"error": exc.msg}) from exc
        return value


class CalibrationRunForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    comparison_set = forms.ModelChoiceField(label=_("Comparison set"), queryset=ComparisonSet.objects.all())
    judges = forms.ModelMultipleChoiceField(
        label=_("Candidate judges"), queryset=Judge.objects.all(), widget=forms.CheckboxSelectMultiple
    )
    combine_rule = forms.ChoiceField(label=_("Order combination"), choices=CombineRule.choices)
    seed = forms.IntegerField(label=_("Seed"), initial=0, min_value=0)
    bootstrap = forms.IntegerField(label=_("Bootstrap resamples"), initial=1000, min_value=0, max_value=20000)


class JudgeForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    endpoint = forms.ModelChoiceField(label=_("Endpoint"), queryset=Endpoint.objects.filter(is_active=True))
    prompt_set = forms.ModelChoiceField(label=_("Prompt set"), queryset=PromptSet.objects.all())


class PlanningForm(forms.Form):
    target = forms.FloatField(
        label=_("Target half-width of the agreement interval"),
        initial=0.05,
        min_value=0.005,
        max_value=0.5,
        help_text=_("In agreement points: 0.05 means ±5 percentage points, with confidence 95%."),
    )


class JuryForm(forms.Form):
    kind = forms.CharField(widget=forms.HiddenInput, initial="jury")
    name = forms.CharField(label=_("Name"), max_length=100)
    members = forms.ModelMultipleChoiceField(
        label=_("Member judges"),
        queryset=Judge.objects.filter(kind="single"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("At least two judges; each is asked, and the jury's verdict combines theirs."),
    )
    aggregation = forms.ChoiceField(label=_("Combine by"), choices=JuryAggregation.choices)


class KeyValidationForm(forms.Form):
    """Start the independent validation of a benchmark's EiCAP probe keys with a judge of another model family."""

    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.order_by("slug"))
    endpoint = forms.ModelChoiceField(
        label=_("Independent judge"),
        queryset=Endpoint.objects.filter(is_active=True, for_drafting=False).order_by("name"),
        help_text=_("An endpoint of another model family than the one that drafted the reply sets."),
    )
    seed = forms.IntegerField(label=_("Seed"), initial=0, min_value=0)
