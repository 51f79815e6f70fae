"""EiCAP reply sets: for each user turn of a dialogue, three preferred replies and three style-matched distractors,
each audited by an expert, then expanded into one-vs-three ``multi_turn_choice`` probes; and the independent check
of the probes' keys by a second judge.

A reply's text changes only by a new immutable revision (as an item's does); every audit decision is a permanent
record. The key validation's rows are written by ``calibration.keys`` (which holds the agreement statistics) and read
here by the audit page and by a release's dataset card.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

REPLIES_PER_ROLE = 3


class ReplySet(models.Model):
    """One dialogue of a taxonomy leaf (one or two user turns), with its candidate replies per turn."""

    uid = models.CharField(_("uid"), max_length=100, unique=True)
    benchmark = models.ForeignKey("items.Benchmark", on_delete=models.PROTECT, related_name="reply_sets")
    dimension = models.ForeignKey("items.Dimension", on_delete=models.PROTECT, related_name="reply_sets")
    scenario = models.ForeignKey("items.Scenario", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    job = models.ForeignKey(
        "items.DraftingJob", null=True, blank=True, on_delete=models.PROTECT, related_name="reply_sets"
    )
    # The dialogue's context per language ({"en": "...", "zh": "..."}; often empty).
    context = models.JSONField(_("context"), default=dict, blank=True)
    metadata = models.JSONField(_("metadata"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expanded_at = models.DateTimeField(_("expanded"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("reply set")
        verbose_name_plural = _("reply sets")

    def __str__(self) -> str:
        return self.uid

    def clean(self) -> None:
        if self.dimension_id and self.benchmark_id and self.dimension.benchmark_id != self.benchmark_id:
            raise ValidationError({"dimension": _("The dimension belongs to another benchmark.")})


class ReplyTurn(models.Model):
    """A user turn of a reply set; turn 2 reframes turn 1 and is answered with turn 1 in view."""

    reply_set = models.ForeignKey(ReplySet, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveSmallIntegerField(_("turn"))
    # The user's message per language.
    user = models.JSONField(_("user turn"), default=dict)

    class Meta:
        ordering = ["reply_set", "number"]
        constraints = [
            models.UniqueConstraint(fields=["reply_set", "number"], name="reply_turn_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1) & Q(number__lte=2), name="reply_turn_one_or_two"),
        ]
        verbose_name = _("reply turn")
        verbose_name_plural = _("reply turns")

    def __str__(self) -> str:
        return f"{self.reply_set_id} turn {self.number}"


class Reply(models.Model):
    """One candidate reply to a user turn: preferred (follows the leaf's principle) or a distractor (violates it)."""

    class Role(models.TextChoices):
        PREFERRED = "preferred", _("preferred")
        DISTRACTOR = "distractor", _("distractor")

    class Audit(models.TextChoices):
        PENDING = "pending", _("not audited")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")
        EDITED = "edited", _("edited and accepted")

    turn = models.ForeignKey(ReplyTurn, on_delete=models.CASCADE, related_name="replies")
    role = models.CharField(_("role"), max_length=12, choices=Role.choices)
    position = models.PositiveSmallIntegerField(_("position"))
    audit = models.CharField(_("audit"), max_length=10, choices=Audit.choices, default=Audit.PENDING)
    current_revision = models.ForeignKey(
        "ReplyRevision", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    audited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    audited_at = models.DateTimeField(null=True, blank=True)

    # An accepted reply, edited or not, goes into probes.
    USABLE = (Audit.ACCEPTED, Audit.EDITED)

    class Meta:
        ordering = ["turn", "role", "position"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "role", "position"], name="reply_position_unique"),
            models.CheckConstraint(condition=Q(role__in=["preferred", "distractor"]), name="reply_role_valid"),
            models.CheckConstraint(
                condition=Q(audit__in=["pending", "accepted", "rejected", "edited"]), name="reply_audit_valid"
            ),
            models.CheckConstraint(
                condition=Q(position__gte=1) & Q(position__lte=REPLIES_PER_ROLE), name="reply_position_range"
            ),
        ]
        verbose_name = _("reply")
        verbose_name_plural = _("replies")

    def __str__(self) -> str:
        return f"{self.turn} {self.role} {self.position}"

    @property
    def usable(self) -> bool:
        return self.audit in self.USABLE


class ReplyRevisionQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        raise ValidationError(_("Reply revisions are immutable; save a new revision instead."))


