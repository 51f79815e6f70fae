"""Model responses, pairwise comparison sets, expert assignments and expert labels."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotation.queue.models import Assignment, Progress, assignment_meta, progress_meta, worker_key

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
            models.CheckConstraint(condition=Q(source__in=["imported", "generated"]), name="response_source_valid"),
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
    # Active: served in the order that most informs the judge choice, with each draw's probability recorded
    # (calibration.allocation, through annotation.labelling.serving); the agreement estimates correct for it.
    order = models.CharField(
        _("serving order"),
        max_length=6,
        choices=[("random", _("stratified random")), ("active", _("active (most informative first)"))],
        default="random",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Comparisons are fixed when the set is built; their number is stored then, so lists need not count them.
    size = models.PositiveIntegerField(_("comparisons"), default=0)
    # Closing a set fixes its labels: experts may change their own labels only while it is open.
    closed_at = models.DateTimeField(_("closed at"), null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("manage_comparisons", "Can import responses and build comparison sets"),
            ("label_comparisons", "Can label the comparisons assigned to them"),
        ]
        constraints = [models.CheckConstraint(condition=Q(order__in=["random", "active"]), name="set_order_valid")]
        verbose_name = _("comparison set")
        verbose_name_plural = _("comparison sets")

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class Comparison(models.Model):
    """Two responses to one item in one language, compared on one subjective dimension (A and B canonical)."""

    comparison_set = models.ForeignKey(ComparisonSet, on_delete=models.CASCADE, related_name="comparisons")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="comparisons")
    language = models.CharField(_("language"), max_length=2, choices=LANGUAGE_CHOICES)
    dimension = models.ForeignKey("items.Dimension", on_delete=models.PROTECT, related_name="comparisons")
    response_a = models.ForeignKey(ModelResponse, on_delete=models.PROTECT, related_name="+")
    response_b = models.ForeignKey(ModelResponse, on_delete=models.PROTECT, related_name="+")
    # An attention check: the set's builder knows the answer (canonical: 1 A is better, -1 B, 0 a tie). Experts are
    # not told which comparisons are checks; their accuracy on them is shown to the builder.
    gold_winner = models.SmallIntegerField(_("known answer"), null=True, blank=True)

    class Meta:
        ordering = ["comparison_set", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(response_a=F("response_b")), name="comparison_pairs_two_responses"),
            models.CheckConstraint(
                condition=Q(language__in=[code for code, _name in LANGUAGE_CHOICES]), name="comparison_language_valid"
            ),
            models.UniqueConstraint(
                fields=["comparison_set", "dimension", "response_a", "response_b"], name="comparison_unique_in_set"
            ),
            models.CheckConstraint(
                condition=Q(gold_winner__isnull=True) | Q(gold_winner__in=(-1, 0, 1)), name="comparison_gold_valid"
            ),
        ]
        verbose_name = _("comparison")
        verbose_name_plural = _("comparisons")

    def __str__(self) -> str:
        return f"{self.item_id} [{self.language}] {self.dimension_id}: {self.response_a_id} vs {self.response_b_id}"


class ExpertProgress(Progress):
    """An expert's counts in one comparison set, kept by the labelling services as they label, skip and change.

    Pages and the API read progress from here instead of counting assignments, so their cost does not grow with
    the size of a set. ``annotation.labelling.services.comparison_set_recount`` rebuilds them from the assignments
    and labels.
    """

    comparison_set = models.ForeignKey(ComparisonSet, on_delete=models.CASCADE, related_name="expert_progress")
    expert = worker_key(related_name="+")
    labelled = models.PositiveIntegerField(_("labelled"), default=0)
    # Labels changed at least once.
    changed = models.PositiveIntegerField(_("changed"), default=0)

    Meta = progress_meta(
        owner="comparison_set",
        worker="expert",
        unique="one_progress_per_expert_and_set",
        index="progress_by_expert",
        verbose_name=_("labelling progress"),
    )

    def __str__(self) -> str:
        return f"{self.comparison_set_id} · {self.expert_id}: {self.labelled}/{self.assigned}"


class LabelAssignment(Assignment):
    """A comparison given to one expert, with the left/right order that expert sees: their queue in the set."""

    OWNER, WORKER, DONE_AT, DONE, CHANGE_FROM = "comparison_set", "expert", "labelled_at", "labelled", "reopened_at"
    progress = ExpertProgress

    class Order(models.TextChoices):
        AB = "AB", _("A left, B right")
        BA = "BA", _("B left, A right")

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="assignments")
    # The comparison's set, repeated here so that an expert's queue in a set is one index range.
    comparison_set = models.ForeignKey(ComparisonSet, on_delete=models.CASCADE, related_name="+")
    expert = worker_key(related_name="label_assignments")
    shown_order = models.CharField(max_length=2, choices=Order.choices)
    # When the expert labelled it (the label's creation), empty while open.
    labelled_at = models.DateTimeField(_("labelled at"), null=True, blank=True)
    first_viewed_at = models.DateTimeField(null=True, blank=True)
    # Set when the expert opens an assignment already labelled: a change is timed from then.
    reopened_at = models.DateTimeField(null=True, blank=True)

    Meta = assignment_meta(
        prefix="label",
        owner="comparison_set",
        worker="expert",
        done_at="labelled_at",
        constraints=[
            models.UniqueConstraint(fields=["comparison", "expert"], name="one_assignment_per_expert_and_comparison"),
            models.CheckConstraint(condition=Q(shown_order__in=["AB", "BA"]), name="assignment_shown_order_valid"),
        ],
        names=(_("labelling assignment"), _("labelling assignments")),
    )

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
    changed_at = models.DateTimeField(_("last changed at"), null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(score__gte=-5) & Q(score__lte=5), name="label_score_in_range"),
            models.CheckConstraint(condition=Q(shown_order__in=["AB", "BA"]), name="label_shown_order_valid"),
        ]
        verbose_name = _("expert label")
        verbose_name_plural = _("expert labels")

    def __str__(self) -> str:
        return f"{self.assignment}: {self.score:+d}"


class LabelChange(models.Model):
    """One change an expert made to their own label while the set was open: the old and the new verdict."""

    label = models.ForeignKey(ExpertLabel, on_delete=models.CASCADE, related_name="changes")
    old_score = models.SmallIntegerField(_("old signed score"))
    new_score = models.SmallIntegerField(_("new signed score"))
    old_rationale = models.TextField(_("old rationale"), blank=True)
    new_rationale = models.TextField(_("new rationale"), blank=True)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)
    seconds_spent = models.PositiveIntegerField(_("seconds spent"), null=True, blank=True)

    class Meta:
        ordering = ["label", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(old_score__gte=-5) & Q(old_score__lte=5) & Q(new_score__gte=-5) & Q(new_score__lte=5),
                name="label_change_scores_in_range",
            ),
        ]
        verbose_name = _("label change")
        verbose_name_plural = _("label changes")

    def __str__(self) -> str:
        return f"{self.label_id}: {self.old_score:+d} -> {self.new_score:+d}"
