"""Search and filters for the lists a user scans (comparison sets, rounds, runs, releases): one form, one template.

A list page builds ``ListFilterForm`` from ``request.GET`` with the benchmarks and statuses it offers, and calls
``apply`` on its query set: the text is searched in the fields the page names (case-insensitive, every word must
match one of them), the benchmark by slug, the status through the lookups the page gives for each value. A value
that is not offered is refused with the form's error (shown above the list), and the list is then not filtered.
"""

from collections.abc import Mapping, Sequence

from django import forms
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

MAX_SEARCH_CHARS = 200


class ListFilterForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=MAX_SEARCH_CHARS, strip=True)

    def __init__(
        self,
        data: Mapping[str, str] | None,
        *,
        benchmarks: Sequence[tuple[str, str]] = (),
        statuses: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(data or None)
        if benchmarks:
            self.fields["benchmark"] = forms.ChoiceField(
                label=_("Benchmark"), required=False, choices=[("", _("all")), *benchmarks]
            )
        if statuses:
            self.fields["status"] = forms.ChoiceField(
                label=_("Status"), required=False, choices=[("", _("all")), *statuses]
            )
        self.fields["q"].widget.attrs.update({"type": "search", "placeholder": _("name or title")})

    @property
    def active(self) -> bool:
        """Whether any filter is set (the page then offers to clear them)."""
        return self.is_bound and self.is_valid() and any(self.cleaned_data.values())

    def apply(
        self,
        queryset: QuerySet,
        *,
        search: Sequence[str],
        benchmark: str = "benchmark__slug",
        status: Mapping[str, Q] | None = None,
    ) -> QuerySet:
        """Return ``queryset`` filtered by the form's valid values (unfiltered when the form is not valid)."""
        if not self.is_bound or not self.is_valid():
            return queryset
        data = self.cleaned_data
        for word in (data.get("q") or "").split():
            queryset = queryset.filter(_any(search, word))
        if data.get("benchmark"):
            queryset = queryset.filter(**{benchmark: data["benchmark"]})
        if data.get("status"):
            queryset = queryset.filter(status[data["status"]] if status else Q(status=data["status"]))
        return queryset


def _any(fields: Sequence[str], word: str) -> Q:
    condition = Q()
    for field in fields:
        condition |= Q(**{f"{field}__icontains": word})
    return condition
