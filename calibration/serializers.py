"""API shapes for judge prompts, prompt sets, judges, calibration runs, their reports and the primary judge."""

from django.urls import reverse
from rest_framework import serializers

from annotation.items.models import Dimension
from annotation.labelling.models import ComparisonSet
from calibration.api_support import judge_runs_status
from calibration.models import CalibrationRun, CombineRule, Judge, JudgePrompt, JudgeSelection, PromptSet
from calibration.report import DOWNLOADS
from llm.models import Endpoint
from llm.selectors import run_progress
from llm.serializers import ProgressSerializer


class JudgePromptSerializer(serializers.ModelSerializer):
    dimension_code = serializers.CharField(source="dimension.code", read_only=True)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True, default=None)

    class Meta:
        model = JudgePrompt
        fields = [
            "id",
            "dimension",
            "dimension_code",
            "version",
            "criteria",
            "analysis_steps",
            "length_penalty",
            "few_shot",
            "notes",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


class JudgePromptCreateSerializer(serializers.Serializer):
    dimension = serializers.PrimaryKeyRelatedField(
        queryset=Dimension.objects.filter(subjective=True), help_text="Id of a subjective dimension."
    )
    criteria = serializers.CharField(help_text="Criteria, in priority order.")
    analysis_steps = serializers.CharField(help_text="The analysis required before the verdict.")
    length_penalty = serializers.CharField()
    few_shot = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        help_text='Objects like {"user": ..., "exemplary": ..., "poor": ..., "why": ...}.',
    )
    notes = serializers.CharField(required=False, default="", allow_blank=True)


class PromptSetSerializer(serializers.ModelSerializer):
    class Meta:
        model = PromptSet
        fields = ["id", "name", "version", "prompts", "created_at"]
        read_only_fields = fields


class PromptSetCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    prompts = serializers.PrimaryKeyRelatedField(
        queryset=JudgePrompt.objects.all(), many=True, help_text="Judge prompt ids, one per dimension."
    )


class JudgeSerializer(serializers.ModelSerializer):
    """A single judge (an endpoint with a prompt set); juries (``kind`` "jury") list their member judges."""

    endpoint_name = serializers.CharField(source="endpoint.name", read_only=True, default=None)
    model = serializers.CharField(source="endpoint.model", read_only=True, default=None)
    prompt_set_name = serializers.CharField(source="prompt_set.__str__", read_only=True, default=None)
    kind = serializers.CharField(read_only=True)
    members = serializers.SerializerMethodField()
    aggregation = serializers.CharField(read_only=True)

    class Meta:
        model = Judge
        fields = [
            "id",
            "name",
            "kind",
            "endpoint",
            "endpoint_name",
            "model",
            "prompt_set",
            "prompt_set_name",
            "members",
            "aggregation",
            "created_at",
        ]
        read_only_fields = ["id", "kind", "endpoint_name", "model", "prompt_set_name", "created_at"]
        extra_kwargs = {
            "endpoint": {"queryset": Endpoint.objects.filter(is_active=True), "required": True, "allow_null": False},
            "prompt_set": {"required": True, "allow_null": False},
        }
        # Uniqueness is checked by the service (``full_clean``), which answers with the field at fault.
        validators = []

    def get_members(self, judge: Judge) -> list[int]:
        """Return the ids of a jury's member judges (none for a single judge)."""
        return [member.pk for member in judge.members.all()]


class JudgeRunSerializer(serializers.Serializer):
    """One candidate judge of a calibration run and the progress of its LLM run."""

    judge = serializers.IntegerField(source="judge.id")
    judge_name = serializers.CharField(source="judge.name")
    llm_run = serializers.IntegerField(source="llm_run.id")
    progress = serializers.SerializerMethodField()

    def get_progress(self, judge_run: object) -> dict:
        return ProgressSerializer(run_progress(run=judge_run.llm_run)).data


