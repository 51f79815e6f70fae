"""Endpoints (an OpenAI-compatible server and model, its prices and limits) and the limits shared by workers.

An API key is never stored: an endpoint names the environment variable that holds it.
"""

from decimal import Decimal
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from llm.keys import validate_api_key_env

ENV_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$",
    _("Enter the name of an environment variable (letters, digits and underscores), not the key itself."),
)
MONEY = {"max_digits": 16, "decimal_places": 8}


class ApiStyle(models.TextChoices):
    CHAT = "chat", _("chat completions")
    COMPLETIONS = "completions", _("legacy completions (echo and log-probabilities)")


class ReasoningEffort(models.TextChoices):
    MINIMAL = "minimal", _("minimal")
    LOW = "low", _("low")
    MEDIUM = "medium", _("medium")
    HIGH = "high", _("high")


class TokenParameter(models.TextChoices):
    MAX_TOKENS = "max_tokens", "max_tokens"
    MAX_COMPLETION_TOKENS = "max_completion_tokens", "max_completion_tokens"


class Endpoint(models.Model):
    """An OpenAI-compatible model endpoint: where to send requests, with which defaults, at what price."""

    ApiStyle = ApiStyle
    ReasoningEffort = ReasoningEffort
    TokenParameter = TokenParameter

    name = models.CharField(_("name"), max_length=100, unique=True)
    base_url = models.CharField(
        _("base URL"), max_length=500, help_text=_("For example https://api.openai.com/v1 or http://127.0.0.1:8080/v1.")
    )
    model = models.CharField(_("model"), max_length=200)
    api_style = models.CharField(_("API style"), max_length=20, choices=ApiStyle.choices, default=ApiStyle.CHAT)
    api_key_env = models.CharField(
        _("API key environment variable"),
        max_length=100,
        blank=True,
        validators=[ENV_NAME_VALIDATOR, validate_api_key_env],
        help_text=_(
            "Name of the environment variable holding the key, e.g. OPENAI_API_KEY; it must end in _API_KEY (setting "
            "LLM_API_KEY_ENV_PATTERN) and may not be a Django setting. Empty: no key needed."
        ),
    )
    temperature = models.FloatField(
        _("temperature"), null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(2)]
    )
    max_tokens = models.PositiveIntegerField(_("max tokens"), null=True, blank=True)
    token_parameter = models.CharField(
        _("token limit parameter"),
        max_length=30,
        choices=TokenParameter.choices,
        default=TokenParameter.MAX_TOKENS,
        help_text=_(
            "The name the model takes for the reply's token limit: OpenAI's reasoning models take "
            "max_completion_tokens. Test connection detects it."
        ),
    )
    seed = models.BigIntegerField(_("seed"), null=True, blank=True)
    reasoning_effort = models.CharField(
        _("reasoning effort"),
        max_length=10,
        choices=ReasoningEffort.choices,
        blank=True,
        help_text=_("Sent only when set; only reasoning models accept it."),
    )
    price_input_per_mtok = models.DecimalField(
        _("price per million input tokens"), max_digits=12, decimal_places=4, default=Decimal("0")
    )
    price_output_per_mtok = models.DecimalField(
        _("price per million output tokens"), max_digits=12, decimal_places=4, default=Decimal("0")
    )
    price_batch_input_per_mtok = models.DecimalField(
        _("batch price per million input tokens"),
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("What the provider charges in batch mode; empty: the same as live."),
    )
    price_batch_output_per_mtok = models.DecimalField(
        _("batch price per million output tokens"),
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("What the provider charges in batch mode; empty: the same as live."),
    )
    batch_default = models.BooleanField(
        _("batch mode by default"),
        default=False,
        help_text=_("Runs on this endpoint are sent as provider batches (cheaper, results within 24 h) unless told."),
    )
    max_concurrency = models.PositiveIntegerField(
        _("maximum concurrency"),
        default=8,
        validators=[MinValueValidator(1), MaxValueValidator(1024)],
        help_text=_("Requests in flight at once, across all workers."),
    )
    rpm_limit = models.PositiveIntegerField(
        _("requests per minute"), default=0, help_text=_("Across all workers; 0 means no limit.")
    )
    timeout_seconds = models.FloatField(
        _("timeout (seconds)"), default=120, validators=[MinValueValidator(0.1), MaxValueValidator(3600)]
    )
    max_retries = models.PositiveSmallIntegerField(
        _("retries on transient errors"), default=6, validators=[MaxValueValidator(50)]
    )
    is_simulator = models.BooleanField(
        _("simulator"), default=False, help_text=_("The local simulator, not a real model: results are not science.")
    )
    is_active = models.BooleanField(_("active"), default=True)
    for_drafting = models.BooleanField(
        _("for drafting items"),
        default=False,
        help_text=_(
            "Experts may draft items with it, and see it only under a pseudonym. Mark only a model that will not "
            "answer in comparison sets: experts who read its drafts would recognise its writing."
        ),
    )
    embedding_model = models.CharField(
        _("embedding model"),
        max_length=200,
        blank=True,
        help_text=_(
            "The model this server embeds texts with (its /embeddings API, e.g. text-embedding-3-small), for the "
            "contamination check's embedding cosine. Empty: the endpoint does not embed."
        ),
    )
    embedding_dimensions = models.PositiveIntegerField(
        _("embedding dimensions"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(8192)],
        help_text=_("Sent as dimensions (text-embedding-3 models shorten their vectors); empty: the model's own."),
    )
    price_embedding_per_mtok = models.DecimalField(
        _("embedding price per million input tokens"),
        max_digits=12,
        decimal_places=4,
        default=Decimal("0"),
        validators=[MinValueValidator(0)],
    )
    notes = models.TextField(_("notes"), blank=True)
    # What Test connection found the endpoint supports (``llm.probe``), and when.
    capabilities = models.JSONField(_("capabilities"), default=dict, blank=True)
    probed_at = models.DateTimeField(_("capabilities probed at"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(api_style__in=ApiStyle.values), name="endpoint_api_style_valid"),
            models.CheckConstraint(
                condition=Q(reasoning_effort__in=[*ReasoningEffort.values, ""]), name="endpoint_reasoning_effort_valid"
            ),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1) & Q(max_concurrency__lte=1024), name="endpoint_concurrency_range"
            ),
            models.CheckConstraint(
                condition=Q(price_input_per_mtok__gte=0) & Q(price_output_per_mtok__gte=0),
                name="endpoint_prices_not_negative",
            ),
            models.CheckConstraint(
                condition=(Q(price_batch_input_per_mtok__isnull=True) | Q(price_batch_input_per_mtok__gte=0))
                & (Q(price_batch_output_per_mtok__isnull=True) | Q(price_batch_output_per_mtok__gte=0)),
                name="endpoint_batch_prices_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(temperature__isnull=True) | (Q(temperature__gte=0) & Q(temperature__lte=2)),
                name="endpoint_temperature_range",
            ),
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="endpoint_timeout_positive"),
            models.CheckConstraint(
                condition=Q(token_parameter__in=TokenParameter.values), name="endpoint_token_parameter_valid"
            ),
            models.CheckConstraint(
                condition=Q(price_embedding_per_mtok__gte=0), name="endpoint_embedding_price_not_negative"
            ),
        ]
        permissions = [("manage_endpoint", "Can create, edit and test LLM endpoints")]
        verbose_name = _("LLM endpoint")
        verbose_name_plural = _("LLM endpoints")

    def __str__(self) -> str:
        return self.name

    @property
    def drafting_alias(self) -> str:
        """The name labelling roles see on the drafting pages: it says nothing about the model."""
        return _("Drafting model %(n)s") % {"n": self.pk}

    def clean(self) -> None:
        parts = urlsplit(self.base_url or "")
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValidationError({"base_url": _("Enter an http:// or https:// URL, e.g. https://api.openai.com/v1.")})
        if parts.username or parts.password:
            raise ValidationError(
                {"base_url": _("Do not put credentials in the URL; name an environment variable instead.")}
            )

    def default_params(self) -> dict:
        """Return the parameters sent with every request unless a prompt overrides them."""
        params: dict = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params[self.token_parameter or TokenParameter.MAX_TOKENS] = self.max_tokens
        if self.seed is not None:
            params["seed"] = self.seed
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        return params

    @property
    def prices_batch(self) -> tuple[Decimal, Decimal]:
        return self.prices(batch=True)

    def prices(self, *, batch: bool = False) -> tuple[Decimal, Decimal]:
        """Return the (input, output) prices per million tokens, in batch mode or live."""
        if batch:
            price_input, price_output = self.price_batch_input_per_mtok, self.price_batch_output_per_mtok
            return (
                self.price_input_per_mtok if price_input is None else price_input,
                self.price_output_per_mtok if price_output is None else price_output,
            )
        return self.price_input_per_mtok, self.price_output_per_mtok


