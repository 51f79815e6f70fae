"""API shapes for endpoints, runs and calls. No field ever carries an API key: only the variable's name."""

import os

from rest_framework import serializers

from core.inputs import ID_MAX
from llm import parsers, selectors
from llm.keys import api_key_env_status
from llm.models import CallStatus, Endpoint, LLMCall, Run, RunItem, RunStatus
from llm.models.calls import ErrorKind
from llm.services import ENDPOINT_FIELDS


class EndpointSerializer(serializers.ModelSerializer):
    api_key_set = serializers.SerializerMethodField(help_text="Whether the named variable is set for the web server.")

    class Meta:
        model = Endpoint
        fields = ["id", *ENDPOINT_FIELDS, "api_key_set", "capabilities", "probed_at", "created_at", "updated_at"]
        read_only_fields = ["id", "api_key_set", "capabilities", "probed_at", "created_at", "updated_at"]

    def get_api_key_set(self, endpoint: Endpoint) -> bool:
        return api_key_env_status(endpoint.api_key_env, os.environ) == "set"


class ConnectionReportSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    message = serializers.CharField()
    latency_ms = serializers.IntegerField(allow_null=True)
    error_kind = serializers.CharField()
    reply = serializers.CharField()
    call_id = serializers.IntegerField(allow_null=True)
    capabilities = serializers.JSONField(allow_null=True)


class RunSerializer(serializers.ModelSerializer):
    endpoint_name = serializers.CharField(source="endpoint.name", read_only=True)
    model = serializers.CharField(source="endpoint.model", read_only=True)
    is_simulator = serializers.BooleanField(source="endpoint.is_simulator", read_only=True)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True, default=None)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "id",
            "name",
            "purpose",
            "endpoint",
            "endpoint_name",
            "model",
            "is_simulator",
            "parser",
            "fresh",
            "status",
            "max_parse_retries",
            "planned",
            "done",
            "cached",
            "failed",
            "spent",
            "estimated_cost",
            "estimated_cost_batch",
            "mode",
            "batch_fallback",
            "budget",
            "reserved",
            "pause_reason",
            "error",
            "warnings",
            "progress",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "collected_at",
            "collect_error",
        ]
        read_only_fields = fields

    def get_progress(self, run: Run) -> dict:
        return ProgressSerializer(selectors.run_progress(run=run)).data


class ProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    planned = serializers.IntegerField()
    done = serializers.IntegerField()
    cached = serializers.IntegerField()
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.FloatField()
    spent = serializers.DecimalField(max_digits=16, decimal_places=8)
    estimated_total = serializers.DecimalField(max_digits=16, decimal_places=8)
    eta_seconds = serializers.IntegerField(allow_null=True)
    stalled = serializers.BooleanField()
    error = serializers.CharField()
    is_simulator = serializers.BooleanField()
    mode = serializers.CharField(help_text="live or batch")
    budget = serializers.DecimalField(max_digits=16, decimal_places=8, allow_null=True)
    reserved = serializers.DecimalField(
        max_digits=16, decimal_places=8, help_text="The most that requests in flight and open batches may cost."
    )
    pause_reason = serializers.CharField(help_text='"budget" when the budget paused the run, else empty.')
    estimated_cost_live = serializers.DecimalField(max_digits=16, decimal_places=8)
    estimated_cost_batch = serializers.DecimalField(max_digits=16, decimal_places=8)
    spent_at_live_prices = serializers.DecimalField(max_digits=16, decimal_places=8)
    spent_at_batch_prices = serializers.DecimalField(max_digits=16, decimal_places=8)


class RunCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    purpose = serializers.CharField(max_length=50, required=False, default="", allow_blank=True)
    endpoint = serializers.PrimaryKeyRelatedField(queryset=Endpoint.objects.filter(is_active=True))
    parser = serializers.CharField(help_text="A registered parser name, e.g. text, json, mcq_letter, judge_verdict.")
    prompts = serializers.ListField(
        child=serializers.DictField(),
        allow_empty=False,
        help_text='Objects like {"key": "q1", "messages": [...]} or {"key": "q1", "prompt": "..."}; optional '
        '"params" and "hints".',
    )
    fresh = serializers.BooleanField(required=False, default=False)
    max_parse_retries = serializers.IntegerField(required=False, min_value=0, max_value=10, allow_null=True)
    batch = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Send as provider batches; null: the endpoint's default.",
    )
    batch_fallback = serializers.ChoiceField(
        choices=Run.Mode.choices,
        required=False,
        default=Run.Mode.LIVE,
        help_text="Requests that fail or expire in a batch: sent again live, or in a new batch.",
    )
    budget = serializers.DecimalField(
        max_digits=16,
        decimal_places=8,
        min_value=0,
        required=False,
        allow_null=True,
        default=None,
        help_text="In the endpoint's currency; the run pauses before a request or batch that could exceed it.",
    )

    def validate_parser(self, value: str) -> str:
        if value not in parsers.names():
            raise serializers.ValidationError(f"unknown parser; known: {', '.join(parsers.names())}")
        return value


class RunBudgetSerializer(serializers.Serializer):
    budget = serializers.DecimalField(
        max_digits=16,
        decimal_places=8,
        min_value=0,
        allow_null=True,
        help_text="The new budget (null: none). A run paused by its budget resumes when it is raised.",
    )


class RunItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = RunItem
        fields = ["key", "ref", "position", "status", "cached", "result", "error", "cost", "call", "finished_at"]
        read_only_fields = fields


class CallSerializer(serializers.ModelSerializer):
    endpoint_name = serializers.CharField(source="endpoint.name", read_only=True)
    is_simulator = serializers.BooleanField(source="endpoint.is_simulator", read_only=True)

    class Meta:
        model = LLMCall
        fields = [
            "id",
            "endpoint",
            "endpoint_name",
            "is_simulator",
            "request_hash",
            "fresh",
            "request",
            "status",
            "http_status",
            "error_kind",
            "error",
            "response_text",
            "parsed",
            "input_tokens",
            "output_tokens",
            "cost",
            "latency_ms",
            "retries",
            "sends",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class CallDetailSerializer(CallSerializer):
    class Meta(CallSerializer.Meta):
        fields = [*CallSerializer.Meta.fields, "response_json", "attempts"]
        read_only_fields = fields


class RunFilterSerializer(serializers.Serializer):
    """The run list's query parameters (an endpoint that is no whole id, or an unknown status, is refused: 400)."""

    status = serializers.ChoiceField(choices=RunStatus.choices, required=False, help_text="filter by status")
    endpoint = serializers.IntegerField(required=False, min_value=1, max_value=ID_MAX, help_text="endpoint id")
    purpose = serializers.CharField(required=False, help_text="filter by purpose (``<app>.<what>``)")


class CallFilterSerializer(serializers.Serializer):
    """The call log's query parameters."""

    endpoint = serializers.IntegerField(required=False, min_value=1, max_value=ID_MAX, help_text="endpoint id")
    status = serializers.ChoiceField(choices=CallStatus.choices, required=False, help_text="filter by status")
    error_kind = serializers.ChoiceField(choices=ErrorKind.choices, required=False, help_text="filter by error kind")
