"""What the simulator answers: deterministic roles, hidden quality, judges with noise and bias. No server here."""

import json

import pytest

from llm import parsers
from llm.simulator import simulation


def ask(model: str, text: str, *, seed: int = 0, answer: str = "") -> str:
    return simulation.chat_reply(model, [{"role": "user", "content": text}], seed=seed, hints={"answer": answer})


def mcq(i: int) -> str:
    return f"Scenario {i}: Mia's friend forgot her birthday.\nA. Joy\nB. Disappointment\nC. Fear\nD. Pride"


def pair_prompt(first: str, second: str) -> str:
    return (
        "Which reply is more emotionally intelligent?\n"
        f"[The Start of Assistant A's Answer]\n{first}\n[The End of Assistant A's Answer]\n"
        f"[The Start of Assistant B's Answer]\n{second}\n[The End of Assistant B's Answer]"
    )


def test_tokens_join_back_into_the_text():
    text = "Hello, world!  我今天很难过。 123456 end  "
    assert "".join(simulation.tokenize(text)) == text
    assert simulation.count_tokens("我很难过") == 4


def test_model_names_choose_roles():
    assert simulation.role_for("gpt-4o") is None
    assert simulation.role_for("sim-mcq-acc85").accuracy == 0.85
    judge = simulation.role_for("sim-judge-noise25-biasm10-tie5")
    assert (judge.kind, judge.noise, judge.bias, judge.tie) == ("judge", 25.0, -10.0, 5.0)
    assert simulation.role_for("sim-style-list").style == "list"


def test_replies_are_deterministic_per_seed_model_and_request():
    assert ask("sim-style-concise", "I failed my exam again.") == ask("sim-style-concise", "I failed my exam again.")
    replies = {ask("sim-mcq-acc50", mcq(1), seed=seed, answer="B") for seed in range(20)}
    assert len(replies) > 1


@pytest.mark.parametrize(("model", "low", "high"), [("sim-mcq-acc90", 0.84, 0.96), ("sim-mcq-acc40", 0.32, 0.48)])
def test_mcq_models_answer_with_their_configured_accuracy(model, low, high):
    parse = parsers.get("mcq_letter")
    correct = sum(parse(ask(model, mcq(i), answer="B"), {})["letter"] == "B" for i in range(600))
    assert low <= correct / 600 <= high


def test_chinese_prompts_get_chinese_replies():
    assert ask("sim-mcq-acc90", "米娅感到？\nA. 喜悦\nB. 失望", answer="B").startswith("答案")
    assert simulation.is_chinese(ask("sim-style-template", "我又考砸了，心里很难受。"))


def test_styles_differ_and_the_hidden_quality_prefers_concise_specific_replies():
    prompt = "I failed my driving test for the third time and my dad laughed."
    template, listing, concise = (ask(f"sim-style-{s}", prompt) for s in ("template", "list", "concise"))
    assert len({template, listing, concise}) == 3
    assert listing.count("\n- ") >= 4
    assert simulation.quality_score(concise) > simulation.quality_score(listing) > simulation.quality_score(template)


def judge_share_preferring_concise(model: str, *, concise_first: bool, n: int = 200) -> float:
    parse = parsers.get("judge_verdict")
    wins = 0
    for i in range(n):
        prompt = f"My cat died yesterday, number {i}."
        good, bad = ask("sim-style-concise", prompt), ask("sim-style-template", prompt)
        first, second = (good, bad) if concise_first else (bad, good)
        verdict = parse(ask(model, pair_prompt(first, second)), {})
        wins += verdict["winner"] == ("A" if concise_first else "B")
    return wins / n


def test_judges_prefer_quality_with_their_noise_and_position_bias():
    accurate = judge_share_preferring_concise("sim-judge-noise5", concise_first=False)
    noisy = judge_share_preferring_concise("sim-judge-noise60", concise_first=False)
    biased_against = judge_share_preferring_concise("sim-judge-noise5-bias60", concise_first=False)
    assert accurate > 0.95
    assert 0.5 < noisy < accurate
    assert biased_against < 0.5


def test_judge_replies_reason_then_give_a_parseable_verdict():
    reply = ask("sim-judge", pair_prompt("I'm sorry to hear that. I hope this helps!", "What happened at the test?"))
    assert reply.startswith("Reasoning:")
    assert parsers.get("judge_verdict")(reply, {})["winner"] in {"A", "B", "tie"}
    assert "could not find" in ask("sim-judge", "no pair here")


def test_the_drafter_returns_the_requested_number_of_items_in_the_requested_shape():
    items = json.loads(ask("sim-drafter", "Write 4 candidate items as JSON."))["items"]
    assert len(items) == 4
    for item in items:
        assert set(item) == {"context", "question", "options", "answer"}
        assert 0 <= item["answer"] < len(item["options"])
    bilingual = json.loads(ask("sim-drafter", 'Write 2 open_prompt items with "en" and "zh" versions.'))["items"]
    assert all(set(item) == {"en", "zh"} and "prompt" in item["zh"] for item in bilingual)


def test_legacy_completions_echo_the_prompt_with_per_token_log_probabilities():
    reply = simulation.completion_reply("sim-x", "She felt relieved.", seed=0, max_tokens=0, echo=True, logprobs=1)
    tokens, values = reply["logprobs"]["tokens"], reply["logprobs"]["token_logprobs"]
    assert "".join(tokens) == "She felt relieved." == reply["text"]
    assert values[0] is None and all(-6 <= v < 0 for v in values[1:])
    assert reply == simulation.completion_reply(
        "sim-x", "She felt relieved.", seed=0, max_tokens=0, echo=True, logprobs=1
    )