class CalibrationRunSerializer(serializers.ModelSerializer):
    comparison_set_name = serializers.CharField(source="comparison_set.name", read_only=True)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True, default=None)
    status = serializers.SerializerMethodField(help_text="running, collecting (verdicts being stored) or finished.")
    judges = serializers.SerializerMethodField(help_text="The single judges asked, each with its LLM run.")
    juries = serializers.SerializerMethodField(help_text="Juries combining the verdicts of some of the judges.")
    report_ready = serializers.SerializerMethodField()

    class Meta:
        model = CalibrationRun
        fields = [
            "id",
            "name",
            "comparison_set",
            "comparison_set_name",
            "combine_rule",
            "seed",
            "bootstrap",
            "status",
            "judges",
            "juries",
            "report_ready",
            "report_state",
            "report_digest",
            "created_by",
            "created_at",
            "collected_at",
            "reported_at",
        ]
        read_only_fields = fields

    def get_status(self, run: CalibrationRun) -> str:
        return judge_runs_status(run.api_judge_runs)

    def get_judges(self, run: CalibrationRun) -> list[dict]:
        return [{"id": jr.judge.id, "name": jr.judge.name, "llm_run": jr.llm_run_id} for jr in run.api_judge_runs]

    def get_juries(self, run: CalibrationRun) -> list[dict]:
        return [{"id": jury.id, "name": jury.name} for jury in run.api_juries]

    def get_report_ready(self, run: CalibrationRun) -> bool:
        return bool(run.report_digest)


class CalibrationRunDetailSerializer(CalibrationRunSerializer):
    progress = serializers.SerializerMethodField(help_text="Each judge's LLM run: counts, percent, spend.")
    percent = serializers.SerializerMethodField(help_text="Share of every judge's requests processed, 0-100.")
    files = serializers.SerializerMethodField(help_text="Where to download the report (json, csv, tex) once computed.")

    class Meta(CalibrationRunSerializer.Meta):
        fields = [*CalibrationRunSerializer.Meta.fields, "percent", "progress", "files"]
        read_only_fields = fields

    def get_files(self, run: CalibrationRun) -> dict[str, str]:
        request = self.context.get("request")
        if not run.report_digest or request is None:
            return {}
        return {
            fmt: request.build_absolute_uri(reverse("calibration-run-file", kwargs={"pk": run.pk, "fmt": fmt}))
            for fmt in sorted(DOWNLOADS)
        }

    def get_progress(self, run: CalibrationRun) -> list[dict]:
        return JudgeRunSerializer(run.api_judge_runs, many=True).data

    def get_percent(self, run: CalibrationRun) -> float:
        planned = sum(jr.llm_run.planned for jr in run.api_judge_runs)
        processed = sum(jr.llm_run.done + jr.llm_run.failed for jr in run.api_judge_runs)
        return round(100.0 * processed / planned, 1) if planned else 0.0


class CalibrationRunCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    comparison_set = serializers.PrimaryKeyRelatedField(queryset=ComparisonSet.objects.all())
    judges = serializers.PrimaryKeyRelatedField(queryset=Judge.objects.all(), many=True, allow_empty=False)
    combine_rule = serializers.ChoiceField(choices=CombineRule.choices, default=CombineRule.FACET_TIE)
    seed = serializers.IntegerField(min_value=0, default=0)
    bootstrap = serializers.IntegerField(min_value=0, max_value=20000, default=1000)


class SuggestionSerializer(serializers.Serializer):
    judge = serializers.IntegerField(allow_null=True, help_text="Id of the suggested judge; null when none qualifies.")
    judge_name = serializers.CharField(allow_null=True)
    rule = serializers.CharField()
    reasoning = serializers.ListField(child=serializers.CharField())
    report_digest = serializers.CharField(help_text="SHA-256 of the report the suggestion was read from.")


class JudgeSelectSerializer(serializers.Serializer):
    judge = serializers.PrimaryKeyRelatedField(queryset=Judge.objects.all())
    reason = serializers.CharField(help_text="Why this judge; part of the record.")
    override_rule = serializers.BooleanField(
        default=False,
        help_text="Choose a judge the report's rule excluded (answered 400 judge_excluded without it); recorded.",
    )


class JudgeSelectionSerializer(serializers.ModelSerializer):
    judge_name = serializers.CharField(source="judge.name", read_only=True)
    selected_by = serializers.CharField(source="selected_by.get_username", read_only=True)

    class Meta:
        model = JudgeSelection
        fields = [
            "id",
            "judge",
            "judge_name",
            "calibration_run",
            "reason",
            "selected_by",
            "selected_at",
            "report_digest",
            "against_rule",
            "rule_note",
        ]
        read_only_fields = fields
