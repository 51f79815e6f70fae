"""The default screening criteria of the FACET pipeline (editable in the admin afterwards)."""

from django.db import models

# code, English name, Chinese name, English description, Chinese description, scale, objective items only
DEFAULT_CRITERIA = [
    (
        "scenario_plausibility",
        "Scenario plausibility",
        "情境合理性",
        "The situation could happen to real people and reads as ecologically valid.",
        "情境可能真实发生，具有生态效度。",
        "score",
        False,
    ),
    (
        "linguistic_clarity",
        "Linguistic clarity",
        "语言清晰度",
        "The wording is clear, natural and unambiguous in both languages.",
        "两种语言的表述清楚、自然、无歧义。",
        "score",
        False,
    ),
    (
        "emotional_ambiguity",
        "Emotional ambiguity",
        "情绪模糊度",
        "The emotional content is subtle enough to test the dimension, yet has one defensible reading.",
        "情绪内容足够细腻以考察该维度，同时只有一种站得住的解读。",
        "score",
        False,
    ),
    (
        "difficulty_level",
        "Difficulty level",
        "难度水平",
        "The item is neither trivial nor unanswerable, and its difficulty label fits.",
        "题目既不过于简单也非无法作答，难度标注恰当。",
        "score",
        False,
    ),
    (
        "coverage",
        "Coverage of emotion and scenario types",
        "情绪与情境类型覆盖",
        "The item adds to the coverage of emotions and scenarios rather than repeating well-covered ones.",
        "题目扩展了情绪和情境的覆盖面，而非重复已充分覆盖的类型。",
        "score",
        False,
    ),
    (
        "option_quality",
        "Option quality",
        "选项质量",
        "Distractors are plausible, mutually exclusive and similar in length and style to the key.",
        "干扰项合理、互斥，长度和风格与正确答案相近。",
        "score",
        True,
    ),
    (
        "answer_key_correctness",
        "Correctness of the answer key",
        "答案正确性",
        "The keyed answer is correct in both languages and points to the same option.",
        "两种语言的标准答案均正确，并指向同一选项。",
        "pass_fail",
        True,
    ),
]


def default_criteria_create(criterion_model: type[models.Model]) -> int:
    """Create or refresh the default criteria with ``criterion_model`` (the real or a migration's historical model).

    Return how many criteria were written.
    """
    for position, (code, en, zh, den, dzh, scale, objective) in enumerate(DEFAULT_CRITERIA, start=1):
        criterion_model.objects.update_or_create(
            code=code,
            dimension=None,
            defaults={
                "name_en": en,
                "name_zh": zh,
                "description_en": den,
                "description_zh": dzh,
                "scale": scale,
                "objective_only": objective,
                "position": position,
            },
        )
    return len(DEFAULT_CRITERIA)
