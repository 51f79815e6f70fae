"""API shapes for evaluation runs, their estimate, progress, report and the evidence behind a cell."""

from rest_framework import serializers

from annotation.releases.models import Release
from calibration.models import CombineRule, Judge
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from evaluation.ratings import DEFAULT_MARGIN_MAPPING, MARGIN_MAPPINGS
from evaluation.selectors import evaluation_run_llm_runs
from llm.models import Endpoint


class ModelUnderTestSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Anonymous code used in judge prompts and reports (M01, M02, ...).")
    label = serializers.CharField()
    endpoint = serializers.IntegerField(source="endpoint_id")
    endpoint_name = serializers.CharField(source="endpoint.name")


class EvaluationRunSerializer(serializers.ModelSerializer):
    release_version = serializers.CharField(source="release.version", read_only=True)
    benchmark = serializers.CharField(source="release.benchmark.slug", read_only=True)
    judge_name = serializers.CharField(source="judge.name", read_only=True, default=None)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True, default=None)
    models = ModelUnderTestSerializer(many=True, read_only=True)
    has_report = serializers.SerializerMethodField()
    budget = serializers.DecimalField(
        source="budget_pool.budget", max_digits=16, decimal_places=8, read_only=True, default=None
    )
    spent = serializers.DecimalField(
        source="budget_pool.spent", max_digits=16, decimal_places=8, read_only=True, default=None
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "name",
            "release",
            "release_version",
            "benchmark",
            "languages",
            "models",
            "judge",
            "judge_name",
            "judge_override_reason",
            "combine_rule",
            "protocol",
            "held_out_release",
            "pairing",
            "margin_mapping",
            "seed",
            "phase",
            "budget",
            "spent",
            "has_report",
            "report_digest",
            "created_by",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_has_report(self, run: EvaluationRun) -> bool:
        return bool(run.report_digest)


class LLMRunLinkSerializer(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField(source="model.code", default=None, help_text="Model code; null for the judge.")
    llm_run = serializers.IntegerField(source="llm_run_id")
    status = serializers.CharField(source="llm_run.status")
    round = serializers.IntegerField()
    collected = serializers.BooleanField()


class EvaluationRunDetailSerializer(EvaluationRunSerializer):
    notes = serializers.JSONField(read_only=True)
    llm_runs = serializers.SerializerMethodField()

    class Meta(EvaluationRunSerializer.Meta):
        fields = [*EvaluationRunSerializer.Meta.fields, "notes", "llm_runs"]
        read_only_fields = fields

    def get_llm_runs(self, run: EvaluationRun) -> list[dict]:
        return LLMRunLinkSerializer(evaluation_run_llm_runs(run=run), many=True).data


class EvaluationRunCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    release = serializers.PrimaryKeyRelatedField(
        queryset=Release.objects.filter(status=Release.Status.FROZEN), help_text="Id of a frozen release."
    )
    endpoints = serializers.PrimaryKeyRelatedField(
        queryset=Endpoint.objects.filter(is_active=True), many=True, allow_empty=False, help_text="Models under test."
    )
    languages = serializers.ListField(
        child=serializers.ChoiceField(choices=["en", "zh"]), default=["en", "zh"], allow_empty=False
    )
    protocol = serializers.ChoiceField(choices=EvaluationRun.Protocol.choices, default=EvaluationRun.Protocol.LETTER)
    held_out_release = serializers.PrimaryKeyRelatedField(
        queryset=Release.objects.filter(status=Release.Status.FROZEN),
        required=False,
        allow_null=True,
        help_text="Id of a frozen held-out probe set (another generator's) scored beside the release, reported apart.",
    )
    pairing = serializers.ChoiceField(choices=EvaluationRun.Pairing.choices, default=EvaluationRun.Pairing.AUTO)
    combine_rule = serializers.ChoiceField(
        choices=CombineRule.choices, required=False, help_text="Default: the rule of the primary judge's calibration."
    )
    margin_mapping = serializers.ChoiceField(choices=sorted(MARGIN_MAPPINGS), default=DEFAULT_MARGIN_MAPPING)
    seed = serializers.IntegerField(min_value=0, default=0)
    judge = serializers.PrimaryKeyRelatedField(
        queryset=Judge.objects.all(), required=False, allow_null=True, help_text="Default: the primary judge."
    )
    judge_override_reason = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        help_text="Needed to run with another judge than the primary one, or without any (objective items only).",
    )
    budget = serializers.DecimalField(
        max_digits=16,
        decimal_places=8,
        min_value=0,
        required=False,
        allow_null=True,
        help_text="Spending cap shared by all the run's LLM runs; they pause before a request that could exceed it.",
    )


class BudgetSerializer(serializers.Serializer):
    budget = serializers.DecimalField(
        max_digits=16,
        decimal_places=8,
        allow_null=True,
        help_text="The new cap (null: none). LLM runs it paused resume when it is raised.",
    )


class EstimateSerializer(serializers.Serializer):
    response_calls = serializers.IntegerField()
    response_cost = serializers.DecimalField(max_digits=16, decimal_places=8)
    judge_calls_round_robin = serializers.IntegerField()
    judge_cost_round_robin = serializers.DecimalField(max_digits=16, decimal_places=8)
    total_cost = serializers.DecimalField(max_digits=16, decimal_places=8)


class KindCountsSerializer(serializers.Serializer):
    planned = serializers.IntegerField()
    done = serializers.IntegerField()
    cached = serializers.IntegerField()
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    runs = serializers.IntegerField()
    collected = serializers.IntegerField()
    unfinished = serializers.IntegerField()


class CountsSerializer(KindCountsSerializer):
    by_kind = serializers.DictField(child=KindCountsSerializer(), help_text="The same counts per kind of LLM run.")


class EvaluationProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    phase = serializers.ChoiceField(choices=EvaluationRun.Phase.choices)
    phase_label = serializers.CharField()
    running = serializers.BooleanField()
    done = serializers.BooleanField()
    finished = serializers.BooleanField(help_text="Done or cancelled.")
    percent = serializers.FloatField()
    eta_seconds = serializers.IntegerField(allow_null=True)
    awaiting_collection = serializers.BooleanField()
    collecting = serializers.BooleanField(
        help_text="Every call planned so far has answered but the run goes on (results stored, report built)."
    )
    has_report = serializers.BooleanField()
    paused_llm_runs = serializers.IntegerField(help_text="LLM runs of the evaluation that are paused.")
    counts = CountsSerializer()


class AnswerSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid")
    dimension = serializers.CharField(source="item.dimension.code")
    model = serializers.CharField(source="model.code")

    class Meta:
        model = Answer
        fields = [
            "item",
            "dimension",
            "language",
            "turn",
            "model",
            "option_order",
            "correct_index",
            "chosen_index",
            "parsed",
            "correct",
            "scores",
            "raw",
            "call",
        ]
        read_only_fields = fields


class OpenResponseSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid")
    dimension = serializers.CharField(source="item.dimension.code")
    model = serializers.CharField(source="model.code")

    class Meta:
        model = OpenResponse
        fields = ["item", "dimension", "language", "model", "text", "ok", "call"]
        read_only_fields = fields


class PairVerdictSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid")
    dimension = serializers.CharField(source="item.dimension.code")
    model_a = serializers.CharField(source="model_a.code")
    model_b = serializers.CharField(source="model_b.code")

    class Meta:
        model = PairVerdict
        fields = [
            "item",
            "dimension",
            "language",
            "model_a",
            "model_b",
            "order",
            "round",
            "parsed",
            "score",
            "raw",
            "call",
        ]
        read_only_fields = fields


class EvidenceSerializer(serializers.Serializer):
    filters = serializers.DictField(child=serializers.CharField(allow_null=True))
    page = serializers.IntegerField(help_text="This page (from 1): ?page=N.")
    has_next = serializers.BooleanField(help_text="Whether any of the three lists goes on in the next page.")
    answers = AnswerSerializer(many=True, help_text="At most 500 a page, by item, language and turn.")
    opens = OpenResponseSerializer(many=True, help_text="At most 200 open responses a page, by item and language.")
    verdicts = PairVerdictSerializer(many=True, help_text="At most 500 judge verdicts a page.")
