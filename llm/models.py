"""LLM endpoints, the call log that doubles as the cache, and background runs split into chunks.

An API key is never stored: an endpoint names the environment variable that holds it.
"""

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q
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


class Endpoint(models.Model):
    """An OpenAI-compatible model endpoint: where to send requests, with which defaults, at what price."""

    ApiStyle = ApiStyle

    class ReasoningEffort(models.TextChoices):
        MINIMAL = "minimal", _("minimal")
        LOW = "low", _("low")
        MEDIUM = "medium", _("medium")
        HIGH = "high", _("high")

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
    notes = models.TextField(_("notes"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(api_style__in=ApiStyle.values), name="endpoint_api_style_valid"),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1) & Q(max_concurrency__lte=1024), name="endpoint_concurrency_range"
            ),
            models.CheckConstraint(
                condition=Q(price_input_per_mtok__gte=0) & Q(price_output_per_mtok__gte=0),
                name="endpoint_prices_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(temperature__isnull=True) | (Q(temperature__gte=0) & Q(temperature__lte=2)),
                name="endpoint_temperature_range",
            ),
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="endpoint_timeout_positive"),
        ]
        permissions = [("manage_endpoint", "Can create, edit and test LLM endpoints")]
        verbose_name = _("LLM endpoint")
        verbose_name_plural = _("LLM endpoints")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from urllib.parse import urlsplit

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
            params["max_tokens"] = self.max_tokens
        if self.seed is not None:
            params["seed"] = self.seed
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        return params


class CallStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")


class LLMCall(models.Model):
    """One request to an endpoint and what came back: the audit trail and the cache (one row per request hash)."""

    Status = CallStatus

    class ErrorKind(models.TextChoices):
        RATE_LIMITED = "rate_limited", _("rate limited (429)")
        SERVER_ERROR = "server_error", _("server error (5xx)")
        TIMEOUT = "timeout", _("timeout")
        CONNECTION = "connection", _("connection failed")
        BAD_REQUEST = "bad_request", _("bad request (400)")
        AUTH = "auth", _("not authorised (401/403)")
        NOT_FOUND = "not_found", _("not found (404)")
        INVALID_RESPONSE = "invalid_response", _("invalid response")
        MISSING_KEY = "missing_key", _("API key not set")
        KEY_NOT_ALLOWED = "key_not_allowed", _("API key variable not allowed")
        UNPARSED = "unparsed", _("unparseable content")
        OTHER = "other", _("other error")

    # Indexed through the unique (endpoint, request hash) constraint.
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="calls", db_index=False)
    request_hash = models.CharField(_("request hash"), max_length=64)
    fresh = models.BooleanField(_("fresh"), default=False, help_text=_("Sent on purpose although it may be cached."))
    request = models.JSONField(_("request"))
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    http_status = models.PositiveSmallIntegerField(_("HTTP status"), null=True, blank=True)
    error_kind = models.CharField(_("error kind"), max_length=20, choices=ErrorKind.choices, blank=True)
    error = models.TextField(_("error"), blank=True)
    response_text = models.TextField(_("response text"), blank=True)
    response_json = models.JSONField(_("raw response"), null=True, blank=True)
    parsed = models.BooleanField(_("parsed"), null=True, blank=True)
    input_tokens = models.PositiveIntegerField(_("input tokens"), default=0)
    output_tokens = models.PositiveIntegerField(_("output tokens"), default=0)
    cost = models.DecimalField(_("cost"), default=Decimal("0"), **MONEY)
    latency_ms = models.PositiveIntegerField(_("latency (ms)"), null=True, blank=True)
    retries = models.PositiveIntegerField(_("retries"), default=0)
    sends = models.PositiveIntegerField(
        _("billable sends"), default=0, help_text=_("Responses received; each one was billed once.")
    )
    attempts = models.JSONField(_("attempts"), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "request_hash"], name="llmcall_one_row_per_request"),
            models.CheckConstraint(condition=Q(status__in=CallStatus.values), name="llmcall_status_valid"),
            models.CheckConstraint(condition=Q(cost__gte=0), name="llmcall_cost_not_negative"),
        ]
        indexes = [models.Index(fields=["endpoint", "status"])]
        verbose_name = _("LLM call")
        verbose_name_plural = _("LLM calls")

    def __str__(self) -> str:
        return f"{self.endpoint_id}:{self.request_hash[:12]}"


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    PAUSED = "paused", _("paused")
    CANCELLED = "cancelled", _("cancelled")
    FAILED = "failed", _("failed")
    DONE = "done", _("done")


