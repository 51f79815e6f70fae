"""What an endpoint supports, found by asking it: chat completions, prompt log-probabilities, the Files and Batches
API, the name of its token-limit parameter and whether its usage counts are plausible.

*Test connection* (``llm.services.endpoint_test_connection``) runs ``capabilities_probe`` and stores its result on
the endpoint (``Endpoint.capabilities``, ``probed_at``); ``run_refusal`` reads it back to refuse, before anything is
sent, a run whose protocol needs what the endpoint lacks. Every probe request is sent once, without retries.
"""

import asyncio
import dataclasses
import uuid

import openai
from django.utils.translation import gettext as _

from llm import parsers
from llm.calls import CHAT, COMPLETIONS, build_request
from llm.executor import CallOutcome, CallSpec, EndpointConfig, execute_all
from llm.models import Endpoint, TokenParameter

SHORT_PROMPT = "Reply with the single word OK."
LONG_PROMPT = (
    "Read this and reply with the single word OK. A colleague wrote to say that she is worried about the move to a "
    "new city, that she misses her family, that her new flat is cold and that she has not slept well for weeks; she "
    "asks whether these feelings are normal and how long they usually last after such a change."
)
LOGPROB_PROMPT = "The weather today is"


def _send(config: EndpointConfig, request: dict, *, parser: parsers.Parser | None = None) -> CallOutcome:
    spec = CallSpec(ident=0, request=request, call_hash="probe-" + uuid.uuid4().hex, parser=parser)
    return asyncio.run(execute_all(config, [spec]))[0]


def _chat(endpoint: Endpoint, config: EndpointConfig, prompt: str, parameter: str) -> CallOutcome:
    request = build_request(
        api_style=CHAT,
        model=endpoint.model,
        defaults={},
        messages=[{"role": "user", "content": prompt}],
        params={parameter: 16},
    )
    return _send(config, request)


def refuses_parameter(outcome: CallOutcome, parameter: str) -> bool:
    """Return whether a reply refused ``parameter`` by name (400 ``unsupported_parameter`` or its message)."""
    if outcome.received or outcome.http_status not in (400, 422):
        return False
    text = outcome.error.lower()
    return parameter in text and ("unsupported" in text or "not supported" in text or "use " in text)


def probe_chat(endpoint: Endpoint, config: EndpointConfig) -> tuple[dict, str, dict]:
    """Probe chat completions and the token parameter; return (chat result, token parameter, usage result)."""
    parameter = endpoint.token_parameter or TokenParameter.MAX_TOKENS
    outcome = _chat(endpoint, config, SHORT_PROMPT, parameter)
    other = (
        TokenParameter.MAX_COMPLETION_TOKENS if parameter == TokenParameter.MAX_TOKENS else TokenParameter.MAX_TOKENS
    )
    if refuses_parameter(outcome, parameter):
        retried = _chat(endpoint, config, SHORT_PROMPT, other)
        if retried.received:
            parameter, outcome = other, retried
    chat = {"ok": outcome.received, "message": outcome.error[:500], "latency_ms": outcome.latency_ms}
    if not outcome.received:
        return chat, parameter, {"ok": None, "message": "not checked: chat completions failed"}
    longer = _chat(endpoint, config, LONG_PROMPT, parameter)
    short_in, long_in = outcome.input_tokens, longer.input_tokens
    usage = {"short_prompt_tokens": short_in, "long_prompt_tokens": long_in}
    if not longer.received:
        usage.update(ok=None, message=f"not checked: the second request failed: {longer.error[:300]}")
    elif short_in <= 0 or long_in <= 0:
        usage.update(ok=False, message="the server reports 0 prompt tokens: costs computed from its usage are wrong")
    elif long_in <= short_in:
        usage.update(
            ok=False,
            message=f"the prompt token count does not grow with the prompt ({short_in} and {long_in}): the server's "
            f"usage looks constant, so costs computed from it are wrong",
        )
    else:
        usage.update(ok=True, message="")
    return chat, parameter, usage


