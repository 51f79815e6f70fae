"""Forms for the item pages: status decisions, filters, the bilingual editor, drafting templates and drafting jobs."""

from collections.abc import Iterator

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.forms.models import ModelChoiceIterator
from django.http import QueryDict
from django.urls import reverse_lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.items.blinding import drafting_endpoints
from annotation.items.content import LANGUAGES
from annotation.items.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Item, ItemTemplate, Scenario
from llm.models import Endpoint

EXTRA_OPTIONS = 2


# Words the picker script shows, in the interface language.
PICKER_LABELS = {"data-remove-label": _("Remove"), "data-empty-label": _("No matches")}


def _search_words(instance: object) -> str:
    """Return what a picker matches an option on: both names, the code, and the valence or domain."""
    words = [getattr(instance, name, "") for name in ("name_en", "name_zh", "code", "valence")]
    domain = getattr(instance, "domain", None)
    if domain is not None:
        words += [domain.name_en, domain.name_zh]
    return " ".join(str(w) for w in words if w)


class PickerMixin:
    """Mark a select for the searchable picker of static/js/app.js; each option carries its words to search on.

    Without JavaScript the select stays a plain select, so the form works as before.
    """

    def __init__(self, attrs: dict | None = None, placeholder: str = "") -> None:
        marked = {"data-picker": "", **PICKER_LABELS, **({"data-placeholder": placeholder} if placeholder else {})}
        super().__init__({**marked, **(attrs or {})})

    def create_option(self, name: str, value: object, *args: object, **kwargs: object) -> dict:
        option = super().create_option(name, value, *args, **kwargs)
        instance = getattr(value, "instance", None)
        if instance is not None:
            option["attrs"]["data-search"] = _search_words(instance)
        return option


class PickerSelectMultiple(PickerMixin, forms.SelectMultiple):
    """A multi-select shown as a searchable picker with removable chips."""


class PickerSelect(PickerMixin, forms.Select):
    """A single select shown as a searchable picker."""


