"""Forms of the labelling pages: building a comparison set and generating model responses."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.items.models import Benchmark
from annotation.queue.selectors import queue_workers
from llm.models import Endpoint


class ComparisonSetForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.all())
    experts = forms.MultipleChoiceField(label=_("Experts"), widget=forms.CheckboxSelectMultiple)
    per_stratum = forms.IntegerField(
        label=_("Comparisons per dimension and language (empty: all)"), min_value=1, required=False
    )
    experts_per_comparison = forms.IntegerField(
        label=_("Experts per comparison (empty: every expert labels all)"), min_value=1, required=False
    )
    seed = forms.IntegerField(label=_("Seed"), initial=0)
    order = forms.ChoiceField(
        label=_("Serving order"),
        choices=[("random", _("stratified random")), ("active", _("active (most informative first)"))],
        initial="random",
        required=False,
        help_text=_("Active: comparisons where the candidate judges disagree come first; the draws are recorded."),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.eligible = {str(u.pk): u for u in queue_workers(permission="labelling.label_comparisons")}
        self.fields["experts"].choices = [(pk, u.get_username()) for pk, u in self.eligible.items()]


class GenerateForm(forms.Form):
    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.all())
    endpoint = forms.ModelChoiceField(label=_("Endpoint"), queryset=None)
    languages = forms.MultipleChoiceField(
        label=_("Languages"),
        choices=[("en", _("English")), ("zh", _("Chinese"))],
        initial=["en", "zh"],
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].queryset = Endpoint.objects.filter(is_active=True)
