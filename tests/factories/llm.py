"""LLM endpoints made through ``llm.services.endpoint_create``, prompts for LLM runs, and working a run here.

The ``make_endpoint`` fixture (tests/simulator.py) binds endpoints to the test session's simulator.
"""

import asyncio
import threading

from django.db import connection

from llm import runner, services
from llm.models import Endpoint


def make_llm_endpoint(*, base_url: str, model: str = "sim-mcq-acc70", **fields: object) -> Endpoint:
    """Create an endpoint on ``base_url`` with small limits and prices; ``fields`` override any setting."""
    data = {
        "name": f"{model}-{Endpoint.objects.count() + 1}",
        "base_url": base_url,
        "model": model,
        "is_simulator": True,
        "max_concurrency": 8,
        "timeout_seconds": 5,
        "max_retries": 6,
        "price_input_per_mtok": "1",
        "price_output_per_mtok": "2",
        **fields,
    }
    return services.endpoint_create(data=data)


def mcq_prompts(n: int, *, answer: str = "B", prefix: str = "q") -> list[dict]:
    """Return ``n`` distinct multiple-choice prompts with the simulator told the answer key."""
    return [
        {
            "key": f"{prefix}{i}",
            "messages": [{"role": "user", "content": f"Item {prefix}{i}: how does Mia feel?\nA. Joy\nB. Sad\nC. Calm"}],
            "hints": {"answer": answer},
        }
        for i in range(n)
    ]


def work_llm_run(run_id: int) -> None:
    """Work an LLM run to its end in this process; its collector runs when the run's finish commits.

    The runner runs an event loop of its own, so when this thread already runs one (Playwright's sync API does, in
    browser tests) the run is worked in a thread of its own, which closes its database connection afterwards.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner.run_work(run_id=run_id)
        return

    def work() -> None:
        try:
            runner.run_work(run_id=run_id)
        finally:
            connection.close()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
