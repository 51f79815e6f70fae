"""Forms of the evaluation pages: starting an evaluation run, and its budget."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.labelling.models import LANGUAGE_CHOICES
from annotation.releases.models import Release
from evaluation.models import EvaluationRun
from llm.models import Endpoint


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
    budget = forms.DecimalField(
        label=_("Budget"),
        required=False,
        min_value=0,
        max_digits=16,
        decimal_places=8,
        help_text=_(
            "In the endpoints' currency, for all the run's LLM calls; they pause before a request that could exceed "
            "it. Empty: none."
        ),
    )


class EvaluationBudgetForm(forms.Form):
    budget = forms.DecimalField(
        label=_("Budget"),
        required=False,
        min_value=0,
        max_digits=16,
        decimal_places=8,
        help_text=_("Empty: no budget. LLM runs paused by the budget resume when you raise it."),
    )


class ContaminationCheckForm(forms.Form):
    release = forms.ModelChoiceField(label=_("Release"), queryset=Release.objects.select_related("benchmark"))
    name = forms.CharField(
        label=_("Corpus name"), max_length=200, help_text=_("e.g. the training set you intend to fine-tune on")
    )
    corpus = forms.FileField(
        label=_("Corpus (JSONL)"),
        help_text=_("One JSON object per line with a text, prompt or messages field, and an optional id."),
    )
