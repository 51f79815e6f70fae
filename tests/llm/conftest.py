"""A run, a call and an endpoint on the simulator, for the llm permission tests."""

import pytest

from llm import services
from tests.factories import mcq_prompts


@pytest.fixture
def objects(make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo")
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="text", name="p", start=False)
    call = services.call_make(endpoint=endpoint, prompt="hi").call
    return {"endpoint": endpoint.pk, "run": run.pk, "call": call.pk}
