"""Per-expert views for a set's builder (progress, time per label, agreement with the others, attention checks),
on the set's data page and in the API; attention checks are set by the builder and never shown to experts."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.items.models import Benchmark
from annotation.labelling import attention
from annotation.labelling import services as comparisons
from annotation.labelling.experts import expert_statistics
from annotation.labelling.models import Comparison, LabelAssignment
from annotation.labelling.pairwise import shown_choice


def label(comparison: Comparison, expert, score: int, seconds: int) -> None:
    """Label in canonical terms (+ A better, - B, 0 tie), as if the comparison had been open ``seconds``."""
    assignment = LabelAssignment.objects.get(comparison=comparison, expert=expert)
    LabelAssignment.objects.filter(pk=assignment.pk).update(first_viewed_at=timezone.now() - timedelta(seconds=seconds))
    winner, margin = shown_choice(shown_order=assignment.shown_order, score=score)
    comparisons.label_submit(comparison=comparison, expert=expert, winner=winner, margin=margin or None)


@pytest.fixture
def labelled(prompts, make_user, researcher):
    experts = [make_user("expert", username=f"x{i}") for i in range(3)]
    cs = comparisons.comparison_set_build(
        name="per expert", benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=researcher
    )
    first, second, third = list(cs.comparisons.order_by("id"))[:3]
    # x0 and x1 agree on both; x2 disagrees on the first and leaves the second to do.
    for comparison, scores in ((first, (2, 1, -1)), (second, (-3, -1, None))):
        for expert, score, seconds in zip(experts, scores, (30, 50, 90), strict=True):
            if score is not None:
                label(comparison, expert, score, seconds)
    label(third, experts[0], 0, 40)
    return cs, experts, (first, second, third)


def test_each_expert_has_progress_time_per_label_agreement_and_check_accuracy(labelled):
    cs, experts, (first, second, third) = labelled
    attention.attention_checks_set(comparison_set=cs, answers={first.pk: "A", third.pk: "B"}, user=None)
    rows = {row.username: row for row in expert_statistics(comparison_set=cs)}
    x0, x1, x2 = rows["x0"], rows["x1"], rows["x2"]
    assert (x0.labelled, x1.labelled, x2.labelled) == (3, 2, 1)
    assert x0.assigned == x1.assigned == x2.assigned == cs.size
    assert x1.median_seconds == 50 and x0.median_seconds == 30
    # x0: first with x1 (agree) and x2 (not), second with x1 (agree): 2 of 3.
    assert (x0.agreeing_pairs, x0.shared_pairs) == (2, 3)
    assert (x2.agreeing_pairs, x2.shared_pairs, x2.agreement) == (0, 2, 0.0)
    # Checks: first (A) right for x0 and x1, wrong for x2; third (B) wrong for x0 (a tie).
    assert (x0.checks_correct, x0.checks_answered) == (1, 2)
    assert (x1.checks_correct, x1.checks_answered, x1.check_accuracy) == (1, 1, 1.0)
    assert (x2.checks_correct, x2.checks_answered) == (0, 1)


def test_the_builder_sets_checks_on_the_data_page_and_sees_each_expert(
    labelled, researcher, login, django_assert_max_num_queries
):
    cs, experts, (first, _second, _third) = labelled
    client = login(researcher)
    answer = client.post(f"/labelling/{cs.pk}/data/", {"attention_checks": f"{first.pk} A\n"})
    assert answer.status_code == 302
    with django_assert_max_num_queries(14):
        page = client.get(f"/labelling/{cs.pk}/data/").content.decode()
    experts_table = page.split('id="experts"')[1].split("</section>")[0]
    assert "x0" in experts_table and "2 of 3 pairs" in experts_table and "30 s" in experts_table
    assert f"#{first.pk}" in page.split('id="attention-checks"')[1]
    bad = client.post(f"/labelling/{cs.pk}/data/", {"attention_checks": "999999 A\nnonsense line here"})
    assert bad.status_code == 400
    assert "Line 2: write a comparison id and A, B or tie." in bad.content.decode()
    wrong = client.post(f"/labelling/{cs.pk}/data/", {"attention_checks": f"{first.pk} maybe"})
    assert "the known answer must be A, B or tie, not maybe" in wrong.content.decode()


def test_the_api_gives_the_builder_each_experts_statistics_and_takes_checks(labelled, researcher, login):
    cs, experts, (first, second, _third) = labelled
    client = login(researcher)
    posted = client.post(
        f"/api/labelling/sets/{cs.pk}/attention-checks/",
        {"checks": [{"comparison": first.pk, "answer": "A"}, {"comparison": second.pk, "answer": "B"}]},
        content_type="application/json",
    )
    assert posted.status_code == 200, posted.content
    assert posted.json() == {"changed": 2, "checks": 2}
    rows = {row["username"]: row for row in client.get(f"/api/labelling/sets/{cs.pk}/experts/").json()}
    assert rows["x1"]["checks_correct"] == 2 and (rows["x1"]["agreeing_pairs"], rows["x1"]["shared_pairs"]) == (2, 3)
    refused = client.post(
        f"/api/labelling/sets/{cs.pk}/attention-checks/",
        {"checks": [{"comparison": 999999, "answer": "A"}]},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "999999" in refused.content.decode()


def test_experts_are_not_told_which_comparisons_are_checks_nor_see_the_statistics(labelled, login):
    cs, experts, (first, second, _third) = labelled
    attention.attention_checks_set(comparison_set=cs, answers={second.pk: "B"}, user=None)
    client = login(experts[2])
    assignment = LabelAssignment.objects.get(comparison=second, expert=experts[2])
    page = client.get(f"/labelling/{cs.pk}/{assignment.pk}/").content.decode()
    assert "attention" not in page.lower() and "known answer" not in page.lower()
    api = client.get(f"/api/labelling/assignments/{assignment.pk}/").content.decode()
    assert "gold" not in api and "attention" not in api
    assert client.get(f"/api/labelling/sets/{cs.pk}/experts/").status_code == 403
    assert client.get(f"/labelling/{cs.pk}/data/").status_code == 403


def test_the_label_figures_are_kept_and_any_label_change_or_check_reads_them_again(labelled):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    cs, experts, (first, second, third) = labelled

    def read():
        with CaptureQueriesContext(connection) as captured:
            rows = {row.username: row for row in expert_statistics(comparison_set=cs)}
        labels_read = [q for q in captured.captured_queries if '"labelling_expertlabel"."score"' in q["sql"]]
        return rows, len(captured), bool(labels_read)

    rows, _n, read_labels = read()
    assert read_labels and rows["x2"].labelled == 1
    rows, queries, read_labels = read()
    assert not read_labels and queries <= 2  # the progress with its key, and the database cache (none in locmem)
    assert (rows["x0"].agreeing_pairs, rows["x0"].shared_pairs) == (2, 3)
    # A new label (x2 on the second, agreeing with x0 and x1) is counted.
    label(second, experts[2], -2, 20)
    rows, _n, read_labels = read()
    assert read_labels and (rows["x0"].agreeing_pairs, rows["x0"].shared_pairs) == (3, 4)
    assert rows["x2"].timed_labels == 2
    # A changed label (x2 now agrees on the first), twice: each change is counted.
    for score in (1, -1):
        assignment = LabelAssignment.objects.get(comparison=first, expert=experts[2])
        winner, margin = shown_choice(shown_order=assignment.shown_order, score=score)
        comparisons.label_change(comparison=first, expert=experts[2], winner=winner, margin=margin or None)
        rows, _n, read_labels = read()
        assert read_labels
        assert rows["x2"].agreeing_pairs == (4 if score == 1 else 2)
    # An attention check set, then its answer changed.
    attention.attention_checks_set(comparison_set=cs, answers={first.pk: "A"}, user=None)
    rows, _n, _read = read()
    assert (rows["x0"].checks_correct, rows["x0"].checks_answered) == (1, 1)
    attention.attention_checks_set(comparison_set=cs, answers={first.pk: "B"}, user=None)
    rows, _n, _read = read()
    assert (rows["x0"].checks_correct, rows["x0"].checks_answered) == (0, 1)
