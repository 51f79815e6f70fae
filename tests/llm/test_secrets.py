"""An API key is read from the environment when sending and appears nowhere else: pages, API, exports, logs, DB."""

import json
import logging

from django.core import serializers
from django.urls import reverse

from llm import services
from llm.models import Endpoint, LLMCall, Run
from tests.factories import mcq_prompts

SECRET = "sk-test-Zq8vN3pLr7TxW2kM9bYc"
LOGGERS = (None, "openai", "httpx", "httpx2", "httpcore", "httpcore2", "llm", "django")


def test_the_api_key_never_leaves_the_environment(client, admin_user, make_endpoint, simulator, monkeypatch, caplog):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    monkeypatch.setenv("EISTUDIO_SECRET_TEST_API_KEY", SECRET)
    good = make_endpoint("sim-mcq-acc90", api_key_env="EISTUDIO_SECRET_TEST_API_KEY")
    refused = make_endpoint(
        "sim-echo", api_key_env="EISTUDIO_SECRET_TEST_API_KEY", base_url=simulator.root + "/unauthorized/v1"
    )
    unreachable = make_endpoint(
        api_key_env="EISTUDIO_SECRET_TEST_API_KEY", base_url="http://127.0.0.1:9/v1", max_retries=0
    )
    calls = [
        services.call_make(endpoint=e, prompt="Item\nA. x\nB. y", parser="mcq_letter").call
        for e in (good, refused, unreachable)
    ]
    assert calls[0].status == LLMCall.Status.SUCCEEDED and calls[1].error_kind == "auth"
    reports = [services.endpoint_test_connection(endpoint=e) for e in (good, refused, unreachable)]
    run = services.run_create(endpoint=good, prompts=mcq_prompts(3), parser="mcq_letter", name="secret", start=False)

    client.force_login(admin_user)
    seen = [repr(reports), caplog.text]
    pages = [
        reverse("llm:endpoint-list"),
        reverse("llm:endpoint-edit", args=[good.pk]),
        reverse("llm:run-list"),
        reverse("llm:run-detail", args=[run.pk]),
        *(reverse("llm:call-detail", args=[c.pk]) for c in calls),
        "/api/llm/endpoints/",
        f"/api/llm/endpoints/{good.pk}/",
        "/api/llm/calls/",
        *(f"/api/llm/calls/{c.pk}/" for c in calls),
        f"/api/llm/runs/{run.pk}/",
        f"/admin/llm/endpoint/{good.pk}/change/",
        f"/admin/llm/llmcall/{calls[0].pk}/change/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        seen.append(response.content.decode())
    export = client.get(reverse("llm:run-export", args=[run.pk]))
    seen.append(b"".join(export.streaming_content).decode())
    seen.append(client.post(f"/api/llm/endpoints/{good.pk}/test/").content.decode())
    seen.append(serializers.serialize("json", [*Endpoint.objects.all(), *LLMCall.objects.all(), *Run.objects.all()]))
    everything = "\n".join(seen)
    assert "EISTUDIO_SECRET_TEST_API_KEY" in everything  # the variable's name is shown, so admins know what to set
    assert SECRET not in everything
    assert SECRET[-10:] not in everything
    assert json.dumps(SECRET) not in everything
