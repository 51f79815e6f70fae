"""Screening rounds: criteria, rounds, assignments, blind reviews and adjudication."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.queue.models import Assignment, Progress, assignment_meta, progress_meta, worker_key
from core.i18n import in_ui_language

DECISIONS = [("accept", _("accept")), ("revise", _("revise")), ("reject", _("reject"))]


class Criterion(models.Model):
    """A screening criterion; without a dimension it applies to every dimension of its kinds."""

    class Scale(models.TextChoices):
        SCORE = "score", _("score 1 to 5")
        PASS_FAIL = "pass_fail", _("pass or fail")

    code = models.SlugField(_("code"), max_length=80)
    name_en = models.CharField(_("English name"), max_length=200)
    name_zh = models.CharField(_("Chinese name"), max_length=200)
    description_en = models.TextField(_("English description"), blank=True)
    description_zh = models.TextField(_("Chinese description"), blank=True)
    scale = models.CharField(_("scale"), max_length=10, choices=Scale.choices, default=Scale.SCORE)
    dimension = models.ForeignKey(
        "items.Dimension", null=True, blank=True, on_delete=models.PROTECT, related_name="criteria"
    )
    objective_only = models.BooleanField(
        _("objective items only"), default=False, help_text=_("Applies only to items with options and answer keys.")
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "code"]
        constraints = [
            models.UniqueConstraint(fields=["code", "dimension"], name="criterion_code_unique_per_dimension"),
            models.UniqueConstraint(
                fields=["code"], condition=Q(dimension=None), name="criterion_code_unique_when_general"
            ),
            models.CheckConstraint(condition=Q(scale__in=["score", "pass_fail"]), name="criterion_scale_valid"),
        ]
        verbose_name = _("screening criterion")
        verbose_name_plural = _("screening criteria")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return in_ui_language(self.name_en, self.name_zh)

    @property
    def description(self) -> str:
        return in_ui_language(self.description_en, self.description_zh) or ""


class ScreeningRound(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("open")
        CLOSED = "closed", _("closed")

    benchmark = models.ForeignKey("items.Benchmark", on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField(_("round"))
    title = models.CharField(_("title"), max_length=200)
    filters = models.JSONField(_("item filter"), default=dict, blank=True)
    criteria = models.ManyToManyField(Criterion, related_name="rounds")
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="screening_rounds")
    reviewers_per_item = models.PositiveSmallIntegerField(_("reviewers per item"), default=2)
    deadline = models.DateTimeField(_("deadline"), null=True, blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.OPEN)
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    close_note = models.TextField(_("closing note"), blank=True)
    # Filled when the round closes: its reviews cannot change after that
    # (annotation.screening.selectors.round_statistics).
    statistics = models.JSONField(_("Statistics"), null=True, blank=True, editable=False)
    # Items in the round, fixed when it opens; stored so that lists need not count them.
    size = models.PositiveIntegerField(_("items"), default=0, editable=False)

    class Meta:
        permissions = [
            ("review_item", "Can review items in screening rounds"),
            ("adjudicate_item", "Can adjudicate review conflicts"),
            ("manage_round", "Can open and close screening rounds"),
        ]
        ordering = ["benchmark__slug", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "number"], name="round_number_unique_per_benchmark"),
            models.CheckConstraint(condition=Q(reviewers_per_item__gte=1), name="round_needs_a_reviewer_per_item"),
            models.CheckConstraint(condition=Q(status__in=["open", "closed"]), name="round_status_valid"),
        ]
        verbose_name = _("screening round")
        verbose_name_plural = _("screening rounds")

    def __str__(self) -> str:
        return f"{self.benchmark.slug} round {self.number}"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class RoundItem(models.Model):
    """An item under review in a round, at the revision the reviewers saw."""

    class Outcome(models.TextChoices):
        PENDING = "pending", _("pending")
        ACCEPT = "accept", _("accepted")
        REVISE = "revise", _("back to authors")
        REJECT = "reject", _("rejected")
        CONFLICT = "conflict", _("conflict: needs adjudication")
        UNREVIEWED = "unreviewed", _("not reviewed")

    round = models.ForeignKey(ScreeningRound, on_delete=models.CASCADE, related_name="round_items")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="round_entries")
    revision = models.ForeignKey("items.ItemRevision", on_delete=models.PROTECT, related_name="+")
    outcome = models.CharField(_("outcome"), max_length=12, choices=Outcome.choices, default=Outcome.PENDING)
    adjudicated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    adjudicated_at = models.DateTimeField(null=True, blank=True)
    adjudication_note = models.TextField(_("adjudication note"), blank=True)

    class Meta:
        ordering = ["round", "item__uid"]
        constraints = [
            models.UniqueConstraint(fields=["round", "item"], name="round_item_unique"),
            models.CheckConstraint(
                condition=Q(outcome__in=["pending", "accept", "revise", "reject", "conflict", "unreviewed"]),
                name="round_item_outcome_valid",
            ),
        ]
        verbose_name = _("item in a round")
        verbose_name_plural = _("items in rounds")

    def __str__(self) -> str:
        return f"{self.round} · {self.item_id}"


class ReviewerProgress(Progress):
    """A reviewer's counts in one round, kept by the screening services as they submit and skip.

    Pages and the API read progress from here instead of counting assignments, so their cost does not grow with
    the size of a round. ``annotation.screening.services.round_recount`` rebuilds them from the assignments and
    reviews.
    """

    round = models.ForeignKey(ScreeningRound, on_delete=models.CASCADE, related_name="reviewer_progress")
    reviewer = worker_key(related_name="+")
    submitted = models.PositiveIntegerField(_("submitted"), default=0)
    # Once the round is closed: the reviewer's submitted reviews of items that got a decision (at closing or by
    # adjudication), and how many of them agree with it.
    decided = models.PositiveIntegerField(_("decided"), default=0)
    agreed = models.PositiveIntegerField(_("agreed"), default=0)

    Meta = progress_meta(
        owner="round",
        worker="reviewer",
        unique="one_progress_per_reviewer_and_round",
        index="progress_by_reviewer",
        verbose_name=_("review progress"),
    )

    def __str__(self) -> str:
        return f"{self.round_id} · {self.reviewer_id}: {self.submitted}/{self.assigned}"


class ReviewAssignment(Assignment):
    """An item of a round given to one reviewer: their queue in the round (``annotation.queue``)."""

    OWNER, WORKER, DONE_AT, DONE, CHANGE_FROM = "round", "reviewer", "submitted_at", "submitted", "viewed_at"
    progress = ReviewerProgress

    round_item = models.ForeignKey(RoundItem, on_delete=models.CASCADE, related_name="assignments")
    # The item's round, repeated here so that a reviewer's queue in a round is one index range.
    round = models.ForeignKey(ScreeningRound, on_delete=models.CASCADE, related_name="+")
    reviewer = worker_key(related_name="review_assignments")
    # When the review was submitted (a submitted review stays submitted), empty while open.
    submitted_at = models.DateTimeField(_("submitted at"), null=True, blank=True)
    # Set on every view of the page: changing a submitted review is timed from the last view.
    viewed_at = models.DateTimeField(null=True, blank=True)

    Meta = assignment_meta(
        prefix="review",
        owner="round",
        worker="reviewer",
        done_at="submitted_at",
        constraints=[
            models.UniqueConstraint(fields=["round_item", "reviewer"], name="one_assignment_per_reviewer_and_item")
        ],
        names=(_("review assignment"), _("review assignments")),
    )

    def __str__(self) -> str:
        return f"{self.round_item} → {self.reviewer}"


class Review(models.Model):
    """One reviewer's verdict on one item in one round; a draft until submitted, then final."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft")
        SUBMITTED = "submitted", _("submitted")

    assignment = models.OneToOneField(ReviewAssignment, on_delete=models.CASCADE, related_name="review")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    scores = models.JSONField(_("criterion scores"), default=dict, blank=True)
    decision = models.CharField(_("decision"), max_length=10, choices=DECISIONS, blank=True)
    comment = models.TextField(_("comment"), blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    changed_at = models.DateTimeField(_("last changed at"), null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status="draft") | (~Q(decision="") & Q(submitted_at__isnull=False)),
                name="submitted_review_has_decision",
            ),
            models.CheckConstraint(condition=Q(status__in=["draft", "submitted"]), name="review_status_valid"),
            models.CheckConstraint(
                condition=Q(decision__in=[*(value for value, _label in DECISIONS), ""]), name="review_decision_valid"
            ),
        ]
        verbose_name = _("review")
        verbose_name_plural = _("reviews")

    def __str__(self) -> str:
        return f"{self.assignment}: {self.decision or self.status}"


class ReviewChange(models.Model):
    """One change a reviewer made to their submitted review while the round was open: old and new values."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="changes")
    old = models.JSONField(_("before"), help_text=_("Scores, decision and comment before the change."))
    new = models.JSONField(_("after"), help_text=_("Scores, decision and comment after the change."))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)
    seconds_spent = models.PositiveIntegerField(_("seconds spent"), null=True, blank=True)

    class Meta:
        ordering = ["review", "changed_at", "id"]
        verbose_name = _("review change")
        verbose_name_plural = _("review changes")

    def __str__(self) -> str:
        return f"{self.review_id}: {self.old.get('decision')} -> {self.new.get('decision')}"
