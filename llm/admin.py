from django.contrib import admin

from core.admin import ReadOnlyAdmin, StudioModelAdmin
from llm.models import BudgetPool, Endpoint, LLMCall, Run, RunBatch


@admin.register(Endpoint)
class EndpointAdmin(StudioModelAdmin):
    list_display = [
        "name",
        "model",
        "base_url",
        "api_style",
        "api_key_env",
        "is_simulator",
        "is_active",
        "for_drafting",
    ]
    list_filter = ["api_style", "is_simulator", "is_active", "for_drafting"]
    search_fields = ["name", "model", "base_url"]


@admin.register(LLMCall)
class LLMCallAdmin(StudioModelAdmin):
    list_display = [
        "id",
        "endpoint",
        "status",
        "error_kind",
        "http_status",
        "cost",
        "latency_ms",
        "retries",
        "created_at",
    ]
    list_filter = ["status", "error_kind", "endpoint"]
    search_fields = ["request_hash"]
    readonly_fields = [f.name for f in LLMCall._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(Run)
class RunAdmin(StudioModelAdmin):
    list_display = ["id", "name", "endpoint", "status", "planned", "done", "cached", "failed", "spent", "created_at"]
    list_filter = ["status", "endpoint"]
    search_fields = ["name", "purpose"]
    readonly_fields = ["planned", "done", "cached", "failed", "spent", "estimated_cost", "heartbeat_at"]


@admin.register(RunBatch)
class RunBatchAdmin(ReadOnlyAdmin):
    """Provider batches of batch-mode runs: where each chunk's batch stands at the provider."""

    list_display = [
        "id",
        "run",
        "chunk",
        "attempt",
        "status",
        "provider_status",
        "provider_batch_id",
        "completed_requests",
        "failed_requests",
        "reserved",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status"]
    search_fields = ["key", "provider_batch_id", "run__name"]
    list_select_related = ["run", "chunk"]
    exclude = ["requests"]


@admin.register(BudgetPool)
class BudgetPoolAdmin(ReadOnlyAdmin):
    """Budgets shared by runs (an evaluation's LLM runs share one). Raise a budget on the run's page or through
    the API: that also resumes the runs it paused."""

    list_display = ["id", "name", "budget", "spent", "reserved", "created_at"]
    search_fields = ["name"]