class StatusDecisionForm(forms.Form):
    """A lead expert's or admin's decision on an item's status, with the reason recorded alongside it."""

    ACTIONS = {
        Item.Status.ACCEPTED: _("Accept"),
        Item.Status.REJECTED: _("Reject"),
        Item.Status.DRAFT: _("Return to draft"),
    }

    status = forms.ChoiceField(label=_("Decision"), widget=forms.RadioSelect)
    reason = forms.CharField(
        label=_("Reason"),
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Recorded with the decision and shown in the item's status history."),
    )

    def __init__(self, *args: object, item: Item, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        actions = self.ACTIONS.items()
        self.fields["status"].choices = [(value, label) for value, label in actions if value != item.status]


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


class ListedChoiceIterator(ModelChoiceIterator):
    """The choices of a field given ``listed`` (the rows read already), else of its queryset, as Django's."""

    def __iter__(self) -> Iterator[tuple[object, str]]:
        if self.field.listed is None:
            yield from super().__iter__()
            return
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for obj in self.field.listed:
            yield self.choice(obj)

    def __len__(self) -> int:
        if self.field.listed is None:
            return super().__len__()
        return len(self.field.listed) + (1 if self.field.empty_label is not None else 0)


class ListedMultipleChoiceField(forms.ModelMultipleChoiceField):
    """A multiple choice whose options can be given as rows read already (``listed``), so that a page that needs
    them for something else too (the editor's initial emotions) reads them once; input is validated against the
    queryset as always."""

    iterator = ListedChoiceIterator
    listed: list | None = None


class ItemMetaForm(forms.Form):
    """Classification fields of the editor; content fields are read from the POST by ``content_from_post``."""

    dimension = forms.ModelChoiceField(label=_("Dimension"), queryset=Dimension.objects.none())
    scenario = forms.ModelChoiceField(
        label=_("Scenario"),
        queryset=Scenario.objects.all(),
        required=False,
        widget=PickerSelect(placeholder=_("Search scenarios…")),
    )
    emotions = ListedMultipleChoiceField(
        label=_("Emotions"),
        queryset=EmotionCategory.objects.all(),
        required=False,
        widget=PickerSelectMultiple(placeholder=_("Search emotions…")),
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


class TemplateForm(forms.Form):
    dimension = forms.ModelChoiceField(label=_("Dimension"), queryset=Dimension.objects.filter(children__isnull=True))
    kind = forms.ChoiceField(
        label=_("Item kind"),
        choices=[*Item.Kind.choices, ("reply_set", _("EiCAP reply sets (preferred and distractors)"))],
    )
    instructions = forms.CharField(label=_("Instructions"), widget=forms.Textarea(attrs={"rows": 5}))
    constraints = forms.CharField(label=_("Constraints"), widget=forms.Textarea(attrs={"rows": 3}), required=False)
    scenarios = forms.ModelMultipleChoiceField(
        label=_("Target scenarios"),
        queryset=Scenario.objects.select_related("domain"),
        required=False,
        widget=PickerSelectMultiple(placeholder=_("Search scenarios…")),
    )
    emotions = forms.ModelMultipleChoiceField(
        label=_("Target emotions"),
        queryset=EmotionCategory.objects.all(),
        required=False,
        widget=PickerSelectMultiple(placeholder=_("Search emotions…")),
    )
    # Uids typed or picked: the picker searches the items API and writes the chosen uids into this field.
    seed_items = forms.CharField(
        label=_("Seed items (uids of expert-revised items)"),
        required=False,
        widget=forms.TextInput(
            attrs={
                "data-picker-remote": format_lazy("{}?page_size=8&q=", reverse_lazy("item-list")),
                **PICKER_LABELS,
                "data-placeholder": _("Search items…"),
            }
        ),
    )

    def clean_seed_items(self) -> list[Item]:
        uids = [u for u in self.cleaned_data.get("seed_items", "").replace(",", " ").split() if u]
        items = list(Item.objects.filter(uid__in=uids))
        missing = sorted(set(uids) - {i.uid for i in items})
        if missing:
            raise forms.ValidationError(gettext("Unknown items: %(uids)s") % {"uids": ", ".join(missing)})
        return items


class DraftingEndpointField(forms.ModelChoiceField):
    """The endpoints experts may draft with; a user who may not see endpoints sees each under its pseudonym."""

    def __init__(self, *args: object, named: bool = True, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.named = named

    def label_from_instance(self, obj: Endpoint) -> str:
        return str(obj) if self.named else obj.drafting_alias


class JobForm(forms.Form):
    template = forms.ModelChoiceField(label=_("Template"), queryset=ItemTemplate.objects.select_related("dimension"))
    endpoint = DraftingEndpointField(
        label=_("Drafting model"),
        queryset=Endpoint.objects.none(),
        help_text=_("Only the endpoints an admin marked for drafting, never a model that answers in an open set."),
    )
    count = forms.IntegerField(label=_("How many candidates"), min_value=1, max_value=1000, initial=10)
    languages = forms.MultipleChoiceField(
        label=_("Languages"),
        choices=[("en", _("English")), ("zh", _("Chinese"))],
        widget=forms.CheckboxSelectMultiple,
        initial=["en"],
    )
    translate = forms.BooleanField(label=_("Also draft the other language (marked machine-drafted)"), required=False)
    turns = forms.TypedChoiceField(
        label=_("User turns per dialogue (reply-set templates)"),
        choices=[(1, _("one turn")), (2, _("two turns: turn 2 reframes turn 1"))],
        coerce=int,
        initial=1,
        required=False,
        empty_value=1,
    )
    given_turns = forms.CharField(
        label=_("Your own user turns (reply-set templates, optional)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            'A JSON list of dialogues, each a list of one or two turns: [[{"en": "...", "zh": "..."}]]. One reply '
            "set is drafted per dialogue, and the count is ignored."
        ),
    )

    def __init__(self, *args: object, user: AbstractBaseUser | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["endpoint"]
        field.queryset = drafting_endpoints()
        field.named = bool(user and user.has_perm("llm.view_endpoint"))


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


class ReplyAuditForm(forms.Form):
    """An expert's decision on one reply; an edit carries the new text (and principle) per language."""

    decision = forms.ChoiceField(
        label=_("Decision"), choices=[("accept", _("Accept")), ("reject", _("Reject")), ("edit", _("Save edit"))]
    )
    reason = forms.CharField(label=_("Reason or note"), required=False, max_length=2000)
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)
    text_en = forms.CharField(label=_("English text"), required=False, widget=forms.Textarea(attrs={"rows": 3}))
    principle_en = forms.CharField(label=_("English principle"), required=False)
    text_zh = forms.CharField(label=_("Chinese text"), required=False, widget=forms.Textarea(attrs={"rows": 3}))
    principle_zh = forms.CharField(label=_("Chinese principle"), required=False)

    def content(self, languages: list[str]) -> dict:
        data = self.cleaned_data
        return {lang: {"text": data[f"text_{lang}"], "principle": data[f"principle_{lang}"]} for lang in languages}


class KeyReviewForm(forms.Form):
    """An expert's review of a probe turn on which the independent judge did not choose the key."""

    review = forms.ChoiceField(
        label=_("Review"), choices=[("key_stands", _("The key stands")), ("key_wrong", _("The key is wrong"))]
    )
    note = forms.CharField(label=_("Note"), required=False, max_length=2000)
