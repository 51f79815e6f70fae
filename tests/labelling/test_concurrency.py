"""Simultaneous submissions of one label: one label is stored; a resubmitted identical verdict is answered as saved,
a different one is a conflict (409); nothing fails (500).

Real threads with their own database connections, on SQLite and on PostgreSQL (``DATABASE_URL``).
"""

import json
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
from annotation.labelling.pairwise import canonical_score
from tests.concurrency import run_together, wait_until_blocked

pytestmark = pytest.mark.django_db(transaction=True)

# Ten different verdicts: each side with each margin.
VERDICTS = [(winner, margin) for winner in ("left", "right") for margin in range(1, 6)]


@pytest.fixture
def assignment(prompts, make_user) -> LabelAssignment:
    expert = make_user("expert", username="e0")
    cs = comparisons.comparison_set_build(
        name="busy", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=None
    )
    return LabelAssignment.objects.filter(comparison__comparison_set=cs).select_related("comparison", "expert").first()


def page_posts(assignment: LabelAssignment, forms: list[dict]) -> list:
    url = f"/labelling/{assignment.comparison.comparison_set_id}/{assignment.pk}/"
    calls = []
    for form in forms:
        client = Client()
        client.force_login(assignment.expert)
        calls.append(lambda client=client, form=form: client.post(url, form))
    return run_together(calls)


def outcome(result: object) -> int | str:
    return result.status_code if hasattr(result, "status_code") else f"500 {result!r}"


def test_simultaneous_different_verdicts_store_one_label_and_the_rest_are_conflicts(assignment):
    forms = [{"winner": winner, "margin": str(margin)} for winner, margin in VERDICTS]

    responses = page_posts(assignment, forms)

    statuses = [outcome(r) for r in responses]
    assert sorted(statuses, key=str) == [302] + [409] * 9, statuses
    assert all("You already labelled this comparison." in r.content.decode() for r in responses if r.status_code == 409)
    label = ExpertLabel.objects.get(assignment=assignment)
    winner, margin = VERDICTS[statuses.index(302)]
    assert label.score == canonical_score(shown_order=assignment.shown_order, winner=winner, margin=margin)


def test_simultaneous_identical_verdicts_store_one_label_and_each_is_answered_as_saved(assignment):
    responses = page_posts(assignment, [{"winner": "left", "margin": "3", "rationale": "warmer"}] * 10)

    assert [outcome(r) for r in responses] == [302] * 10
    label = ExpertLabel.objects.get(assignment=assignment)
    assert label.score == canonical_score(shown_order=assignment.shown_order, winner="left", margin=3)
    assert label.rationale == "warmer"


def test_a_submission_waiting_on_another_is_a_conflict_not_a_database_error(assignment):
    results: list[object] = []

    def waiting_submit() -> None:
        try:
            results.append(
                comparisons.label_submit(
                    comparison=assignment.comparison, expert=assignment.expert, winner="right", margin=2
                )
            )
        except Exception as exc:  # the assertion below names it
            results.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        comparisons.label_submit(comparison=assignment.comparison, expert=assignment.expert, winner="left", margin=1)
        waiter = threading.Thread(target=waiting_submit)
        waiter.start()
        wait_until_blocked()
    waiter.join(30)

    assert len(results) == 1
    assert isinstance(results[0], comparisons.LabelConflict), results
    assert ExpertLabel.objects.filter(assignment=assignment).count() == 1


def test_simultaneous_imports_of_one_response_file_store_each_response_once_and_never_fail(prompts, admin_user):
    rows = [
        {"item": "op-0", "language": lang, "model": f"m-new-{n}", "text": f"answer {n} in {lang}"}
        for n in range(5)
        for lang in ("en", "zh")
    ]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    calls = []
    for _ in range(4):
        client = Client()
        client.force_login(admin_user)
        calls.append(
            lambda client=client: client.post(
                "/labelling/responses/import/", {"file": SimpleUploadedFile("responses.jsonl", data)}
            )
        )

    results = run_together(calls)

    assert [outcome(r) for r in results] == [200] * 4
    assert ModelResponse.objects.filter(model_name__startswith="m-new-").count() == 10


def test_simultaneous_builds_of_one_comparison_set_name_make_one_set_and_form_errors(prompts, admin_user, make_user):
    expert = make_user("expert", username="e0")
    form = {"name": "twice", "benchmark": Benchmark.objects.get(slug="facet").pk, "experts": [expert.pk], "seed": 0}
    calls = []
    for _ in range(4):
        client = Client()
        client.force_login(admin_user)
        calls.append(lambda client=client: client.post("/labelling/new/", form))

    results = run_together(calls)

    statuses = [outcome(r) for r in results]
    assert sorted(statuses, key=str) == [302, 400, 400, 400], statuses
    assert all("already exists." in r.content.decode() for r in results if r.status_code == 400)
    assert ComparisonSet.objects.filter(name="twice").count() == 1
