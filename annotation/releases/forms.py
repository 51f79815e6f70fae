"""Forms of the release pages: build a draft release, edit it and freeze it."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.items.models import Benchmark, Item


class ReleaseCreateForm(forms.Form):
    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.all())
    version = forms.CharField(label=_("Version"), max_length=40, help_text=_("e.g. 1.0.0"))
    title = forms.CharField(label=_("Title"), max_length=200)
    description = forms.CharField(label=_("Description"), widget=forms.Textarea(attrs={"rows": 3}), required=False)
    licence = forms.CharField(label=_("Licence"), max_length=200, required=False, initial="CC BY 4.0")
    citation = forms.CharField(label=_("Citation"), widget=forms.Textarea(attrs={"rows": 3}), required=False)
    status = forms.ChoiceField(
        label=_("Items with status"),
        choices=[("accepted", _("accepted")), ("", _("any status"))],
        required=False,
        initial="accepted",
    )
    dimension = forms.CharField(label=_("Only dimension (code)"), required=False)
    kind = forms.ChoiceField(label=_("Only kind"), choices=[("", _("All kinds")), *Item.Kind.choices], required=False)

    def filters(self) -> dict:
        """Return the item filter the release is built from."""
        return {k: self.cleaned_data[k] for k in ("status", "dimension", "kind") if self.cleaned_data.get(k)}

    @staticmethod
    def success_message(release: object) -> str:
        return _("Draft release %(version)s created with %(n)s items.") % {
            "version": release.version,
            "n": release.entries.count(),
        }


def _uids(value: str) -> list[str]:
    return [uid for uid in value.replace(",", " ").split() if uid]


class ReleaseEditForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200)
    description = forms.CharField(label=_("Description"), widget=forms.Textarea(attrs={"rows": 3}), required=False)
    licence = forms.CharField(label=_("Licence"), max_length=200, required=False)
    citation = forms.CharField(label=_("Citation"), widget=forms.Textarea(attrs={"rows": 3}), required=False)
    add = forms.CharField(label=_("Add items (uids)"), required=False)
    remove = forms.CharField(label=_("Remove items (uids)"), required=False)
    rebuild = forms.BooleanField(label=_("Rebuild from the filter and pin current revisions"), required=False)

    def __init__(self, *args: object, instance_release: object, **kwargs: object) -> None:
        initial = {k: getattr(instance_release, k) for k in ("title", "description", "licence", "citation")}
        super().__init__(*args, initial=initial, **kwargs)

    def clean_add(self) -> list[str]:
        return _uids(self.cleaned_data.get("add", ""))

    def clean_remove(self) -> list[str]:
        return _uids(self.cleaned_data.get("remove", ""))

    def error_list(self) -> list[str]:
        return [f"{self.fields[k].label if k in self.fields else ''}: {' '.join(v)}" for k, v in self.errors.items()]

    @staticmethod
    def saved_message() -> str:
        return _("Release saved.")

    @staticmethod
    def confirm_message() -> str:
        return _("Tick the confirmation box: freezing cannot be undone.")

    @staticmethod
    def frozen_message(release: object) -> str:
        return _("Release %(version)s is frozen.") % {"version": release.version}
