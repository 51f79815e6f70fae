"""Judge prompts, judges, calibration runs, judge verdicts and the selection of the primary judge."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class JudgePrompt(models.Model):
    """The expert-authored instructions for judging one subjective dimension; editing makes a new version."""

    dimension = models.ForeignKey("items.Dimension", on_delete=models.PROTECT, related_name="judge_prompts")
    version = models.PositiveIntegerField(_("version"))
    criteria = models.TextField(_("criteria, in priority order"))
    few_shot = models.JSONField(
        _("few-shot pairs"),
        default=list,
        blank=True,
        help_text=_('A list of {"user": ..., "exemplary": ..., "poor": ..., "why": ...} examples.'),
    )
    analysis_steps = models.TextField(_("required analysis before the verdict"))
    length_penalty = models.TextField(_("length penalty instruction"))
    notes = models.TextField(_("version notes"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dimension__position", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["dimension", "version"], name="judge_prompt_version_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="judge_prompt_version_positive"),
        ]
        permissions = [("author_judge_prompt", "Can write judge prompts")]
        verbose_name = _("judge prompt")
        verbose_name_plural = _("judge prompts")

    def __str__(self) -> str:
        return f"{self.dimension.code} v{self.version}"


class PromptSet(models.Model):
    """One prompt version per subjective dimension, used together by a judge."""

    name = models.CharField(_("name"), max_length=100)
    version = models.PositiveIntegerField(_("version"))
    prompts = models.ManyToManyField(JudgePrompt, related_name="prompt_sets")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="prompt_set_version_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="prompt_set_version_positive"),
        ]
        verbose_name = _("prompt set")
        verbose_name_plural = _("prompt sets")

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class JudgeKind(models.TextChoices):
    """A single judge asks one endpoint; a jury combines the verdicts of its member judges."""

    SINGLE = "single", _("single judge")
    JURY = "jury", _("jury of judges")


class JuryAggregation(models.TextChoices):
    """How a jury turns its members' verdicts on a pair (each one's two orders combined) into one verdict."""

    MAJORITY = "majority", _("majority vote on the winner (margin: median of the majority's margins)")
    MEAN = "mean", _("mean signed score, keeping its sign (size rounded half away from zero)")


class Judge(models.Model):
    """A candidate judge: an endpoint plus a prompt set version, or a jury of such judges."""

    Kind = JudgeKind

    name = models.CharField(_("name"), max_length=100, unique=True)
    kind = models.CharField(_("kind"), max_length=6, choices=JudgeKind.choices, default=JudgeKind.SINGLE)
    endpoint = models.ForeignKey("llm.Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="judges")
    prompt_set = models.ForeignKey(PromptSet, null=True, blank=True, on_delete=models.PROTECT, related_name="judges")
    members = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="juries")
    aggregation = models.CharField(_("aggregation"), max_length=8, choices=JuryAggregation.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "prompt_set"], name="judge_unique"),
            models.CheckConstraint(condition=Q(kind__in=JudgeKind.values), name="judge_kind_valid"),
            models.CheckConstraint(
                condition=(
                    Q(kind=JudgeKind.SINGLE)
                    & Q(endpoint__isnull=False)
                    & Q(prompt_set__isnull=False)
                    & Q(aggregation="")
                )
                | (
                    Q(kind=JudgeKind.JURY)
                    & Q(endpoint__isnull=True)
                    & Q(prompt_set__isnull=True)
                    & Q(aggregation__in=JuryAggregation.values)
                ),
                name="judge_single_has_endpoint_jury_has_aggregation",
            ),
        ]
        permissions = [("run_judge", "Can run and inspect judge calibration")]
        verbose_name = _("judge")
        verbose_name_plural = _("judges")

    def __str__(self) -> str:
        return self.name

    @property
    def is_jury(self) -> bool:
        return self.kind == JudgeKind.JURY


class CombineRule(models.TextChoices):
    """How the verdicts of both presentation orders become one score (``calibration.report.combine_orders``)."""

    FACET_TIE = "facet_tie", _("FACET: keep consistent pairs; an inconsistent pair counts as a tie")
    FACET_DROP = "facet_drop", _("FACET: keep consistent pairs; drop inconsistent pairs")
    SUMMED = "summed", _("Summed margins of both orders")


class VerdictOrder(models.TextChoices):
    """The order in which a judge is shown the two responses of a pair (AB: A first)."""

    AB = "AB", _("A first")
    BA = "BA", _("B first")


class ReportState(models.TextChoices):
    """Where the computation of a calibration run's report stands (a worker computes it: ``calibration.tasks``)."""

    IDLE = "idle", _("not requested")
    QUEUED = "queued", _("queued")
    COMPUTING = "computing", _("computing")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class CalibrationRun(models.Model):
    """Every candidate judge asked about every comparison of a set, in both orders."""

    ReportState = ReportState

    name = models.CharField(_("name"), max_length=200)
    comparison_set = models.ForeignKey(
        "labelling.ComparisonSet", on_delete=models.PROTECT, related_name="calibration_runs"
    )
    judges = models.ManyToManyField(Judge, through="CalibrationJudgeRun", related_name="calibration_runs")
    # Juries ask no endpoint themselves: their verdicts come from their members' runs (members are run too).
    juries = models.ManyToManyField(Judge, blank=True, related_name="jury_calibration_runs")
    combine_rule = models.CharField(_("order combination"), max_length=12, choices=CombineRule.choices)
    # NumPy's generators, which every bootstrap draws from, take only non-negative seeds.
    seed = models.PositiveIntegerField(_("seed"), default=0)
    bootstrap = models.PositiveIntegerField(_("bootstrap resamples"), default=1000)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    collected_at = models.DateTimeField(null=True, blank=True)
    report = models.JSONField(_("report"), null=True, blank=True)
    report_digest = models.CharField(_("report checksum"), max_length=64, blank=True)
    reported_at = models.DateTimeField(null=True, blank=True)
    report_state = models.CharField(
        _("report computation"), max_length=10, choices=ReportState.choices, default=ReportState.IDLE
    )
    report_requested_at = models.DateTimeField(null=True, blank=True)
    report_error = models.TextField(_("why the report computation failed"), blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(report_state__in=ReportState.values), name="calibration_report_state_valid"
            ),
            models.CheckConstraint(
                condition=Q(combine_rule__in=CombineRule.values), name="calibration_run_combine_rule_valid"
            ),
            models.CheckConstraint(
                condition=Q(report__isnull=True) | (~Q(report_digest="") & Q(reported_at__isnull=False)),
                name="calibration_report_has_digest_and_time",
            ),
        ]
        verbose_name = _("calibration run")
        verbose_name_plural = _("calibration runs")

    def __str__(self) -> str:
        return self.name


