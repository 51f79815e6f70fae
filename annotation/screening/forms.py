"""Forms of the screening pages: opening a round."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.items.models import Benchmark, Item
from annotation.queue.selectors import queue_workers
from annotation.screening.models import Criterion


class RoundOpenForm(forms.Form):
    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.all())
    title = forms.CharField(label=_("Title"), max_length=200)
    status = forms.ChoiceField(
        label=_("Items with status"),
        choices=[
            ("", _("draft or in screening")),
            ("draft", _("draft")),
            ("in_screening", _("in screening")),
        ],
        required=False,
    )
    dimension = forms.CharField(label=_("Only dimension (code)"), required=False)
    kind = forms.ChoiceField(label=_("Only kind"), choices=[("", _("All kinds")), *Item.Kind.choices], required=False)
    criteria = forms.ModelMultipleChoiceField(
        label=_("Criteria"), queryset=Criterion.objects.all(), widget=forms.CheckboxSelectMultiple
    )
    reviewers = forms.MultipleChoiceField(label=_("Reviewers"), widget=forms.CheckboxSelectMultiple)
    reviewers_per_item = forms.IntegerField(label=_("Reviewers per item"), min_value=1, initial=2)
    deadline = forms.DateTimeField(
        label=_("Deadline"), required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.eligible = {str(u.pk): u for u in queue_workers(permission="screening.review_item")}
        self.fields["reviewers"].choices = [(pk, u.get_username()) for pk, u in self.eligible.items()]
        self.fields["criteria"].initial = list(Criterion.objects.filter(dimension=None))
