"""Items and their immutable revisions, and the editor's unsaved drafts."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.items.content import LANGUAGES
from annotation.items.models.taxonomy import Benchmark, CrisisLevel, Dimension, EmotionCategory, Scenario


class Item(models.Model):
    class Kind(models.TextChoices):
        MCQ = "mcq", _("multiple choice")
        MULTI_TURN_CHOICE = "multi_turn_choice", _("multi-turn choice")
        OPEN_PROMPT = "open_prompt", _("open prompt")

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft")
        IN_SCREENING = "in_screening", _("in screening")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    class Origin(models.TextChoices):
        EXPERT = "expert", _("expert")
        LLM_DRAFT = "llm_draft", _("LLM draft")
        IMPORTED = "imported", _("imported")

    class Difficulty(models.TextChoices):
        EASY = "easy", _("easy")
        MEDIUM = "medium", _("medium")
        HARD = "hard", _("hard")

    uid = models.CharField(_("uid"), max_length=100, unique=True)
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="items")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="items")
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    scenario = models.ForeignKey(Scenario, null=True, blank=True, on_delete=models.PROTECT, related_name="items")
    emotions = models.ManyToManyField(EmotionCategory, blank=True, related_name="items")
    crisis_level = models.ForeignKey(CrisisLevel, null=True, blank=True, on_delete=models.PROTECT, related_name="items")
    difficulty = models.CharField(_("difficulty"), max_length=10, choices=Difficulty.choices, blank=True)
    status = models.CharField(_("status"), max_length=20, choices=Status.choices, default=Status.DRAFT)
    origin = models.CharField(_("origin"), max_length=20, choices=Origin.choices, default=Origin.EXPERT)
    metadata = models.JSONField(_("metadata"), default=dict, blank=True)
    current_revision = models.ForeignKey(
        "ItemRevision", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Derived from the current revision so that list filters stay plain column lookups.
    has_en = models.BooleanField(default=False)
    has_zh = models.BooleanField(default=False)
    parity_ok = models.BooleanField(default=False)
    search_text = models.TextField(blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="items_created"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="items_updated"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["uid"]
        permissions = [("decide_status", "Can accept, reject or return items to draft outside screening")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["mcq", "multi_turn_choice", "open_prompt"]), name="item_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "in_screening", "accepted", "rejected"]), name="item_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(difficulty__in=["easy", "medium", "hard", ""]), name="item_difficulty_valid"
            ),
            models.CheckConstraint(
                condition=Q(origin__in=["expert", "llm_draft", "imported"]), name="item_origin_valid"
            ),
        ]
        indexes = [models.Index(fields=["benchmark", "dimension", "status"])]
        verbose_name = _("item")
        verbose_name_plural = _("items")

    def __str__(self) -> str:
        return self.uid

    def clean(self) -> None:
        if self.dimension_id and self.benchmark_id and self.dimension.benchmark_id != self.benchmark_id:
            raise ValidationError({"dimension": _("The dimension belongs to another benchmark.")})


class ItemRevisionQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        raise ValidationError(_("Item revisions are immutable; save a new revision instead."))


class ItemRevision(models.Model):
    """One immutable state of an item: bilingual content plus a snapshot of its classification."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="revisions")
    number = models.PositiveIntegerField(_("revision"))
    content = models.JSONField(_("content"), blank=True)
    attributes = models.JSONField(_("attributes"), default=dict, blank=True)
    content_hash = models.CharField(max_length=64)
    parity_issues = models.JSONField(default=list, blank=True)
    message = models.CharField(_("message"), max_length=500, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ItemRevisionQuerySet.as_manager()

    class Meta:
        ordering = ["item", "number"]
        constraints = [
            models.UniqueConstraint(fields=["item", "number"], name="revision_number_unique_per_item"),
            models.CheckConstraint(condition=Q(number__gte=1), name="revision_number_positive"),
        ]
        verbose_name = _("item revision")
        verbose_name_plural = _("item revisions")

    def __str__(self) -> str:
        return f"{self.item_id} r{self.number}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ValidationError(_("Item revisions are immutable; save a new revision instead."))
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise ValidationError(_("Item revisions are immutable and cannot be deleted."))

    def languages(self) -> list[str]:
        """Return the languages present in this revision, in canonical order."""
        return [lang for lang in LANGUAGES if self.content.get(lang)]


class ItemDraft(models.Model):
    """Unsaved editor input, autosaved so that nothing is lost when a browser closes."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="drafts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="item_drafts")
    base_revision = models.PositiveIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "user"], name="one_draft_per_item_and_user")]
        verbose_name = _("editor draft")
        verbose_name_plural = _("editor drafts")

    def __str__(self) -> str:
        return f"{self.item_id} draft by {self.user_id}"
