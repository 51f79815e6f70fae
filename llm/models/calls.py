"""The call log, which doubles as the cache: one row per distinct request, with its reply, tokens and cost."""

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from llm.models.endpoints import MONEY, Endpoint


class CallStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")


class ErrorKind(models.TextChoices):
    RATE_LIMITED = "rate_limited", _("rate limited (429)")
    SERVER_ERROR = "server_error", _("server error (5xx)")
    TIMEOUT = "timeout", _("timeout")
    CONNECTION = "connection", _("connection failed")
    BAD_REQUEST = "bad_request", _("bad request (400)")
    AUTH = "auth", _("not authorised (401/403)")
    NOT_FOUND = "not_found", _("not found (404)")
    CONFIG = "config", _("endpoint settings refused (400)")
    INVALID_RESPONSE = "invalid_response", _("invalid response")
    MISSING_KEY = "missing_key", _("API key not set")
    KEY_NOT_ALLOWED = "key_not_allowed", _("API key variable not allowed")
    UNPARSED = "unparsed", _("unparseable content")
    OTHER = "other", _("other error")


class LLMCall(models.Model):
    """One request to an endpoint and what came back: the audit trail and the cache (one row per request hash)."""

    Status = CallStatus

    ErrorKind = ErrorKind

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
            models.CheckConstraint(
                condition=Q(error_kind__in=[*ErrorKind.values, ""]), name="llmcall_error_kind_valid"
            ),
            models.CheckConstraint(condition=Q(cost__gte=0), name="llmcall_cost_not_negative"),
        ]
        indexes = [models.Index(fields=["endpoint", "status"])]
        verbose_name = _("LLM call")
        verbose_name_plural = _("LLM calls")

    def __str__(self) -> str:
        return f"{self.endpoint_id}:{self.request_hash[:12]}"
