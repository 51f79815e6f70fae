"""Forms for the LLM pages: endpoints and starting a run from a JSONL file of prompts."""


from decimal import Decimal

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.inputs import parse_json
from llm import parsers
from llm.models import Endpoint, Run
from llm.services import ENDPOINT_FIELDS

MAX_PROMPTS_UPLOAD_BYTES = 50 * 1024 * 1024


class EndpointForm(forms.ModelForm):
    class Meta:
        model = Endpoint
        fields = list(ENDPOINT_FIELDS)
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        # Test connection detects it; left out, it keeps its value (max_tokens for a new endpoint).
        self.fields["token_parameter"].required = False
        # Only endpoints with an embedding model are charged it: left out, it is 0.
        self.fields["price_embedding_per_mtok"].required = False

    def clean_price_embedding_per_mtok(self) -> Decimal:
        price = self.cleaned_data.get("price_embedding_per_mtok")
        return Decimal("0") if price is None else price

    def clean_token_parameter(self) -> str:
        chosen = self.cleaned_data.get("token_parameter")
        if chosen:
            return chosen
        return self.instance.token_parameter if self.instance.pk else Endpoint.TokenParameter.MAX_TOKENS


class RunFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("All statuses")), *Run.Status.choices]
    )


class RunCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    endpoint = forms.ModelChoiceField(label=_("Endpoint"), queryset=Endpoint.objects.filter(is_active=True))
    parser = forms.ChoiceField(label=_("Parser"))
    prompts = forms.FileField(
        label=_("Prompts (JSONL)"),
        help_text=_('One JSON object per line: {"key": "q1", "messages": [{"role": "user", "content": "..."}]}.'),
    )
    fresh = forms.BooleanField(label=_("Fresh (do not use the cache)"), required=False)
    max_parse_retries = forms.IntegerField(
        label=_("Retries on unparseable replies"), min_value=0, max_value=10, required=False
    )
    mode = forms.ChoiceField(
        label=_("Send as"),
        required=False,
        choices=[("", _("the endpoint's default")), *Run.Mode.choices],
        help_text=_("Provider batches cost about half as much and come back within 24 hours."),
    )
    batch_fallback = forms.ChoiceField(
        label=_("Requests that fail or expire in a batch"),
        choices=[(Run.Mode.LIVE, _("send them again live")), (Run.Mode.BATCH, _("send them in a new batch"))],
        initial=Run.Mode.LIVE,
        required=False,
    )
    budget = forms.DecimalField(
        label=_("Budget"),
        required=False,
        min_value=0,
        max_digits=16,
        decimal_places=8,
        help_text=_("In the endpoint's currency; the run pauses before a request that could exceed it. Empty: none."),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["parser"].choices = [(name, name) for name in parsers.names()]
        self.fields["max_parse_retries"].initial = settings.LLM_MAX_PARSE_RETRIES

    def clean_prompts(self) -> list[dict]:
        upload = self.cleaned_data["prompts"]
        if upload.size > MAX_PROMPTS_UPLOAD_BYTES:
            raise forms.ValidationError(_("The file is larger than 50 MB."))
        return read_prompts(upload.read())


class RunBudgetForm(forms.Form):
    budget = forms.DecimalField(
        label=_("Budget"),
        required=False,
        min_value=0,
        max_digits=16,
        decimal_places=8,
        help_text=_("Empty: no budget. A run paused by its budget resumes when you raise it."),
    )


def read_prompts(data: bytes) -> list[dict]:
    """Read prompts from JSONL bytes; raise ``ValidationError`` naming the first bad line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise forms.ValidationError(_("The file is not UTF-8 text.")) from exc
    prompts = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except ValueError as exc:  # bad JSON, or refused by core.inputs (too deep, a NUL character)
            raise forms.ValidationError(
                _("Line %(line)s is not valid JSON: %(error)s") % {"line": number, "error": exc}
            ) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Line %(line)s is not a JSON object.") % {"line": number})
        prompts.append(value)
    if not prompts:
        raise forms.ValidationError(_("The file holds no prompts."))
    return prompts