def probe_logprobs(endpoint: Endpoint, config: EndpointConfig) -> dict:
    """Probe legacy completions with ``echo`` and ``logprobs``: prompt log-probabilities with tokens and offsets."""
    request = build_request(api_style=COMPLETIONS, model=endpoint.model, defaults={}, prompt=LOGPROB_PROMPT)
    completions = dataclasses.replace(config, api_style=COMPLETIONS)
    outcome = _send(completions, request, parser=parsers.get("logprobs"))
    if not outcome.received:
        return {"ok": False, "message": f"legacy completions failed: {outcome.error[:400]}"}
    if outcome.parsed is False:
        return {"ok": False, "message": f"no prompt log-probabilities came back: {outcome.error[:400]}"}
    result = outcome.result
    offsets = result.get("text_offset") or []
    if not offsets:
        return {"ok": False, "message": "log-probabilities came back without text offsets for the tokens"}
    if offsets[0] != 0 or any(b < a for a, b in zip(offsets, offsets[1:], strict=False)):
        return {"ok": False, "message": "the tokens' text offsets do not start at 0 or go backwards: not the prompt"}
    if len(result["tokens"]) < 3:
        return {"ok": False, "message": "only the continuation has log-probabilities: the prompt was not echoed"}
    return {"ok": True, "message": "", "tokens": len(result["tokens"])}


def probe_batches(config: EndpointConfig) -> dict:
    """Probe the Files and Batches API by listing both (nothing is created)."""
    client = openai.OpenAI(
        base_url=config.base_url, api_key=config.api_key or "no-key-needed", max_retries=0, timeout=config.timeout
    )
    try:
        client.batches.list(limit=1)
        try:
            client.files.list()
        except openai.APIStatusError as exc:
            # 405: the path is there (uploads work) without a listing, as LLMock has it.
            if exc.status_code != 405:
                raise
    except openai.APIStatusError as exc:
        return {"ok": False, "message": f"HTTP {exc.status_code} from {exc.request.url.path}"}
    except openai.APIError as exc:
        return {"ok": False, "message": f"{type(exc).__name__}: {exc}"[:400]}
    finally:
        client.close()
    return {"ok": True, "message": ""}


def capabilities_probe(endpoint: Endpoint, config: EndpointConfig) -> dict:
    """Return what the endpoint supports: ``chat``, ``logprobs``, ``batch`` and ``usage`` ({ok, message}) and the
    ``token_parameter`` it takes."""
    chat, parameter, usage = probe_chat(endpoint, config)
    return {
        "chat": chat,
        "token_parameter": parameter,
        "usage": usage,
        "logprobs": probe_logprobs(endpoint, config),
        "batch": probe_batches(config),
    }


def run_refusal(endpoint: Endpoint, *, batch: bool, parser: str) -> str:
    """Say why a run cannot work on this endpoint, from its last probe ("" when it can, or when never probed)."""
    capabilities = endpoint.capabilities or {}
    when = endpoint.probed_at.date().isoformat() if endpoint.probed_at else ""
    needs_logprobs = parser == "logprobs" or endpoint.api_style == COMPLETIONS
    if needs_logprobs and capabilities.get("logprobs", {}).get("ok") is False:
        return _(
            "This endpoint does not return prompt log-probabilities (Test connection on %(date)s: %(reason)s), so "
            "log-probability scoring would give chance-level scores. Use letter choice with shuffled options (chat "
            "style, parser mcq_letter), or an endpoint that echoes prompt log-probabilities (vLLM)."
        ) % {"date": when, "reason": capabilities["logprobs"].get("message", "")}
    if batch and capabilities.get("batch", {}).get("ok") is False:
        return _(
            "This endpoint has no Files and Batches API (Test connection on %(date)s: %(reason)s). Send the run as "
            "live calls."
        ) % {"date": when, "reason": capabilities["batch"].get("message", "")}
    return ""
