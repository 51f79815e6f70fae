"""Forms for the item pages: filters and the bilingual editor."""

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from annotation.content import LANGUAGES
from annotation.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Item, Scenario

EXTRA_OPTIONS = 2


class ItemFilterForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False)
    benchmark = forms.ChoiceField(label=_("Benchmark"), required=False)
    dimension = forms.ChoiceField(label=_("Dimension"), required=False)
    kind = forms.ChoiceField(label=_("Kind"), required=False, choices=[("", _("All kinds")), *Item.Kind.choices])
    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("All statuses")), *Item.Status.choices]
    )
    languages = forms.ChoiceField(
        label=_("Languages"),
        required=False,
        choices=[
            ("", _("Any")),
            ("both", _("Both languages")),
            ("missing", _("A language missing")),
            ("en_only", _("English only")),
            ("zh_only", _("Chinese only")),
        ],
    )
    parity = forms.ChoiceField(
        label=_("Parity"),
        required=False,
        choices=[("", _("Any")), ("problems", _("With parity problems")), ("ok", _("Parity OK"))],
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = [("", _("All benchmarks"))] + [
            (b.slug, b.name) for b in Benchmark.objects.all()
        ]
        dims = Dimension.objects.select_related("benchmark").order_by("benchmark__slug", "position")
        self.fields["dimension"].choices = [("", _("All dimensions"))] + [
            (d.code, f"{d.benchmark.name_en} · {d.name}") for d in dims
        ]


class ItemMetaForm(forms.Form):
    """Classification fields of the editor; content fields are read from the POST by ``content_from_post``."""

    dimension = forms.ModelChoiceField(label=_("Dimension"), queryset=Dimension.objects.none())
    scenario = forms.ModelChoiceField(label=_("Scenario"), queryset=Scenario.objects.all(), required=False)
    emotions = forms.ModelMultipleChoiceField(
        label=_("Emotions"), queryset=EmotionCategory.objects.all(), required=False
    )
    crisis_level = forms.ModelChoiceField(
        label=_("Crisis risk level"), queryset=CrisisLevel.objects.all(), required=False
    )
    difficulty = forms.ChoiceField(label=_("Difficulty"), required=False, choices=[("", "—"), *Item.Difficulty.choices])
    message = forms.CharField(label=_("Revision message"), max_length=500, required=False)
    base_revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: object, benchmark: Benchmark, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dimension"].queryset = Dimension.objects.filter(benchmark=benchmark)
        self.fields["scenario"].queryset = Scenario.objects.select_related("domain")


class ItemCreateForm(forms.Form):
    uid = forms.SlugField(label=_("Item uid"), max_length=100)
    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.all())
    kind = forms.ChoiceField(label=_("Kind"), choices=Item.Kind.choices)

    def clean_uid(self) -> str:
        uid = self.cleaned_data["uid"]
        if Item.objects.filter(uid=uid).exists():
            raise forms.ValidationError(_("An item with this uid already exists."))
        return uid


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _options(data: QueryDict, prefix: str) -> tuple[list[str], int | None]:
    """Read option inputs ``{prefix}option-N`` and the chosen answer radio, dropping blank options."""
    indices = sorted(
        int(key.rsplit("-", 1)[1])
        for key in data
        if key.startswith(f"{prefix}option-") and key.rsplit("-", 1)[1].isdigit()
    )
    chosen = _int_or_none(data.get(f"{prefix}answer"))
    options: list[str] = []
    answer = None
    for index in indices:
        text = data.get(f"{prefix}option-{index}", "").strip()
        if not text:
            continue
        if chosen == index:
            answer = len(options)
        options.append(text)
    return options, answer


def content_from_post(kind: str, data: QueryDict) -> dict:
    """Build bilingual content from the editor's inputs; an untouched empty language is left out."""
    content = {}
    for lang in LANGUAGES:
        p = f"{lang}-"
        version: dict = {"context": data.get(f"{p}context", "").strip()}
        if kind == "mcq":
            version["question"] = data.get(f"{p}question", "").strip()
            version["options"], version["answer"] = _options(data, p)
            filled = version["question"] or version["options"]
        elif kind == "multi_turn_choice":
            turns = []
            turn_indices = sorted(
                {int(k.split("-")[2]) for k in data if k.startswith(f"{p}turn-") and k.split("-")[2].isdigit()}
            )
            for t in turn_indices:
                user_text = data.get(f"{p}turn-{t}-user", "").strip()
                options, answer = _options(data, f"{p}turn-{t}-")
                if user_text or options:
                    turns.append({"user": user_text, "options": options, "answer": answer})
            version["turns"] = turns
            filled = bool(turns)
        else:
            version["prompt"] = data.get(f"{p}prompt", "").strip()
            filled = bool(version["prompt"])
        if filled or version["context"]:
            content[lang] = version
    return content


def editor_rows(kind: str, version: dict | None, lang: str) -> dict:
    """Return what the editor template renders for one language, with blank rows for additions."""
    version = version or {}
    if kind == "mcq":
        options = list(version.get("options") or [])
        return {
            "context": version.get("context", ""),
            "question": version.get("question", ""),
            "options": _option_rows(options, version.get("answer")),
        }
    if kind == "multi_turn_choice":
        turns = [
            {
                "number": t + 1,
                "prefix": f"{lang}-turn-{t}-",
                "user": turn.get("user", ""),
                "options": _option_rows(turn.get("options") or [], turn.get("answer")),
            }
            for t, turn in enumerate(version.get("turns") or [])
        ]
        n = len(turns)
        turns.append(
            {"number": n + 1, "prefix": f"{lang}-turn-{n}-", "user": "", "options": _option_rows([], None), "new": True}
        )
        return {"context": version.get("context", ""), "turns": turns}
    return {"context": version.get("context", ""), "prompt": version.get("prompt", "")}


def _option_rows(options: list[str], answer: int | None) -> list[dict]:
    letters = "ABCDEFGHIJKL"
    rows = [{"index": i, "letter": letters[i], "text": text, "checked": answer == i} for i, text in enumerate(options)]
    for extra in range(len(options), min(len(options) + EXTRA_OPTIONS, 12)):
        rows.append({"index": extra, "letter": letters[extra], "text": "", "checked": False})
    return rows


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