class CalibrationJudgeRun(models.Model):
    calibration_run = models.ForeignKey(CalibrationRun, on_delete=models.CASCADE, related_name="judge_runs")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="judge_runs")
    llm_run = models.ForeignKey("llm.Run", on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["calibration_run", "judge"], name="one_llm_run_per_judge")]

    def __str__(self) -> str:
        return f"{self.calibration_run} · {self.judge}"


class JudgeVerdict(models.Model):
    """A judge's verdict on one comparison in one order, with its raw output; scores are canonical (+ = A)."""

    Order = VerdictOrder

    calibration_run = models.ForeignKey(CalibrationRun, on_delete=models.CASCADE, related_name="verdicts")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="verdicts")
    comparison = models.ForeignKey("labelling.Comparison", on_delete=models.PROTECT, related_name="judge_verdicts")
    order = models.CharField(max_length=2, choices=Order.choices)
    call = models.ForeignKey("llm.LLMCall", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    raw_output = models.TextField(_("raw output"), blank=True)
    parsed = models.BooleanField(_("parsed"), default=False)
    error = models.TextField(_("error"), blank=True)
    score = models.SmallIntegerField(_("canonical signed score"), null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["calibration_run", "judge", "comparison", "order"], name="one_verdict_per_order"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=-5) & Q(score__lte=5)), name="verdict_score_in_range"
            ),
            models.CheckConstraint(condition=Q(parsed=False) | Q(score__isnull=False), name="parsed_verdict_has_score"),
            models.CheckConstraint(
                condition=Q(parsed=True) | Q(score__isnull=True), name="unparsed_verdict_has_no_score"
            ),
            models.CheckConstraint(condition=Q(order__in=VerdictOrder.values), name="judge_verdict_order_valid"),
        ]
        verbose_name = _("judge verdict")
        verbose_name_plural = _("judge verdicts")

    def __str__(self) -> str:
        return f"{self.judge} {self.comparison_id} {self.order}: {self.score}"


class JudgeSelection(models.Model):
    """Who chose which judge as primary, why, on which calibration report. The latest selection is in force."""

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="selections")
    calibration_run = models.ForeignKey(CalibrationRun, on_delete=models.PROTECT, related_name="selections")
    reason = models.TextField(_("reason"))
    selected_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    selected_at = models.DateTimeField(auto_now_add=True)
    report_digest = models.CharField(_("report checksum"), max_length=64)
    # The report's rule excluded this judge (significantly worse than the experts, or alpha undefined) and the
    # researcher chose it anyway: ``rule_note`` keeps the report's line on it, shown wherever the judge is used.
    against_rule = models.BooleanField(_("chosen against the rule"), default=False)
    rule_note = models.TextField(_("why the rule excluded the judge"), blank=True)

    class Meta:
        ordering = ["-selected_at"]
        get_latest_by = "selected_at"
        constraints = [models.CheckConstraint(condition=~Q(report_digest=""), name="selection_names_a_report")]
        verbose_name = _("judge selection")
        verbose_name_plural = _("judge selections")

    def __str__(self) -> str:
        return f"{self.judge} ({self.selected_at:%Y-%m-%d})"


class ServedComparison(models.Model):
    """When a comparison of an actively ordered set was served, and the probability with which it was drawn.

    ``probability`` is the chance the draw had of picking this comparison among the ``remaining`` comparisons of
    its stratum not yet served; with the served order it makes the agreement estimates design-unbiased
    (``annotation.labelling.active``).
    """

    comparison_set = models.ForeignKey("labelling.ComparisonSet", on_delete=models.CASCADE, related_name="served")
    comparison = models.OneToOneField("labelling.Comparison", on_delete=models.CASCADE, related_name="served")
    position = models.PositiveIntegerField(_("served position"))
    probability = models.FloatField(_("draw probability"))
    remaining = models.PositiveIntegerField(_("comparisons left in the stratum"))
    priority = models.FloatField(_("priority"), default=0.0)
    served_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["comparison_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["comparison_set", "position"], name="served_position_unique"),
            models.CheckConstraint(
                condition=Q(probability__gt=0) & Q(probability__lte=1), name="served_probability_in_range"
            ),
        ]
        verbose_name = _("served comparison")
        verbose_name_plural = _("served comparisons")

    def __str__(self) -> str:
        return f"{self.comparison_set_id} #{self.position}: {self.comparison_id} (q={self.probability:.3f})"
