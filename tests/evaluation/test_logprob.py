"""Log-probability scoring: every token of the option counts, including the one that holds the separating space.

EiCAP scores an option by the mean log-probability of all of its tokens. The prompt is ``f"{prefix} {option}"``;
BPE tokenizers put that space inside the option's first token (`` Suggest``, `` 开心``), and Chinese text may
come as byte-fallback tokens (``bytes:\\xe5\\xbf``) that split a character across two tokens.
"""

import pytest

from evaluation import prompts
from evaluation.models import Answer, EvaluationRun
from llm.models import RunItem
from llm.parsers import token_bytes
from tests.factories import make_evaluation_run, make_frozen_release, make_item, mcq_content


def scored(tokens: list[str], offsets: list[int], values: list[float | None], prefix: str) -> float | None:
    parsed = {"tokens": tokens, "text_offset": offsets, "token_logprobs": values}
    return prompts.continuation_score(parsed, prompts.option_start(prefix))[0]


def test_the_english_option_token_that_holds_the_space_is_scored():
    prefix = "Sarah's brother is bullied.\nAnswer:"
    assert prompts.logprob_prompt(prefix, "Suggest a counsellor") == prefix + " Suggest a counsellor"
    tokens = [
        "Sarah",
        "'s",
        " brother",
        " is",
        " bull",
        "ied",
        ".",
        "\n",
        "Answer",
        ":",
        " Suggest",
        " a",
        " counsell",
        "or",
    ]
    offsets = [0, 5, 7, 15, 18, 23, 26, 27, 28, 34, 35, 43, 45, 54]
    values = [None, -1.0, -2.0, -1.0, -3.0, -0.5, -0.2, -0.1, -1.0, -0.3, -4.0, -1.0, -2.0, -1.0]
    assert "".join(tokens) == prefix + " Suggest a counsellor"
    assert offsets == [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    assert scored(tokens, offsets, values, prefix) == pytest.approx((-4.0 - 1.0 - 2.0 - 1.0) / 4)


def test_a_space_token_of_its_own_is_the_separator_not_the_option():
    prefix = "Answer:"
    tokens, offsets, values = ["Answer", ":", " ", "happy"], [0, 6, 7, 8], [None, -1.0, -5.0, -2.0]
    assert scored(tokens, offsets, values, prefix) == -2.0


def test_chinese_multi_character_tokens_straddling_the_boundary_belong_to_the_option():
    prefix = "米娅最可能有什么感受？\n答案："
    # "答案： 失望透顶": " 失望" holds the space and two characters; "透顶" two more.
    tokens = ["米", "娅", "最", "可能", "有", "什么", "感受", "？", "\n", "答案", "：", " 失望", "透顶"]
    offsets = [0, 1, 2, 3, 5, 6, 8, 10, 11, 12, 14, 15, 18]
    values = [None, -3.0, -1.0, -1.0, -1.0, -1.0, -1.0, -0.5, -0.1, -1.0, -0.2, -2.5, -0.5]
    assert "".join(tokens) == prefix + " 失望透顶"
    assert scored(tokens, offsets, values, prefix) == pytest.approx((-2.5 - 0.5) / 2)


def test_chinese_byte_fallback_tokens_are_placed_by_the_characters_they_complete():
    # 忐 = e5 bf 90, 忑 = e5 bf 91, 忐忑 in the prefix as well. Partial tokens share the offset of the token that
    # completes their character; " \xe5\xbf" holds the space and the first bytes of the option's 忐, so although
    # it ends on the boundary it belongs to the option.
    prefix = "忐忑？答案："
    tokens = [
        "bytes:\\xe5\\xbf", "bytes:\\x90", "bytes:\\xe5\\xbf", "bytes:\\x91", "？", "答案", "：",
        "bytes: \\xe5\\xbf", "bytes:\\x90", "bytes:\\xe5\\xbf", "bytes:\\x91",
    ]  # fmt: skip
    offsets = [0, 0, 1, 1, 2, 3, 5, 6, 7, 8, 8]
    values = [None, -9.0, -9.0, -9.0, -1.0, -1.0, -1.0, -3.0, -0.5, -2.0, -0.5]
    assert b"".join(token_bytes(t) for t in tokens).decode() == prefix + " 忐忑"
    assert scored(tokens, offsets, values, prefix) == pytest.approx((-3.0 - 0.5 - 2.0 - 0.5) / 4)


def test_offsets_that_do_not_line_up_with_the_tokens_score_nothing():
    assert scored(["a", " b"], [0], [None, -1.0], "a") is None
    assert scored([], [], [], "a") is None


@pytest.fixture
def logprob_release(transactional_db, taxonomy, lead):
    make_item(uid="logprob-1", user=lead, status="accepted", content=mcq_content())
    return make_frozen_release(version="0.2.0", title="logprob", user=lead, override_reason="one item")


def test_a_logprob_run_on_the_simulator_scores_every_token_of_each_option(logprob_release, make_endpoint, researcher):
    endpoint = make_endpoint("sim-base", api_style="completions")
    run = make_evaluation_run(
        name="logprob",
        release=logprob_release,
        endpoints=[endpoint],
        languages=("en", "zh"),
        user=researcher,
        protocol=EvaluationRun.Protocol.LOGPROB,
        judge_override_reason="objective items only",
    )
    assert run.phase == EvaluationRun.Phase.DONE
    content = mcq_content()
    answers = {answer.language: answer for answer in Answer.objects.filter(run=run)}
    assert set(answers) == {"en", "zh"}
    for item in RunItem.objects.filter(run__purpose="evaluation", ref__kind="logprob"):
        language, option = item.ref["language"], item.ref["option"]
        version = content[language]
        prefix = prompts.logprob_prefix(kind="mcq", version=version, language=language, turn=0)
        tokens, values = item.result["tokens"], item.result["token_logprobs"]
        first = item.result["text_offset"].index(len(prefix))
        assert b"".join(token_bytes(t) for t in tokens[first:]).decode() == " " + version["options"][option]
        expected = sum(values[first:]) / len(values[first:])
        assert answers[language].scores[str(option)]["mean"] == pytest.approx(expected)
