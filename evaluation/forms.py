"""Forms of the evaluation pages: starting an evaluation run."""

from django import forms
from django.utils.translation import gettext_lazy as _

from evaluation.models import EvaluationRun
from labelling.models import LANGUAGE_CHOICES
from llm.models import Endpoint
from releases.models import Release


class EvaluationRunForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    release = forms.ModelChoiceField(
        label=_("Frozen release"), queryset=Release.objects.filter(status=Release.Status.FROZEN)
    )
    endpoints = forms.ModelMultipleChoiceField(
        label=_("Models under test"),
        queryset=Endpoint.objects.filter(is_active=True),
        widget=forms.CheckboxSelectMultiple,
    )
    languages = forms.MultipleChoiceField(
        label=_("Languages"),
        choices=LANGUAGE_CHOICES,
        initial=["en", "zh"],
        widget=forms.CheckboxSelectMultiple,
    )
    protocol = forms.ChoiceField(label=_("Objective protocol"), choices=EvaluationRun.Protocol.choices)
    pairing = forms.ChoiceField(label=_("Pairing"), choices=EvaluationRun.Pairing.choices)
    seed = forms.IntegerField(label=_("Seed"), initial=0, min_value=0)
    judge_override_reason = forms.CharField(
        label=_("Reason to run without the selected primary judge (only if none is selected)"),
        required=False,
    )
