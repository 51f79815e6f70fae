"""Evaluation runs: models under test on a frozen release, their responses, pairwise verdicts and the report."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.items.content import LANGUAGES
from annotation.labelling.models import LANGUAGE_CHOICES
from calibration.models import CombineRule, VerdictOrder
from evaluation.ratings import DEFAULT_MARGIN_MAPPING, MARGIN_MAPPINGS


class Protocol(models.TextChoices):
    LETTER = "letter", _("letter choice with shuffled options (chat)")
    LOGPROB = "logprob", _("mean per-token log-probability of each option (legacy completions)")
    # EiCAP's setting: open models scored by log-probability, chat-only APIs by letter choice, reported apart.
    MIXED = "mixed", _("log-probability for completions endpoints, letter choice for chat-only APIs (reported apart)")


class Pairing(models.TextChoices):
    ROUND_ROBIN = "round_robin", _("full round-robin")
    ADAPTIVE = "adaptive", _("adaptive (uncertainty and match quality)")


class Phase(models.TextChoices):
    DRAFT = "draft", _("not started")
    RESPONSES = "responses", _("collecting responses")
    JUDGING = "judging", _("judging open responses")
    DONE = "done", _("done")
    CANCELLED = "cancelled", _("cancelled")


class LLMRunKind(models.TextChoices):
    PROBE = "probe", _("log-probability probe")
    RESPONSES = "responses", _("responses")
    JUDGING = "judging", _("judging")


class EvaluationRun(models.Model):
    Protocol = Protocol
    Pairing = Pairing
    Phase = Phase

    name = models.CharField(_("name"), max_length=200, unique=True)
    release = models.ForeignKey("releases.Release", on_delete=models.PROTECT, related_name="evaluation_runs")
    languages = models.JSONField(_("languages"), default=list)
    judge = models.ForeignKey(
        "calibration.Judge", null=True, blank=True, on_delete=models.PROTECT, related_name="evaluation_runs"
    )
    judge_override_reason = models.TextField(_("reason for running without the selected judge"), blank=True)
    # The primary-judge selection in force when the run was created, when the run uses its judge: its reason (and
    # whether it went against the calibration report's rule) is shown with the run.
    judge_selection = models.ForeignKey(
        "calibration.JudgeSelection",
        verbose_name=_("judge selection"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluation_runs",
    )
    combine_rule = models.CharField(
        _("order combination"), max_length=12, choices=CombineRule.choices, default=CombineRule.FACET_TIE
    )
    protocol = models.CharField(
        _("objective protocol"), max_length=10, choices=Protocol.choices, default=Protocol.LETTER
    )
    pairing = models.CharField(_("pairing"), max_length=12, choices=Pairing.choices, default=Pairing.ROUND_ROBIN)
    adaptive_rounds = models.PositiveSmallIntegerField(_("adaptive rounds"), default=3)
    adaptive_pairs_per_round = models.PositiveIntegerField(_("adaptive pairs per round and stratum"), default=4)
    margin_mapping = models.CharField(
        _("margin to update mapping"),
        max_length=10,
        choices=[(name, name) for name in MARGIN_MAPPINGS],
        default=DEFAULT_MARGIN_MAPPING,
    )
    # NumPy's generators, which ratings, pairing and the bootstrap draw from, take only non-negative seeds.
    seed = models.PositiveIntegerField(_("seed"), default=0)
    phase = models.CharField(_("phase"), max_length=10, choices=Phase.choices, default=Phase.DRAFT)
    adaptive_round = models.PositiveSmallIntegerField(default=0)
    notes = models.JSONField(_("what is missing"), default=list, blank=True)
    report = models.JSONField(_("report"), null=True, blank=True)
    report_digest = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Shared by every LLM run of this evaluation: its budget (if any) and what they spent and hold in flight.
    budget_pool = models.OneToOneField(
        "llm.BudgetPool",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluation_run",
        verbose_name=_("budget"),
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(protocol__in=Protocol.values), name="evaluation_protocol_valid"),
            models.CheckConstraint(condition=Q(pairing__in=Pairing.values), name="evaluation_pairing_valid"),
            models.CheckConstraint(condition=Q(phase__in=Phase.values), name="evaluation_phase_valid"),
            models.CheckConstraint(
                condition=Q(combine_rule__in=CombineRule.values), name="evaluation_combine_rule_valid"
            ),
            models.CheckConstraint(
                condition=Q(margin_mapping__in=MARGIN_MAPPINGS), name="evaluation_margin_mapping_valid"
            ),
            models.CheckConstraint(
                condition=Q(report__isnull=True) | ~Q(report_digest=""), name="evaluation_report_has_digest"
            ),
        ]
        permissions = [("run_evaluation", "Can start and inspect evaluation runs")]
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")

    def __str__(self) -> str:
        return self.name


class ModelUnderTest(models.Model):
    """A model endpoint in a run, under an anonymous code used in prompts to judges and in exports."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="models")
    endpoint = models.ForeignKey("llm.Endpoint", on_delete=models.PROTECT, related_name="+")
    code = models.CharField(_("anonymous code"), max_length=20)
    label = models.CharField(_("display name"), max_length=200)

    class Meta:
        ordering = ["run", "code"]
        constraints = [
            models.UniqueConstraint(fields=["run", "code"], name="model_code_unique_in_run"),
            models.UniqueConstraint(fields=["run", "endpoint"], name="model_endpoint_unique_in_run"),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.label})"

    @property
    def protocol(self) -> str:
        """Return how this model's objective answers are scored: the run's protocol, resolved per endpoint if mixed."""
        if self.run.protocol != Protocol.MIXED:
            return self.run.protocol
        completions = self.endpoint.api_style == self.endpoint.ApiStyle.COMPLETIONS
        return Protocol.LOGPROB if completions else Protocol.LETTER


