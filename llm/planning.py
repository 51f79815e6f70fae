"""Planning a run: check its prompts, group identical requests, cut the groups into chunks, estimate the cost.

The steps of ``llm.services.run_create``; nothing here touches the database.
"""

import hashlib
from collections.abc import Iterable
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.canonical import canonical_json
from llm.calls import RequestError, build_request, request_hash, rough_request_cost
from llm.models import Endpoint

# A run refused for its prompts names at most this many of them.
MAX_PROMPT_ERRORS = 20


class PromptProblem(Exception):
    """One prompt of a run cannot be sent; the message names it."""


def ref_key(ref: dict) -> str:
    """Return the run-unique key of a prompt given by reference: its canonical JSON, or a digest when long."""
    text = canonical_json(ref)
    return text if len(text) <= 200 else "ref-" + hashlib.sha256(text.encode()).hexdigest()


def prompt_key(prompt: object, position: int) -> tuple[dict, str]:
    """Return a prompt's reference and key; raise PromptProblem when it is not an object or has no usable key."""
    if not isinstance(prompt, dict):
        raise PromptProblem(_("Prompt %(n)s: not an object.") % {"n": position})
    ref = prompt.get("ref") or {}
    if not isinstance(ref, dict):
        raise PromptProblem(_("Prompt %(n)s: the reference must be an object.") % {"n": position})
    key = str(prompt.get("key") or (ref_key(ref) if ref else "")).strip()
    if not key or len(key) > 200:
        raise PromptProblem(_("Prompt %(n)s: needs a key of 1 to 200 characters (or a reference).") % {"n": position})
    return ref, key


def prompt_row(
    *, endpoint: Endpoint, prompt: dict, ref: dict, key: str, position: int, defaults: dict, nonce: str
) -> dict:
    """Return the item row of a prompt (its request and request hash); raise PromptProblem for a bad request.

    ``nonce`` (empty unless the run is fresh) makes the hash differ from every earlier identical request.
    """
    try:
        request = build_request(
            api_style=endpoint.api_style,
            model=endpoint.model,
            defaults=defaults,
            messages=prompt.get("messages"),
            prompt=prompt.get("prompt"),
            params=prompt.get("params"),
        )
    except RequestError as exc:
        raise PromptProblem(_("Prompt %(n)s (%(key)s): %(error)s") % {"n": position, "key": key, "error": exc}) from exc
    hints = prompt.get("hints") or {}
    if not isinstance(hints, dict):
        raise PromptProblem(_("Prompt %(n)s (%(key)s): hints must be an object.") % {"n": position, "key": key})
    digest = request_hash(request, fresh_nonce=nonce)
    return {"key": key, "ref": ref, "position": position, "request": request, "request_hash": digest, "hints": hints}


def prompts_group(*, endpoint: Endpoint, prompts: Iterable[dict], nonce_prefix: str | None) -> dict[str, list[dict]]:
    """Check every prompt and return their item rows grouped by request hash, in the order given.

    All or nothing: raise ValidationError naming the prompts at fault (at most ``MAX_PROMPT_ERRORS``), when there
    are more than ``LLM_RUN_MAX_PROMPTS`` or when there are none. ``nonce_prefix`` (for a fresh run) keeps every
    request apart from earlier identical ones.
    """
    defaults = endpoint.default_params()
    errors: list[str] = []
    groups: dict[str, list[dict]] = {}
    keys: set[str] = set()
    count = 0
    for position, prompt in enumerate(prompts, start=1):
        count = position
        if count > settings.LLM_RUN_MAX_PROMPTS:
            raise ValidationError(_("A run holds at most %(n)s prompts.") % {"n": settings.LLM_RUN_MAX_PROMPTS})
        try:
            ref, key = prompt_key(prompt, position)
            if key in keys:
                raise PromptProblem(_("Prompt %(n)s: the key %(key)s is used twice.") % {"n": position, "key": key})
            keys.add(key)
            nonce = f"{nonce_prefix}:{key}" if nonce_prefix is not None else ""
            row = prompt_row(
                endpoint=endpoint, prompt=prompt, ref=ref, key=key, position=position, defaults=defaults, nonce=nonce
            )
        except PromptProblem as problem:
            errors.append(str(problem))
            continue
        groups.setdefault(row["request_hash"], []).append(row)
        if len(errors) >= MAX_PROMPT_ERRORS:
            break
    if errors:
        raise ValidationError(errors)
    if not count:
        raise ValidationError(_("The run has no prompts."))
    return groups


def chunks_cut(groups: Iterable[list[dict]], chunk_size: int) -> list[list[dict]]:
    """Cut the groups of rows into chunks of about ``chunk_size`` rows, never splitting a group.

    Identical requests share a call, so they go in the same chunk: no two workers ever send the same request.
    """
    chunk_rows: list[list[dict]] = [[]]
    for group in groups:
        if chunk_rows[-1] and len(chunk_rows[-1]) + len(group) > chunk_size:
            chunk_rows.append([])
        chunk_rows[-1].extend(group)
    return chunk_rows


def cost_estimates(*, endpoint: Endpoint, groups: Iterable[list[dict]]) -> tuple[Decimal, Decimal]:
    """Return the rough cost of sending one request per group, at the endpoint's live and at its batch prices."""
    requests = [group[0]["request"] for group in groups]
    estimates = []
    for batch in (False, True):
        price_input, price_output = endpoint.prices(batch=batch)
        costs = (rough_request_cost(r, price_input=price_input, price_output=price_output) for r in requests)
        estimates.append(sum(costs, Decimal("0")))
    return estimates[0], estimates[1]
