"""Background runs split into chunks of items, their batches at the provider, budgets and worker heartbeats."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from llm.calls import call_cost
from llm.models.calls import LLMCall
from llm.models.endpoints import MONEY, Endpoint


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    PAUSED = "paused", _("paused")
    CANCELLED = "cancelled", _("cancelled")
    FAILED = "failed", _("failed")
    DONE = "done", _("done")


class BudgetPool(models.Model):
    """One budget shared by several runs (an evaluation run's): reserved and spent atomically across workers."""

    name = models.CharField(_("name"), max_length=200)
    budget = models.DecimalField(_("budget"), null=True, blank=True, **MONEY)
    spent = models.DecimalField(_("spent"), default=Decimal("0"), **MONEY)
    reserved = models.DecimalField(_("reserved"), default=Decimal("0"), **MONEY)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(budget__isnull=True) | Q(budget__gte=0), name="budgetpool_budget_not_negative"
            ),
        ]
        verbose_name = _("shared budget")
        verbose_name_plural = _("shared budgets")

    def __str__(self) -> str:
        return self.name

    @property
    def paused_by_budget(self) -> bool:
        """Return whether one of the runs sharing this budget is paused because of it."""
        return self.runs.filter(status=RunStatus.PAUSED, pause_reason=PauseReason.BUDGET).exists()


class RunMode(models.TextChoices):
    LIVE = "live", _("live calls")
    BATCH = "batch", _("provider batches")


class PauseReason(models.TextChoices):
    NONE = "", _("none")
    BUDGET = "budget", _("budget reached")


class Run(models.Model):
    """A list of prompts sent to one endpoint in the background, each reply parsed by a named parser."""

    Status = RunStatus
    Mode = RunMode
    PauseReason = PauseReason

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
    estimated_cost_batch = models.DecimalField(
        _("estimated cost in batch mode"), default=Decimal("0"), help_text=_("From prompt lengths."), **MONEY
    )
    mode = models.CharField(_("mode"), max_length=10, choices=RunMode.choices, default=RunMode.LIVE)
    batch_fallback = models.CharField(
        _("failed batch requests"),
        max_length=10,
        choices=RunMode.choices,
        default=RunMode.LIVE,
        help_text=_("Send requests that failed or expired in a batch again as live calls, or in a new batch."),
    )
    budget = models.DecimalField(
        _("budget"),
        null=True,
        blank=True,
        help_text=_("In the endpoint's currency; the run pauses before a request that could exceed it."),
        **MONEY,
    )
    reserved = models.DecimalField(
        _("reserved"), default=Decimal("0"), help_text=_("The most that requests in flight may cost."), **MONEY
    )
    pause_reason = models.CharField(
        _("pause reason"), max_length=20, choices=PauseReason.choices, default=PauseReason.NONE, blank=True
    )
    budget_pool = models.ForeignKey(
        BudgetPool,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
        verbose_name=_("shared budget"),
        help_text=_("A budget shared with other runs (an evaluation run's), on top of this run's own."),
    )
    input_tokens = models.PositiveBigIntegerField(_("input tokens"), default=0)
    output_tokens = models.PositiveBigIntegerField(_("output tokens"), default=0)
    error = models.TextField(_("error"), blank=True)
    # [{"code", "message", "at"}]: what the run should tell a researcher without failing (implausible usage, a batch
    # that fell back to live calls).
    warnings = models.JSONField(_("warnings"), default=list, blank=True)
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
            models.CheckConstraint(
                condition=Q(pause_reason__in=list(dict.fromkeys([*PauseReason.values, ""]))),
                name="run_pause_reason_valid",
            ),
            models.CheckConstraint(condition=Q(chunk_size__gte=1), name="run_chunk_size_positive"),
            models.CheckConstraint(
                condition=Q(done__lte=F("planned") - F("failed")), name="run_done_and_failed_within_planned"
            ),
            models.CheckConstraint(condition=Q(cached__lte=F("done")), name="run_cached_within_done"),
            models.CheckConstraint(condition=Q(spent__gte=0), name="run_spent_not_negative"),
            models.CheckConstraint(condition=Q(mode__in=RunMode.values), name="run_mode_valid"),
            models.CheckConstraint(condition=Q(batch_fallback__in=RunMode.values), name="run_batch_fallback_valid"),
            models.CheckConstraint(condition=Q(budget__isnull=True) | Q(budget__gte=0), name="run_budget_not_negative"),
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
    def is_batch(self) -> bool:
        return self.mode == RunMode.BATCH

    def spend_at(self, *, batch: bool) -> Decimal:
        """Return what this run's replies so far cost at the endpoint's batch or live prices."""
        price_input, price_output = self.endpoint.prices(batch=batch)
        return call_cost(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            price_input=price_input,
            price_output=price_output,
        )

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
    # A chunk waiting for its provider batch is not leased: it may be claimed again (to poll) from this time on.
    poll_after = models.DateTimeField(_("poll after"), null=True, blank=True)
    # The most the live requests in flight under the current claim may cost (part of ``Run.reserved``).
    reserved = models.DecimalField(_("reserved"), default=Decimal("0"), **MONEY)

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


class BatchStatus(models.TextChoices):
    CREATING = "creating", _("creating")
    SUBMITTED = "submitted", _("submitted")
    COMPLETED = "completed", _("completed")
    FAILED = "failed", _("failed")
    EXPIRED = "expired", _("expired")
    CANCELLED = "cancelled", _("cancelled")


class RunBatch(models.Model):
    """One provider batch of a chunk's requests: recorded ("creating") before the provider is asked to create it.

    A worker that finds a row "creating" without a provider id looks the batch up at the provider by ``key`` (sent as
    batch metadata) before creating one, so each row becomes at most one provider batch.
    """

    Status = BatchStatus
    OPEN = (BatchStatus.CREATING, BatchStatus.SUBMITTED)

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="batches")
    chunk = models.ForeignKey(RunChunk, on_delete=models.CASCADE, related_name="batches", db_index=False)
    attempt = models.PositiveIntegerField(_("attempt"), default=1)
    key = models.CharField(_("key"), max_length=100, unique=True, help_text=_("Sent to the provider as metadata."))
    status = models.CharField(_("status"), max_length=10, choices=BatchStatus.choices, default=BatchStatus.CREATING)
    # {custom_id: call id}: the requests of this batch.
    requests = models.JSONField(_("requests"), default=dict)
    provider_batch_id = models.CharField(_("provider batch id"), max_length=200, blank=True)
    input_file_id = models.CharField(_("input file id"), max_length=200, blank=True)
    output_file_id = models.CharField(_("output file id"), max_length=200, blank=True)
    error_file_id = models.CharField(_("error file id"), max_length=200, blank=True)
    provider_status = models.CharField(_("provider status"), max_length=40, blank=True)
    completed_requests = models.PositiveIntegerField(_("completed requests"), default=0)
    failed_requests = models.PositiveIntegerField(_("failed requests"), default=0)
    reserved = models.DecimalField(_("reserved"), default=Decimal("0"), **MONEY)
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "chunk", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["chunk", "attempt"], name="runbatch_one_per_chunk_attempt"),
            models.CheckConstraint(condition=Q(status__in=BatchStatus.values), name="runbatch_status_valid"),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        verbose_name = _("run batch")
        verbose_name_plural = _("run batches")

    def __str__(self) -> str:
        return self.key


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
