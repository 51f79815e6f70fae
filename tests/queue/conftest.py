"""One worker's queue in a screening round and in a comparison set, driven through each app's own services.

``work`` is parametrised over both, so that every test in ``tests/queue`` runs once against screening's review
queue and once against labelling's label queue, and checks the behaviour ``annotation.queue`` gives them both.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Model, QuerySet

from annotation.items.models import Benchmark
from annotation.labelling import services as labelling
from annotation.labelling.models import LabelAssignment
from annotation.queue.models import Assignment, Progress
from annotation.queue.selectors import queue_of
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, ReviewAssignment
from tests.factories import REVIEW_SCORES, make_item, make_screening_round, mcq_content


@dataclass
class Work:
    """A worker's queue in one round or set, with the app's services for what the queue's functions serve."""

    owner: Model
    worker: AbstractBaseUser
    model: type[Assignment]
    # From an assignment through its work to the round or set, the way the services reach it.
    owner_path: str
    finish: Callable[[Assignment], object]
    change: Callable[[Assignment], object]
    skip: Callable[[Assignment], object]
    close: Callable[[], object]
    recount: Callable[[], list[Progress]]

    def queue(self) -> QuerySet:
        return queue_of(model=self.model, owner=self.owner, worker=self.worker)

    def progress(self) -> Progress:
        return self.model.progress.objects.get(**{self.model.OWNER: self.owner, self.model.WORKER: self.worker})

    def counts(self) -> tuple[int, int, int]:
        """Return the worker's stored (assigned, finished, put aside) counts."""
        progress = self.progress()
        return progress.assigned, getattr(progress, self.model.DONE), progress.skipped


def screening_work(lead: AbstractBaseUser, reviewer: AbstractBaseUser) -> Work:
    default_criteria_create(Criterion)
    for i in range(4):
        make_item(uid=f"queue-{i}", content=mcq_content(), user=lead)
    round = make_screening_round(user=lead, reviewers=[reviewer], reviewers_per_item=1)

    def review(assignment: ReviewAssignment, service: Callable, decision: str) -> object:
        return service(
            round_item=assignment.round_item,
            reviewer=reviewer,
            scores=REVIEW_SCORES,
            decision=decision,
            comment="Reason.",
        )

    return Work(
        owner=round,
        worker=reviewer,
        model=ReviewAssignment,
        owner_path="round_item__round",
        finish=lambda a: review(a, screening.review_submit, "accept"),
        change=lambda a: review(a, screening.review_change, "reject"),
        skip=lambda a: screening.review_skip(round_item=a.round_item, reviewer=reviewer),
        close=lambda: screening.round_close(round=round, user=lead, unreviewed="decide_on_submitted"),
        recount=lambda: screening.round_recount(round=round),
    )


def labelling_work(lead: AbstractBaseUser, expert: AbstractBaseUser) -> Work:
    item = make_item(uid="queue-op", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [
        {"item": item.uid, "language": lang, "model": model, "text": f"{model} answers in {lang}."}
        for lang in ("en", "zh")
        for model in ("m-alpha", "m-beta")
    ]
    labelling.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    # A second prompt makes four comparisons: two per language.
    other = make_item(uid="queue-op2", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [{**row, "item": other.uid} for row in rows]
    labelling.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    cs = labelling.comparison_set_build(
        name="queue", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=None
    )

    def label(assignment: LabelAssignment, service: Callable, winner: str) -> object:
        return service(comparison=assignment.comparison, expert=expert, winner=winner, margin=None)

    return Work(
        owner=cs,
        worker=expert,
        model=LabelAssignment,
        owner_path="comparison__comparison_set",
        finish=lambda a: label(a, labelling.label_submit, "tie"),
        change=lambda a: labelling.label_change(comparison=a.comparison, expert=expert, winner="left", margin=2),
        skip=lambda a: labelling.label_skip(comparison=a.comparison, expert=expert),
        close=lambda: labelling.comparison_set_close(comparison_set=cs, user=lead),
        recount=lambda: labelling.comparison_set_recount(comparison_set=cs),
    )


@pytest.fixture(params=["screening", "labelling"])
def work(request, taxonomy, lead, make_user) -> Work:
    worker = make_user("expert", username="queue-worker")
    build = screening_work if request.param == "screening" else labelling_work
    return build(lead, worker)
