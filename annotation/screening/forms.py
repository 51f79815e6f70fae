"""Forms of the screening pages: opening a round."""

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.items.models import Benchmark, Dimension, Item
from annotation.queue.selectors import queue_workers
from annotation.screening.models import Criterion

MAX_ITEMS = 5000


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
    dimension = forms.ModelChoiceField(
        label=_("Only dimension"),
        queryset=Dimension.objects.select_related("benchmark").order_by("benchmark__slug", "position", "code"),
        required=False,
        empty_label=_("All dimensions"),
    )
    kind = forms.ChoiceField(label=_("Only kind"), choices=[("", _("All kinds")), *Item.Kind.choices], required=False)
    criteria = forms.ModelMultipleChoiceField(
        label=_("Criteria"), queryset=Criterion.objects.all(), widget=forms.CheckboxSelectMultiple
    )
    reviewers = forms.MultipleChoiceField(label=_("Reviewers"), widget=forms.CheckboxSelectMultiple)
    reviewers_per_item = forms.IntegerField(label=_("Reviewers per item"), min_value=1, initial=2)
    deadline = forms.DateTimeField(
        label=_("Deadline"), required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    items = forms.CharField(
        label=_("Only these items"),
        required=False,
        max_length=100_000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Item uids separated by spaces or commas (the items checked on the item list); empty for all."),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dimension"].label_from_instance = lambda d: f"{d.benchmark.name} · {d.name}"
        self.eligible = {str(u.pk): u for u in queue_workers(permission="screening.review_item")}
        self.fields["reviewers"].choices = [(pk, u.get_username()) for pk, u in self.eligible.items()]
        self.fields["criteria"].initial = list(Criterion.objects.filter(dimension=None))

    def clean_items(self) -> list[str]:
        uids = list(dict.fromkeys(u for u in re.split(r"[\s,]+", self.cleaned_data.get("items") or "") if u))
        if len(uids) > MAX_ITEMS:
            raise forms.ValidationError(_("At most %(n)s items in one round.") % {"n": MAX_ITEMS})
        return uids

    def clean(self) -> dict:
        data = super().clean()
        benchmark, dimension = data.get("benchmark"), data.get("dimension")
        if benchmark and dimension and dimension.benchmark_id != benchmark.pk:
            self.add_error("dimension", _("This dimension belongs to another benchmark."))
        elif dimension:
            data["dimension"] = dimension.code  # the round's filter stores the code
        return data