class EvaluationLLMRun(models.Model):
    """An LLM run started for an evaluation: one model's responses, or a round of the judge's verdicts."""

    Kind = LLMRunKind

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="llm_runs")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    model = models.ForeignKey(ModelUnderTest, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    llm_run = models.ForeignKey("llm.Run", on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField(default=0)
    collected = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=LLMRunKind.values), name="evaluation_llm_run_kind_valid"),
            # A model's own run (its responses or probes) names the model; the judge's runs belong to no model.
            models.CheckConstraint(
                condition=(Q(kind=LLMRunKind.JUDGING) & Q(model__isnull=True))
                | (~Q(kind=LLMRunKind.JUDGING) & Q(model__isnull=False)),
                name="evaluation_llm_run_model_matches_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run} {self.kind} {self.llm_run_id}"


class Answer(models.Model):
    """One model's answer to one objective item (or one turn of it) in one language."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="answers")
    model = models.ForeignKey(ModelUnderTest, on_delete=models.CASCADE, related_name="answers")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="+")
    revision = models.ForeignKey("items.ItemRevision", on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=2, choices=LANGUAGE_CHOICES)
    turn = models.PositiveSmallIntegerField(default=0)
    option_order = models.JSONField(_("options shown, as original indices"))
    correct_index = models.SmallIntegerField(null=True)
    chosen_index = models.SmallIntegerField(null=True, blank=True)
    parsed = models.BooleanField(default=False)
    correct = models.BooleanField(default=False)
    scores = models.JSONField(_("option log-probabilities"), null=True, blank=True)
    call = models.ForeignKey("llm.LLMCall", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    raw = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "model", "item", "language", "turn"], name="one_answer_per_turn"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="answer_language_valid"),
            models.CheckConstraint(
                condition=Q(parsed=False) | Q(chosen_index__isnull=False), name="parsed_answer_has_a_choice"
            ),
            models.CheckConstraint(condition=Q(correct=False) | Q(parsed=True), name="correct_answer_is_parsed"),
        ]

    def __str__(self) -> str:
        return f"{self.model_id} {self.item_id} [{self.language}] t{self.turn}"


class OpenResponse(models.Model):
    """A model under test's reply to an open prompt in a run; ``ok`` when it has text to judge.

    Not ``labelling.ModelResponse``: see "Model responses: labelling and evaluation" in docs/development.md.
    """

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="open_responses")
    model = models.ForeignKey(ModelUnderTest, on_delete=models.CASCADE, related_name="open_responses")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=2, choices=LANGUAGE_CHOICES)
    text = models.TextField(blank=True)
    ok = models.BooleanField(default=False)
    call = models.ForeignKey("llm.LLMCall", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "model", "item", "language"], name="one_open_response"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="open_response_language_valid"),
            models.CheckConstraint(condition=Q(ok=False) | ~Q(text=""), name="ok_open_response_has_text"),
        ]

    def __str__(self) -> str:
        return f"{self.model_id} {self.item_id} [{self.language}]"


class PairVerdict(models.Model):
    """The judge on two open responses to one item, in one order; score canonical (+: model_a better)."""

    Order = VerdictOrder

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="pair_verdicts")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=2, choices=LANGUAGE_CHOICES)
    model_a = models.ForeignKey(ModelUnderTest, on_delete=models.CASCADE, related_name="+")
    model_b = models.ForeignKey(ModelUnderTest, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=2, choices=VerdictOrder.choices)
    round = models.PositiveSmallIntegerField(default=0)
    parsed = models.BooleanField(default=False)
    score = models.SmallIntegerField(null=True, blank=True)
    raw = models.TextField(blank=True)
    call = models.ForeignKey("llm.LLMCall", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "language", "model_a", "model_b", "order"], name="one_pair_verdict_per_order"
            ),
            models.CheckConstraint(condition=~Q(model_a=models.F("model_b")), name="pair_of_two_models"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="pair_verdict_language_valid"),
            models.CheckConstraint(condition=Q(order__in=VerdictOrder.values), name="pair_verdict_order_valid"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=-5) & Q(score__lte=5)),
                name="pair_verdict_score_in_range",
            ),
            models.CheckConstraint(
                condition=Q(parsed=True, score__isnull=False) | Q(parsed=False, score__isnull=True),
                name="pair_verdict_score_iff_parsed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id} {self.model_a_id}v{self.model_b_id} {self.order}: {self.score}"


class ContaminationStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class ContaminationCheck(models.Model):
    """The TF-IDF nearest-neighbour cosine from a release's texts to an uploaded corpus (``evaluation.contamination``).

    The corpus (JSONL as uploaded) is kept until the check has run, then cleared: the result keeps its size, its
    SHA-256 and the closest pairs.
    """

    Status = ContaminationStatus

    release = models.ForeignKey("releases.Release", on_delete=models.CASCADE, related_name="contamination_checks")
    name = models.CharField(_("corpus name"), max_length=200)
    corpus = models.TextField(blank=True)
    corpus_texts = models.PositiveIntegerField(_("corpus texts"), default=0)
    corpus_sha256 = models.CharField(max_length=64)
    status = models.CharField(
        _("status"), max_length=10, choices=ContaminationStatus.choices, default=ContaminationStatus.QUEUED
    )
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ContaminationStatus.values), name="contamination_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=ContaminationStatus.DONE) | Q(result__isnull=False),
                name="contamination_done_has_result",
            ),
        ]
        verbose_name = _("contamination check")
        verbose_name_plural = _("contamination checks")

    def __str__(self) -> str:
        return f"{self.release} vs {self.name}"