class Run(models.Model):
    """A batch of prompts sent to one endpoint in the background, each reply parsed by a named parser."""

    Status = RunStatus

    # The state machine: every status change goes through ``llm.lifecycle``, which allows only these moves.
    ACTIVE = (Status.QUEUED, Status.RUNNING)
    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)
    TRANSITIONS: dict[str, tuple[str, ...]] = {
        Status.QUEUED: (Status.RUNNING, Status.PAUSED, Status.CANCELLED, Status.FAILED, Status.DONE),
        # Back to queued: a resume of a run whose workers all died.
        Status.RUNNING: (Status.PAUSED, Status.CANCELLED, Status.FAILED, Status.DONE, Status.QUEUED),
        # A paused run's last chunk in flight may still finish it.
        Status.PAUSED: (Status.QUEUED, Status.CANCELLED, Status.DONE),
        Status.FAILED: (Status.QUEUED, Status.CANCELLED),
        Status.DONE: (),
        Status.CANCELLED: (),
    }

    name = models.CharField(_("name"), max_length=200)
    purpose = models.CharField(_("purpose"), max_length=50, blank=True, help_text=_("Which app or study started it."))
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="runs")
    parser = models.CharField(_("parser"), max_length=100)
    fresh = models.BooleanField(
        _("fresh"), default=False, help_text=_("Send every request even when an identical one is cached.")
    )
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.QUEUED)
    max_parse_retries = models.PositiveSmallIntegerField(_("retries on unparseable replies"), default=2)
    chunk_size = models.PositiveIntegerField(_("chunk size"), default=50)
    planned = models.PositiveIntegerField(_("planned"), default=0)
    done = models.PositiveIntegerField(_("done"), default=0)
    cached = models.PositiveIntegerField(_("from cache"), default=0)
    failed = models.PositiveIntegerField(_("failed"), default=0)
    spent = models.DecimalField(_("spent"), default=Decimal("0"), **MONEY)
    estimated_cost = models.DecimalField(
        _("estimated cost before starting"), default=Decimal("0"), help_text=_("From prompt lengths."), **MONEY
    )
    error = models.TextField(_("error"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="llm_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    collected_at = models.DateTimeField(
        _("collected at"), null=True, blank=True, help_text=_("When the app that started the run took its results.")
    )
    collect_error = models.TextField(_("collection error"), blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="run_status_valid"),
            models.CheckConstraint(condition=Q(chunk_size__gte=1), name="run_chunk_size_positive"),
            models.CheckConstraint(
                condition=Q(done__lte=F("planned") - F("failed")), name="run_done_and_failed_within_planned"
            ),
            models.CheckConstraint(condition=Q(cached__lte=F("done")), name="run_cached_within_done"),
            models.CheckConstraint(condition=Q(spent__gte=0), name="run_spent_not_negative"),
        ]
        indexes = [models.Index(fields=["status"])]
        permissions = [("run_llm", "Can start, pause, resume and cancel LLM runs")]
        verbose_name = _("LLM run")
        verbose_name_plural = _("LLM runs")

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    @property
    def remaining(self) -> int:
        return max(self.planned - self.done - self.failed, 0)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @classmethod
    def sources_of(cls, target: str) -> list[str]:
        """Return the statuses from which a run may move to ``target``."""
        return [source for source, targets in cls.TRANSITIONS.items() if target in targets]

    def can_become(self, target: str) -> bool:
        """Return whether this run may move from its current status to ``target``."""
        return target in self.TRANSITIONS[self.status]


class ChunkStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    LEASED = "leased", _("leased")
    DONE = "done", _("done")


class RunChunk(models.Model):
    """A slice of a run's items that one worker leases at a time; an expired lease lets another worker take over."""

    Status = ChunkStatus

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField(_("number"))
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    lease_owner = models.CharField(_("lease owner"), max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(_("lease expires at"), null=True, blank=True)
    # Incremented on every claim; a worker's writes must carry the value it claimed with (a fencing token).
    claims = models.PositiveIntegerField(_("claims"), default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="runchunk_number_unique_per_run"),
            models.CheckConstraint(condition=Q(status__in=ChunkStatus.values), name="runchunk_status_valid"),
            models.CheckConstraint(
                condition=~Q(status="leased") | (Q(lease_expires_at__isnull=False) & ~Q(lease_owner="")),
                name="runchunk_lease_has_owner_and_expiry",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        verbose_name = _("run chunk")
        verbose_name_plural = _("run chunks")

    def __str__(self) -> str:
        return f"{self.run_id}/{self.number}"


class RunItemStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class RunItem(models.Model):
    """One prompt of a run, with a stable key, what it is for (``ref``), its call and its parsed result.

    ``ref`` is the caller's structured reference (ids, language, turn, order...), read back by the app's collector;
    ``key`` is only a unique label within the run (given by the user for uploaded prompts, else derived from ``ref``)
    and is never parsed.
    """

    Status = RunItemStatus

    # Indexed through the composite indexes below, which start with these columns.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="items", db_index=False)
    chunk = models.ForeignKey(RunChunk, on_delete=models.CASCADE, related_name="items", db_index=False)
    key = models.CharField(_("key"), max_length=200)
    ref = models.JSONField(_("reference"), default=dict, blank=True)
    position = models.PositiveIntegerField(_("position"))
    request = models.JSONField(_("request"))
    request_hash = models.CharField(_("request hash"), max_length=64)
    hints = models.JSONField(_("simulator hints"), default=dict, blank=True)
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.PROTECT, related_name="run_items")
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    cached = models.BooleanField(_("from cache"), default=False)
    cost = models.DecimalField(_("cost"), default=Decimal("0"), **MONEY)
    result = models.JSONField(_("parsed result"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "key"], name="runitem_key_unique_per_run"),
            models.CheckConstraint(condition=Q(status__in=RunItemStatus.values), name="runitem_status_valid"),
            models.CheckConstraint(condition=~Q(key=""), name="runitem_key_not_empty"),
        ]
        indexes = [
            models.Index(fields=["chunk", "status"]),
            models.Index(fields=["run", "status"]),
            models.Index(fields=["run", "position"]),
        ]
        verbose_name = _("run item")
        verbose_name_plural = _("run items")

    def __str__(self) -> str:
        return f"{self.run_id}:{self.key}"


class EndpointSlot(models.Model):
    """One of an endpoint's ``max_concurrency`` request slots, held by one worker for a renewable lease.

    A request may be in flight only under a slot its worker holds, so the limit holds across every worker process
    and machine; a crashed worker's slots expire with their lease (``llm.limits``).
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


class WorkerHeartbeat(models.Model):
    """A live ``db_worker`` process: it stamps ``seen_at`` every few seconds; a stale row is a dead worker."""

    worker_id = models.CharField(_("worker id"), max_length=64, unique=True)
    hostname = models.CharField(_("host"), max_length=255, blank=True)
    pid = models.PositiveIntegerField(_("process id"), null=True, blank=True)
    started_at = models.DateTimeField(_("started at"))
    seen_at = models.DateTimeField(_("last seen at"))

    class Meta:
        ordering = ["worker_id"]
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self) -> str:
        return self.worker_id