class EndpointSlot(models.Model):
    """One of an endpoint's ``max_concurrency`` request slots, held by one worker for a renewable lease.

    A request may be in flight only under a slot its worker holds, so the limit holds across every worker process
    and machine; a crashed worker's slots expire with their lease (``llm.worker.limits``).
    """

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="slots", db_index=False)
    number = models.PositiveIntegerField(_("number"))
    holder = models.CharField(_("holder"), max_length=100, blank=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)

    class Meta:
        ordering = ["endpoint", "number"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "number"], name="endpointslot_number_unique_per_endpoint"),
            models.CheckConstraint(
                condition=Q(holder="") | Q(expires_at__isnull=False), name="endpointslot_held_slot_expires"
            ),
        ]
        verbose_name = _("endpoint slot")
        verbose_name_plural = _("endpoint slots")

    def __str__(self) -> str:
        return f"{self.endpoint_id}#{self.number}"


class EndpointPace(models.Model):
    """When the next request to an endpoint may start, shared by every worker to keep its ``rpm_limit``."""

    endpoint = models.OneToOneField(Endpoint, on_delete=models.CASCADE, primary_key=True, related_name="pace")
    next_start_at = models.DateTimeField(_("next start at"))

    class Meta:
        verbose_name = _("endpoint pace")
        verbose_name_plural = _("endpoint paces")

    def __str__(self) -> str:
        return f"{self.endpoint_id}@{self.next_start_at}"