class ReplyRevision(models.Model):
    """One immutable state of a reply: ``{"en": {"text", "principle"}, "zh": {...}}``."""

    reply = models.ForeignKey(Reply, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(_("revision"))
    content = models.JSONField(_("content"))
    message = models.CharField(_("message"), max_length=500, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReplyRevisionQuerySet.as_manager()

    class Meta:
        ordering = ["reply", "number"]
        constraints = [
            models.UniqueConstraint(fields=["reply", "number"], name="reply_revision_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="reply_revision_number_positive"),
        ]
        verbose_name = _("reply revision")
        verbose_name_plural = _("reply revisions")

    def __str__(self) -> str:
        return f"{self.reply_id} r{self.number}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ValidationError(_("Reply revisions are immutable; save a new revision instead."))
        super().save(*args, **kwargs)


class ReplyAuditQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        raise ValidationError(_("Audit decisions are a permanent record and cannot be changed."))


class ReplyAudit(models.Model):
    """One audit decision on a reply (accept, reject, edit), never changed afterwards."""

    reply = models.ForeignKey(Reply, on_delete=models.CASCADE, related_name="audits")
    # A decision is never "pending" (that is a reply's state before its first decision).
    decision = models.CharField(
        _("decision"),
        max_length=10,
        choices=[(value, label) for value, label in Reply.Audit.choices if value != Reply.Audit.PENDING],
    )
    revision = models.PositiveIntegerField(_("revision"))
    reason = models.TextField(_("reason"), blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReplyAuditQuerySet.as_manager()

    class Meta:
        ordering = ["reply", "created_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=[Reply.Audit.ACCEPTED, Reply.Audit.REJECTED, Reply.Audit.EDITED]),
                name="reply_audit_decision_valid",
            ),
        ]
        verbose_name = _("reply audit")
        verbose_name_plural = _("reply audits")

    def __str__(self) -> str:
        return f"{self.reply_id}: {self.decision}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ValidationError(_("Audit decisions are a permanent record and cannot be changed."))
        super().save(*args, **kwargs)


class KeyValidation(models.Model):
    """A second judge answering the probes blind by letter choice; agreement with the keys as Cohen's kappa."""

    benchmark = models.ForeignKey("items.Benchmark", on_delete=models.PROTECT, related_name="key_validations")
    # Researchers choose and see the judge; experts never do (the audit page names no endpoint or model).
    endpoint = models.ForeignKey("llm.Endpoint", on_delete=models.PROTECT, related_name="+")
    llm_run = models.ForeignKey("llm.Run", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    seed = models.PositiveIntegerField(_("seed"), default=0)
    collected = models.BooleanField(default=False)
    collected_at = models.DateTimeField(null=True, blank=True)
    # The figure: Cohen's kappa between the judge's letter and the key over every answered probe turn.
    kappa = models.FloatField(null=True, blank=True)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    agreement = models.FloatField(_("raw agreement"), null=True, blank=True)
    n_units = models.PositiveIntegerField(default=0)
    n_probes = models.PositiveIntegerField(default=0)
    unanswered = models.PositiveIntegerField(default=0)
    undefined_reason = models.TextField(blank=True)
    n_boot = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("key validation")
        verbose_name_plural = _("key validations")

    def __str__(self) -> str:
        return f"key validation {self.pk}"


class KeyJudgement(models.Model):
    """The judge's answer to one turn of one probe in one language, next to the key; disagreements are reviewed."""

    class Review(models.TextChoices):
        OPEN = "open", _("not reviewed")
        KEY_STANDS = "key_stands", _("the key stands")
        KEY_WRONG = "key_wrong", _("the key is wrong")

    validation = models.ForeignKey(KeyValidation, on_delete=models.CASCADE, related_name="judgements")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="+")
    revision = models.ForeignKey("items.ItemRevision", on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=5)
    turn = models.PositiveSmallIntegerField()
    key = models.PositiveSmallIntegerField()
    # The option the judge chose (0-based, in the probe's stored order); null when the reply named none.
    chosen = models.PositiveSmallIntegerField(null=True, blank=True)
    review = models.CharField(_("review"), max_length=12, choices=Review.choices, default=Review.OPEN)
    note = models.TextField(_("note"), blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["validation", "item", "language", "turn"]
        constraints = [
            models.UniqueConstraint(
                fields=["validation", "item", "language", "turn"], name="key_judgement_unique_per_turn"
            ),
            models.CheckConstraint(
                condition=Q(review__in=["open", "key_stands", "key_wrong"]), name="key_judgement_review_valid"
            ),
        ]
        verbose_name = _("key judgement")
        verbose_name_plural = _("key judgements")

    def __str__(self) -> str:
        return f"{self.item_id} {self.language} turn {self.turn + 1}"

    @property
    def agrees(self) -> bool:
        return self.chosen is not None and self.chosen == self.key
