"""A comparison set of four reply styles labelled by three experts, shared by the calibration tests."""

import pytest

from tests.factories import make_item, make_labelled_comparison_set, prefer_by_quality

REPLIES = {
    "concise": "Losing him after fourteen years leaves a real hole. What do you miss most in the evenings now?",
    "template": "I'm really sorry to hear that. It's completely understandable to feel this way. Remember, you are "
    "not alone. It's important to take care of yourself.",
    "list": "Here are some steps:\n1. Rest\n2. Talk to friends\n3. Exercise\n4. Eat well\n5. Consider therapy",
    "mixed": "That sounds hard. It's important to rest. Maybe call a friend tonight and tell them about him?",
}


@pytest.fixture
def labelled_set(taxonomy, lead, make_user):
    """Four open prompts x four reply styles, labelled by three experts who prefer by the hidden quality."""
    experts = [make_user("expert", username=f"x{i}") for i in range(3)]
    rows = []
    for n in range(4):
        item = make_item(uid=f"cal-{n}", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
        for style, text in REPLIES.items():
            rows.append({"item": item.uid, "language": "en", "model": f"m-{style}", "text": f"{text} ({n})"})
    return make_labelled_comparison_set(
        experts=experts,
        responses=rows,
        name="cal",
        user=lead,
        languages=("en",),
        seed=3,
        rule=prefer_by_quality(noise=4.0, tie_below=3.0, seed=0),
    )
