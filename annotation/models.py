"""Taxonomy, items and their immutable revisions."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from annotation.content import LANGUAGES


class BilingualNamed(models.Model):
    """A row with an English and a Chinese name, shown in the UI language."""

    name_en = models.CharField(_("English name"), max_length=200)
    name_zh = models.CharField(_("Chinese name"), max_length=200)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """Return the name in the active UI language, falling back to English."""
        if (get_language() or "en").startswith("zh") and self.name_zh:
            return self.name_zh
        return self.name_en


class Benchmark(BilingualNamed):
    slug = models.SlugField(_("slug"), max_length=50, unique=True)
    description_en = models.TextField(_("English description"), blank=True)
    description_zh = models.TextField(_("Chinese description"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        permissions = [("manage_release", "Can build, freeze and export releases")]
        verbose_name = _("benchmark")
        verbose_name_plural = _("benchmarks")

    @property
    def description(self) -> str:
        """Return the description in the active UI language."""
        zh = (get_language() or "en").startswith("zh")
        return (self.description_zh if zh and self.description_zh else self.description_en) or ""


class Dimension(BilingualNamed):
    class Level(models.TextChoices):
        MODULE = "module", _("module")
        LAYER = "layer", _("layer")
        DIMENSION = "dimension", _("dimension")
        SUBCATEGORY = "subcategory", _("subcategory")

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="dimensions")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    code = models.SlugField(_("code"), max_length=80)
    level = models.CharField(_("level"), max_length=20, choices=Level.choices)
    subjective = models.BooleanField(
        _("subjective"), default=False, help_text=_("Judged pairwise on open responses rather than by an answer key.")
    )
    provisional = models.BooleanField(
        _("provisional"), default=False, help_text=_("Name chosen by the team; experts may rename it.")
    )
    target_items = models.PositiveIntegerField(_("target items per language"), null=True, blank=True)
    definition_en = models.TextField(_("English definition"), blank=True)
    definition_zh = models.TextField(_("Chinese definition"), blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["benchmark__slug", "position", "code"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "code"], name="dimension_code_unique_per_benchmark"),
            models.CheckConstraint(condition=~Q(parent=models.F("id")), name="dimension_not_own_parent"),
        ]
        verbose_name = _("dimension")
        verbose_name_plural = _("dimensions")

    @property
    def definition(self) -> str:
        """Return the definition in the active UI language."""
        zh = (get_language() or "en").startswith("zh")
        return (self.definition_zh if zh and self.definition_zh else self.definition_en) or ""

    def clean(self) -> None:
        if self.parent_id and self.parent.benchmark_id != self.benchmark_id:
            raise ValidationError({"parent": _("The parent dimension belongs to another benchmark.")})


class EmotionCategory(BilingualNamed):
    class Valence(models.TextChoices):
        POSITIVE = "positive", _("positive")
        NEUTRAL = "neutral", _("neutral")
        NEGATIVE = "negative", _("negative")

    code = models.SlugField(_("code"), max_length=80, unique=True)
    valence = models.CharField(_("valence"), max_length=10, choices=Valence.choices)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "code"]
        verbose_name = _("emotion category")
        verbose_name_plural = _("emotion categories")


class ScenarioDomain(BilingualNamed):
    code = models.SlugField(_("code"), max_length=80, unique=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "code"]
        verbose_name = _("scenario domain")
        verbose_name_plural = _("scenario domains")


class Scenario(BilingualNamed):
    domain = models.ForeignKey(ScenarioDomain, on_delete=models.PROTECT, related_name="scenarios")
    code = models.SlugField(_("code"), max_length=80, unique=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["domain__position", "position", "code"]
        verbose_name = _("scenario")
        verbose_name_plural = _("scenarios")


class CrisisLevel(BilingualNamed):
    level = models.PositiveSmallIntegerField(_("level"), unique=True)
    definition_en = models.TextField(_("English definition"))
    definition_zh = models.TextField(_("Chinese definition"))

    class Meta:
        ordering = ["level"]
        constraints = [
            models.CheckConstraint(condition=Q(level__gte=1) & Q(level__lte=5), name="crisis_level_1_to_5"),
        ]
        verbose_name = _("crisis risk level")
        verbose_name_plural = _("crisis risk levels")

    @property
    def definition(self) -> str:
        """Return the definition in the active UI language."""
        return self.definition_zh if (get_language() or "en").startswith("zh") else self.definition_en


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
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["mcq", "multi_turn_choice", "open_prompt"]), name="item_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "in_screening", "accepted", "rejected"]), name="item_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["benchmark", "dimension", "status"])]
        permissions = [
            ("review_item", "Can review items in screening rounds"),
            ("adjudicate_item", "Can adjudicate review conflicts"),
            ("manage_round", "Can open and close screening rounds"),
        ]
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


class UserProfile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    language = models.CharField(_("interface language"), max_length=10, choices=settings.LANGUAGES, default="en")

    class Meta:
        verbose_name = _("user profile")
        verbose_name_plural = _("user profiles")

    def __str__(self) -> str:
        return f"{self.user} ({self.language})"


class FrozenReleaseError(ValidationError):
    """A frozen release or its pinned revisions were about to change."""


class ReleaseQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        if self.filter(status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot change."))
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self.filter(status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot be deleted."))
        return super().delete()


class Release(models.Model):
    """A versioned set of items of one benchmark, each pinned to one revision; frozen releases never change."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft")
        FROZEN = "frozen", _("frozen")

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(
        _("version"),
        max_length=40,
        validators=[
            RegexValidator(
                r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$",
                _("Use a semantic version such as 1.0.0 or 1.1.0-rc1."),
            )
        ],
    )
    title = models.CharField(_("title"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    licence = models.CharField(_("licence"), max_length=200, blank=True)
    citation = models.TextField(_("citation"), blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.DRAFT)
    filters = models.JSONField(_("built from filter"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    frozen_at = models.DateTimeField(null=True, blank=True)
    validation = models.JSONField(_("validation at freeze"), default=dict, blank=True)
    override_reason = models.TextField(_("override reason"), blank=True)
    content_checksum = models.CharField(_("content checksum"), max_length=64, blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["benchmark__slug", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "version"], name="release_version_unique_per_benchmark"),
            models.CheckConstraint(condition=Q(status__in=["draft", "frozen"]), name="release_status_valid"),
            models.CheckConstraint(
                condition=Q(status="draft") | (Q(frozen_at__isnull=False) & ~Q(content_checksum="")),
                name="frozen_release_has_time_and_checksum",
            ),
        ]
        verbose_name = _("release")
        verbose_name_plural = _("releases")

    def __str__(self) -> str:
        return f"{self.benchmark.slug} {self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk and Release.objects.filter(pk=self.pk, status=self.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot change."))
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.pk, status=self.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot be deleted."))
        return super().delete(*args, **kwargs)

    @property
    def is_frozen(self) -> bool:
        return self.status == self.Status.FROZEN


class ReleaseItemQuerySet(models.QuerySet):
    def _refuse_if_frozen(self) -> None:
        if self.filter(release__status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("The items of a frozen release cannot change."))

    def update(self, **kwargs: object) -> int:
        self._refuse_if_frozen()
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        self._refuse_if_frozen()
        return super().delete()

    def bulk_create(self, objs: list, *args: object, **kwargs: object) -> list:
        release_ids = {obj.release_id for obj in objs}
        if Release.objects.filter(pk__in=release_ids, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("The items of a frozen release cannot change."))
        return super().bulk_create(objs, *args, **kwargs)


class ReleaseItem(models.Model):
    """One item of a release, pinned to the revision the release contains."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="entries")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="release_entries")
    revision = models.ForeignKey(ItemRevision, on_delete=models.PROTECT, related_name="release_entries")

    objects = ReleaseItemQuerySet.as_manager()

    class Meta:
        ordering = ["release", "item__uid"]
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="release_item_unique"),
        ]
        verbose_name = _("release item")
        verbose_name_plural = _("release items")

    def __str__(self) -> str:
        return f"{self.release} · {self.item_id} r{self.revision_id}"

    def save(self, *args: object, **kwargs: object) -> None:
        if Release.objects.filter(pk=self.release_id, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("The items of a frozen release cannot change."))
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.release_id, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("The items of a frozen release cannot change."))
        return super().delete(*args, **kwargs)

    def clean(self) -> None:
        if self.revision_id and self.item_id and self.revision.item_id != self.item_id:
            raise ValidationError({"revision": _("The pinned revision belongs to another item.")})


from annotation.comparison_models import (  # noqa: E402  (models of this app that live in their own modules)
    Comparison,
    ComparisonSet,
    ExpertLabel,
    LabelAssignment,
    ModelResponse,
)
from annotation.drafting_models import DraftingJob, ItemTemplate  # noqa: E402
from annotation.screening_models import (  # noqa: E402
    Criterion,
    ItemDraft,
    Review,
    ReviewAssignment,
    RoundItem,
    ScreeningRound,
)

__all__ = [
    "DraftingJob",
    "ItemTemplate",
    "Comparison",
    "ComparisonSet",
    "ExpertLabel",
    "LabelAssignment",
    "ModelResponse",
    "Benchmark",
    "CrisisLevel",
    "Criterion",
    "Dimension",
    "EmotionCategory",
    "FrozenReleaseError",
    "Item",
    "ItemDraft",
    "ItemRevision",
    "Release",
    "ReleaseItem",
    "Review",
    "ReviewAssignment",
    "RoundItem",
    "Scenario",
    "ScenarioDomain",
    "ScreeningRound",
    "UserProfile",
]
