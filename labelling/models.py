"""Model responses, pairwise comparison sets, expert assignments and expert labels."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

LANGUAGE_CHOICES = [("en", _("English")), ("zh", _("Chinese"))]


class ModelResponse(models.Model):
    """One model's reply to an open prompt in one language. The model name is never shown to experts."""

    class Source(models.TextChoices):
        IMPORTED = "imported", _("imported")
        GENERATED = "generated", _("generated")

    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="responses")
    language = models.CharField(_("language"), max_length=2, choices=LANGUAGE_CHOICES)
    model_name = models.CharField(_("model"), max_length=200)
    text = models.TextField(_("text"))
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.IMPORTED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item__uid", "language", "model_name"]
        constraints = [
            models.UniqueConstraint(fields=["item", "language", "model_name"], name="one_response_per_model"),
            models.CheckConstraint(condition=Q(language__in=["en", "zh"]), name="response_language_valid"),
        ]
        verbose_name = _("model response")
        verbose_name_plural = _("model responses")

    def __str__(self) -> str:
        return f"{self.item_id} [{self.language}] {self.model_name}"


class ComparisonSet(models.Model):
    """Comparisons chosen for expert labelling (and judge calibration), with their expert assignments."""

    name = models.CharField(_("name"), max_length=200, unique=True)
    benchmark = models.ForeignKey("items.Benchmark", on_delete=models.PROTECT, related_name="comparison_sets")
    description = models.TextField(_("description"), blank=True)
    seed = models.IntegerField(_("seed"), default=0)
    per_stratum = models.PositiveIntegerField(_("comparisons per dimension and language"), null=True, blank=True)
    experts_per_comparison = models.PositiveSmallIntegerField(
        _("experts per comparison"), null=True, blank=True, help_text=_("Empty: every assigned expert labels all.")
    )
    experts = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="comparison_sets")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("manage_comparisons", "Can import responses and build comparison sets"),
            ("label_comparisons", "Can label the comparisons assigned to them"),
        ]
        verbose_name = _("comparison set")
        verbose_name_plural = _("comparison sets")

    def __str__(self) -> str:
        return self.name


class Comparison(models.Model):
    """Two responses to one item in one language, compared on one subjective dimension (A and B canonical)."""

    comparison_set = models.ForeignKey(ComparisonSet, on_delete=models.CASCADE, related_name="comparisons")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="comparisons")
    language = models.CharField(_("language"), max_length=2, choices=LANGUAGE_CHOICES)
    dimension = models.ForeignKey("items.Dimension", on_delete=models.PROTECT, related_name="comparisons")
    response_a = models.ForeignKey(ModelResponse, on_delete=models.PROTECT, related_name="+")
    response_b = models.ForeignKey(ModelResponse, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["comparison_set", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(response_a=F("response_b")), name="comparison_pairs_two_responses"),
            models.UniqueConstraint(
                fields=["comparison_set", "dimension", "response_a", "response_b"], name="comparison_unique_in_set"
            ),
        ]
        verbose_name = _("comparison")
        verbose_name_plural = _("comparisons")

    def __str__(self) -> str:
        return f"{self.item_id} [{self.language}] {self.dimension_id}: {self.response_a_id} vs {self.response_b_id}"


class LabelAssignment(models.Model):
    """A comparison given to one expert, with the left/right order that expert sees."""

    class Order(models.TextChoices):
        AB = "AB", _("A left, B right")
        BA = "BA", _("B left, A right")

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="assignments")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="label_assignments")
    shown_order = models.CharField(max_length=2, choices=Order.choices)
    position = models.PositiveIntegerField(default=0)
    first_viewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["expert", "position"]
        constraints = [
            models.UniqueConstraint(fields=["comparison", "expert"], name="one_assignment_per_expert_and_comparison")
        ]
        # The expert's queue in order, for the next open assignment without a scan.
        indexes = [models.Index(fields=["expert", "position", "id"], name="label_queue_order")]
        verbose_name = _("labelling assignment")
        verbose_name_plural = _("labelling assignments")

    def __str__(self) -> str:
        return f"{self.comparison_id} → {self.expert_id} ({self.shown_order})"


class ExpertLabel(models.Model):
    """An expert's verdict, stored canonically: +k means A wins by k pluses, 0 a tie, -k B wins by k."""

    assignment = models.OneToOneField(LabelAssignment, on_delete=models.PROTECT, related_name="label")
    score = models.SmallIntegerField(_("signed score"))
    shown_order = models.CharField(max_length=2, choices=LabelAssignment.Order.choices)
    rationale = models.TextField(_("rationale"), blank=True)
    seconds_spent = models.PositiveIntegerField(_("seconds spent"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(score__gte=-5) & Q(score__lte=5), name="label_score_in_range"),
        ]
        verbose_name = _("expert label")
        verbose_name_plural = _("expert labels")

    def __str__(self) -> str:
        return f"{self.assignment}: {self.score:+d}"
