"""What LLM permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, RESEARCHER

_USE = ["llm.view_endpoint", "llm.view_run", "llm.view_llmcall", "llm.run_llm"]

PERMISSIONS = {
    RESEARCHER: _USE,
    # Provider batches and budget pools are shown read-only in the admin site.
    ADMIN: _USE
    + ["llm.manage_endpoint", "llm.add_endpoint", "llm.change_endpoint", "llm.view_runbatch", "llm.view_budgetpool"],
}
