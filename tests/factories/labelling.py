"""Comparison sets labelled by experts, made through the labelling services."""

import json
from collections.abc import Callable, Mapping

import numpy as np
from django.contrib.auth.models import AbstractBaseUser

from annotation.items.models import Benchmark
from annotation.labelling import services
from annotation.labelling.models import ComparisonSet, LabelAssignment
from annotation.labelling.pairwise import shown_choice
from llm.simulator.simulation import quality_score

# Return an expert's verdict on an assignment as a canonical score (-5..5: positive when response A is better).
LabelRule = Callable[[LabelAssignment], int]


def prefer_by_quality(*, noise: float | Mapping[str, float] = 4.0, tie_below: float = 3.0, seed: int = 0) -> LabelRule:
    """Return the rule of experts who prefer the reply of higher hidden quality, with normal noise.

    ``noise`` is the standard deviation, for every expert or per username; a difference under ``tie_below`` is a
    tie, and every ten points more adds a step of margin. The noise is drawn from ``seed``, in assignment order.
    """
    rng = np.random.default_rng(seed)

    def score(assignment: LabelAssignment) -> int:
        c = assignment.comparison
        sd = noise[assignment.expert.get_username()] if isinstance(noise, Mapping) else noise
        diff = quality_score(c.response_a.text) - quality_score(c.response_b.text) + rng.normal(0, sd)
        return 0 if abs(diff) < tie_below else int(np.sign(diff)) * min(5, 1 + int(abs(diff) // 10))

    return score


def make_labelled_comparison_set(
    *,
    experts: list[AbstractBaseUser],
    responses: list[dict] | None = None,
    name: str = "labelled",
    benchmark: str = "facet",
    user: AbstractBaseUser | None = None,
    rule: LabelRule | None = None,
    **options: object,
) -> ComparisonSet:
    """Import ``responses``, build a comparison set for ``experts`` and have each label what is assigned to them.

    ``responses`` are JSONL rows ``{"item", "language", "model", "text"}`` (None: use the responses already
    stored); ``options`` (seed, languages, per_stratum, ...) go to ``comparison_set_build``. Every assignment is
    labelled, in assignment order, with the verdict ``rule`` gives (``prefer_by_quality()`` by default).
    """
    if responses:
        data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in responses).encode()
        services.responses_import(data=data, user=user)
    comparison_set = services.comparison_set_build(
        name=name, benchmark=Benchmark.objects.get(slug=benchmark), experts=experts, user=user, **options
    )
    rule = rule or prefer_by_quality()
    assignments = (
        LabelAssignment.objects.filter(comparison__comparison_set=comparison_set)
        .select_related("comparison__response_a", "comparison__response_b", "expert")
        .order_by("id")
    )
    for assignment in assignments:
        winner, margin = shown_choice(shown_order=assignment.shown_order, score=rule(assignment))
        services.label_submit(
            comparison=assignment.comparison, expert=assignment.expert, winner=winner, margin=margin or None
        )
    return comparison_set
