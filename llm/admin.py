from django.contrib import admin

from llm.models import Endpoint, LLMCall, Run


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "model", "base_url", "api_style", "api_key_env", "is_simulator", "is_active"]
    list_filter = ["api_style", "is_simulator", "is_active"]
    search_fields = ["name", "model", "base_url"]


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
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
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "endpoint", "status", "planned", "done", "cached", "failed", "spent", "created_at"]
    list_filter = ["status", "endpoint"]
    search_fields = ["name", "purpose"]
    readonly_fields = ["planned", "done", "cached", "failed", "spent", "estimated_cost", "heartbeat_at"]
