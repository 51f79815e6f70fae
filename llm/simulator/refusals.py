"""What the simulator refuses before it answers: the path's API style, a broken server's reply, a request body that
is not JSON, an unknown model, a parameter the endpoint rejects and a malformed request, as OpenAI (or LiteLLM's
proxy) would refuse them."""

import json

from llm.simulator import embeddings, simulation
from llm.simulator.batches import Reply, error_reply

ROLES = {"system", "user", "assistant", "developer"}
# The modes of a broken server (the path's first part): what it answers any well-formed request with.
BROKEN = {
    "html": (
        "text/html",
        b"<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>",
    ),
    "badjson": ("application/json", b'{"id": "chatcmpl-broken", "choices": [{"message": {"content": "unterminated'),
}


def style_for(path: str) -> str | None:
    """Return the API style a path asks for (``chat``, ``completions``, ``embeddings``), None for an unknown path."""
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/completions") or path.endswith("/embeddings"):
        return path.rpartition("/")[2]
    return None


def broken_reply(mode: str) -> Reply:
    """Return what a broken server (``BROKEN``) answers: an HTML page, or JSON cut off in the middle."""
    content_type, body = BROKEN[mode]
    return Reply(200, body, content_type=content_type)


def read_request(body: bytes, *, unknown_model_status: int, reject_max_tokens: bool) -> dict | Reply:
    """Return the request's JSON object, or the reply refusing it: a body that is not a JSON object, a model the
    simulator does not play (404, or LiteLLM's 400), ``max_tokens`` where the endpoint takes only
    ``max_completion_tokens``."""
    try:
        data = json.loads(body or b"")
    except ValueError:
        return error_reply(400, "We could not parse the JSON body of your request.", "invalid_request_error")
    if not isinstance(data, dict):
        return error_reply(400, "The request body must be a JSON object.", "invalid_request_error")
    model = data.get("model")
    if not isinstance(model, str) or simulation.role_for(model) is None:
        return _unknown_model(model, unknown_model_status)
    if reject_max_tokens and "max_tokens" in data:
        return error_reply(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
            "instead.",
            "invalid_request_error",
            "unsupported_parameter",
        )
    return data


def _unknown_model(model: object, status: int) -> Reply:
    if status == 400:
        # As LiteLLM's proxy answers: a 400 whose code names no reason.
        message = f"Invalid model name passed in model={model}. Call `/v1/models` to view available models."
        return error_reply(400, message, "invalid_request_error", "400")
    return error_reply(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    )


def request_problem(style: str, data: dict) -> str:
    """Say what is wrong with a request of the API ``style`` (a 400's message); "" when it is fine."""
    if style == "embeddings":
        return embeddings.problem(data)
    max_tokens = data.get("max_tokens", data.get("max_completion_tokens"))
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 0):
        return "max_tokens must be a non-negative integer."
    return _messages_problem(data) if style == "chat" else _prompt_problem(data)


def _messages_problem(data: dict) -> str:
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array."
    if any(not isinstance(message, dict) or message.get("role") not in ROLES for message in messages):
        return "Each message needs a role of system, developer, user or assistant."
    return ""


def _prompt_problem(data: dict) -> str:
    if not isinstance(data.get("prompt"), (str, list)) or not data.get("prompt"):
        return "'prompt' must be a non-empty string or array of strings."
    if data.get("echo") and data.get("logprobs") is not None and not isinstance(data.get("logprobs"), int):
        return "'logprobs' must be an integer."
    return ""
