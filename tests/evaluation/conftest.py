"""A frozen release and a primary judge selected on a real calibration run, shared by the evaluation tests."""

import pytest
from django.conf import settings

from annotation.items import services as item_services
from tests.factories import (
    make_calibration_run,
    make_frozen_release,
    make_item,
    make_judge_selection,
    make_labelled_comparison_set,
    mcq_content,
)

ROOT_FIXTURE = "fixtures/demo_items.jsonl"
REPLIES = {
    "concise": "Failing again stings. Which part of the exam went worse than you expected?",
    "template": "I'm really sorry to hear that. It's completely understandable to feel this way. Remember, you are "
    "not alone.",
    "list": "Here are some steps:\n1. Rest\n2. Review the exam\n3. Ask for help\n4. Try again",
}


def numbered_mcq(n: int) -> dict:
    content = mcq_content()
    content["en"]["context"] = f"Scenario {n}: a friend cancels plans for the {n}th time."
    content["zh"]["context"] = f"情境{n}：朋友第{n}次取消了约定。"
    return content


@pytest.fixture
def frozen_release(transactional_db, taxonomy, lead):
    data = (settings.BASE_DIR / ROOT_FIXTURE).read_bytes()
    item_services.items_import(data=data, user=lead)
    # Forty more simple items, so that accuracy differences between simulated models are not down to luck.
    for n in range(40):
        make_item(uid=f"extra-{n:02d}", user=lead, status="accepted", content=numbered_mcq(n))
    return make_frozen_release(version="0.9.0", title="t", user=lead, override_reason="test sample")


@pytest.fixture
def primary(transactional_db, taxonomy, make_endpoint, make_user, lead, researcher):
    """The primary judge, selected by a researcher on the report of a small calibration run.

    The experts label replies to a draft open prompt, which no release of accepted items pins.
    """
    prompt = make_item(uid="calibration-prompt", kind="open_prompt", dimension="emotion_matching", user=lead)
    comparison_set = make_labelled_comparison_set(
        experts=[make_user("expert", username=f"calibration-x{i}") for i in range(2)],
        responses=[
            {"item": prompt.uid, "language": "en", "model": f"m-{style}", "text": text}
            for style, text in REPLIES.items()
        ],
        name="calibration",
        user=lead,
        languages=("en",),
    )
    run = make_calibration_run(
        comparison_set=comparison_set,
        judges={"judge": make_endpoint("sim-judge-noise2")},
        user=researcher,
        bootstrap=50,
    )
    return make_judge_selection(run=run, user=researcher, reason="test").judge
