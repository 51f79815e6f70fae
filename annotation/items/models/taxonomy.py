"""The taxonomy: benchmarks, dimension trees, emotion categories, scenarios and crisis levels (EN and ZH names)."""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from core.i18n import in_ui_language


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
        return in_ui_language(self.name_en, self.name_zh)


class Benchmark(BilingualNamed):
    slug = models.SlugField(_("slug"), max_length=50, unique=True)
    description_en = models.TextField(_("English description"), blank=True)
    description_zh = models.TextField(_("Chinese description"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        verbose_name = _("benchmark")
        verbose_name_plural = _("benchmarks")

    @property
    def description(self) -> str:
        """Return the description in the active UI language."""
        return in_ui_language(self.description_en, self.description_zh) or ""


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
            models.CheckConstraint(
                condition=Q(level__in=["module", "layer", "dimension", "subcategory"]), name="dimension_level_valid"
            ),
        ]
        verbose_name = _("dimension")
        verbose_name_plural = _("dimensions")

    @property
    def definition(self) -> str:
        """Return the definition in the active UI language."""
        return in_ui_language(self.definition_en, self.definition_zh) or ""

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
        constraints = [
            models.CheckConstraint(
                condition=Q(valence__in=["positive", "neutral", "negative"]), name="emotion_valence_valid"
            )
        ]
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
