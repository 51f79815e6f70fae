"""What LLM permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, RESEARCHER

_USE = ["llm.view_endpoint", "llm.view_run", "llm.view_llmcall", "llm.run_llm"]

PERMISSIONS = {
    RESEARCHER: _USE,
    ADMIN: _USE + ["llm.manage_endpoint", "llm.add_endpoint", "llm.change_endpoint"],
}
