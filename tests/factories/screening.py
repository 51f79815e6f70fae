"""Screening rounds and reviews made through the screening services."""

from django.contrib.auth.models import AbstractBaseUser

from annotation.items.models import Benchmark
from annotation.screening import services
from annotation.screening.models import Review, RoundItem, ScreeningRound

# A score for each default criterion: what a reviewer who finds nothing wrong submits.
REVIEW_SCORES = {
    "scenario_plausibility": 4,
    "linguistic_clarity": 5,
    "emotional_ambiguity": 3,
    "difficulty_level": 3,
    "coverage": 4,
    "option_quality": 4,
    "answer_key_correctness": "pass",
}


def make_screening_round(
    *,
    user: AbstractBaseUser,
    reviewers: list[AbstractBaseUser],
    reviewers_per_item: int = 2,
    benchmark: str = "facet",
    title: str = "Round A",
    **options: object,
) -> ScreeningRound:
    """Open a round on the benchmark's draft and in-screening items (``options`` go to ``round_open``)."""
    return services.round_open(
        benchmark=Benchmark.objects.get(slug=benchmark),
        title=title,
        user=user,
        reviewers=reviewers,
        reviewers_per_item=reviewers_per_item,
        **options,
    )


def make_review(
    *,
    round: ScreeningRound,
    uid: str,
    reviewer: AbstractBaseUser,
    decision: str,
    comment: str = "because",
    scores: dict | None = None,
) -> Review:
    """Submit ``reviewer``'s review of item ``uid`` in ``round``."""
    round_item = RoundItem.objects.get(round=round, item__uid=uid)
    return services.review_submit(
        round_item=round_item,
        reviewer=reviewer,
        scores=REVIEW_SCORES if scores is None else scores,
        decision=decision,
        comment=comment,
    )
