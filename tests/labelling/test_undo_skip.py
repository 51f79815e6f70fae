"""Changing a label, going back to the previous one and skipping: services and pages."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.items.models import Benchmark
from annotation.labelling import selectors
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment, LabelChange
from annotation.labelling.pairwise import canonical_score
from annotation.queue.selectors import queue_previous, queue_skipped

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(prompts, make_user):
    experts = [make_user("expert", username=f"u{i}") for i in range(2)]
    cs = comparisons.comparison_set_build(
        name="undo", benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=None, languages=("en",)
    )
    return cs, experts


def queue(cs, expert) -> list[LabelAssignment]:
    return list(
        LabelAssignment.objects.filter(comparison__comparison_set=cs, expert=expert)
        .select_related("comparison")
        .order_by("position", "id")
    )


def test_change_records_old_and_new_verdict_with_the_time_since_reopening(pair):
    cs, (expert, other) = pair
    assignment = queue(cs, expert)[0]
    comparisons.label_submit(comparison=assignment.comparison, expert=expert, winner="left", margin=4, rationale="a")
    LabelAssignment.objects.filter(pk=assignment.pk).update(reopened_at=timezone.now() - timedelta(seconds=42))
    assignment.refresh_from_db()
    label = comparisons.label_change(
        comparison=assignment.comparison, expert=expert, winner="tie", margin=None, rationale="b"
    )
    assert label.score == 0 and label.changed_at is not None
    change = LabelChange.objects.get(label=label)
    assert change.old_score == canonical_score(shown_order=assignment.shown_order, winner="left", margin=4)
    assert (change.new_score, change.old_rationale, change.new_rationale) == (0, "a", "b")
    assert 42 <= change.seconds_spent <= 45 and change.changed_by == expert
    # The same verdict again changes nothing and records nothing.
    comparisons.label_change(comparison=assignment.comparison, expert=expert, winner="tie", margin=None, rationale="b")
    assert LabelChange.objects.count() == 1
    # Another expert's label of the same comparison is theirs alone.
    with pytest.raises(ValidationError, match="nothing to change"):
        comparisons.label_change(comparison=assignment.comparison, expert=other, winner="tie", margin=None)


def test_closed_set_refuses_labels_changes_and_skips(pair, researcher):
    cs, (expert, _other) = pair
    first, second = queue(cs, expert)[:2]
    comparisons.label_submit(comparison=first.comparison, expert=expert, winner="tie", margin=None)
    comparisons.comparison_set_close(comparison_set=cs, user=researcher)
    message = "This comparison set is closed; its labels can no longer change."
    with pytest.raises(ValidationError, match=message):
        comparisons.label_change(comparison=first.comparison, expert=expert, winner="left", margin=1)
    with pytest.raises(ValidationError, match=message):
        comparisons.label_submit(comparison=second.comparison, expert=expert, winner="left", margin=1)
    with pytest.raises(ValidationError, match=message):
        comparisons.label_skip(comparison=second.comparison, expert=expert)
    assert ExpertLabel.objects.get(assignment=first).score == 0


def test_skip_moves_the_comparison_to_the_end_and_keeps_it_assigned(pair):
    cs, (expert, other) = pair
    first, *rest = queue(cs, expert)
    comparisons.label_skip(comparison=first.comparison, expert=expert)
    assert selectors.label_next(comparison_set=cs, expert=expert) == rest[0]
    assert list(queue_skipped(queue=selectors.expert_queue(comparison_set=cs, expert=expert))) == [first]
    assert LabelAssignment.objects.filter(comparison=first.comparison).count() == 2
    for assignment in rest:
        comparisons.label_submit(comparison=assignment.comparison, expert=expert, winner="tie", margin=None)
    assert selectors.label_next(comparison_set=cs, expert=expert) == first
    comparisons.label_submit(comparison=first.comparison, expert=expert, winner="tie", margin=None)
    assert not queue_skipped(queue=selectors.expert_queue(comparison_set=cs, expert=expert)).exists()
    with pytest.raises(ValidationError, match="nothing to skip"):
        comparisons.label_skip(comparison=first.comparison, expert=expert)


def test_previous_follows_the_order_the_labels_were_given(pair):
    cs, (expert, _other) = pair
    a, b, c = queue(cs, expert)[:3]
    for assignment in (c, a, b):
        comparisons.label_submit(comparison=assignment.comparison, expert=expert, winner="tie", margin=None)
    fresh = selectors.label_assignment(comparison_set=cs, pk=b.pk)
    assert queue_previous(queue=selectors.expert_queue(comparison_set=cs, expert=expert)) == b
    assert queue_previous(queue=selectors.expert_queue(comparison_set=cs, expert=expert), before=fresh) == a
    assert (
        queue_previous(
            queue=selectors.expert_queue(comparison_set=cs, expert=expert),
            before=selectors.label_assignment(comparison_set=cs, pk=a.pk),
        )
        == c
    )
    assert (
        queue_previous(
            queue=selectors.expert_queue(comparison_set=cs, expert=expert),
            before=selectors.label_assignment(comparison_set=cs, pk=c.pk),
        )
        is None
    )


def test_page_goes_back_changes_the_label_and_skips(pair, login):
    cs, (expert, _other) = pair
    client = login(expert)
    first, second, third = queue(cs, expert)[:3]
    response = client.post(f"/labelling/{cs.pk}/{first.pk}/", {"winner": "left", "margin": "2"})
    assert response.status_code == 302 and response["Location"] == f"/labelling/{cs.pk}/{second.pk}/"

    page = client.get(f"/labelling/{cs.pk}/{second.pk}/").content.decode()
    assert f'href="/labelling/{cs.pk}/{first.pk}/"' in page and 'id="label-back"' in page
    page = client.get(f"/labelling/{cs.pk}/{first.pk}/").content.decode()
    assert 'name="change" value="1"' in page and 'id="winner-left" checked' in page
    response = client.post(f"/labelling/{cs.pk}/{first.pk}/", {"winner": "right", "margin": "1", "change": "1"})
    assert response.status_code == 302 and response["Location"] == f"/labelling/{cs.pk}/{second.pk}/"
    assert ExpertLabel.objects.get(assignment=first).score == canonical_score(
        shown_order=first.shown_order, winner="right", margin=1
    )
    assert LabelChange.objects.get().seconds_spent is not None

    response = client.post(f"/labelling/{cs.pk}/{second.pk}/skip/")
    assert response.status_code == 302 and response["Location"] == f"/labelling/{cs.pk}/{third.pk}/"
    page = client.get(f"/labelling/{cs.pk}/{third.pk}/").content.decode()
    assert 'id="skipped-list"' in page and f'href="/labelling/{cs.pk}/{second.pk}/"' in page
    assert client.post(f"/labelling/{cs.pk}/{first.pk}/skip/").status_code == 302
    assert LabelAssignment.objects.get(pk=first.pk).skipped_at is None


def test_page_of_a_closed_set_offers_no_change(pair, login, researcher):
    cs, (expert, _other) = pair
    first = queue(cs, expert)[0]
    comparisons.label_submit(comparison=first.comparison, expert=expert, winner="tie", margin=None)
    comparisons.comparison_set_close(comparison_set=cs, user=researcher)
    client = login(expert)
    page = client.get(f"/labelling/{cs.pk}/{first.pk}/").content.decode()
    assert 'id="set-closed"' in page and 'id="label-form"' not in page
    response = client.post(f"/labelling/{cs.pk}/{first.pk}/", {"winner": "left", "margin": "1", "change": "1"})
    assert response.status_code == 400 and "closed" in response.content.decode()


def test_builder_closes_a_set_from_the_list_after_confirming(pair, login, researcher):
    cs, (expert, _other) = pair
    client = login(researcher)
    page = client.get("/labelling/").content.decode()
    assert f'action="/labelling/{cs.pk}/close/"' in page
    client.post(f"/labelling/{cs.pk}/close/")
    cs.refresh_from_db()
    assert cs.is_open
    client.post(f"/labelling/{cs.pk}/close/", {"confirm": "1"})
    cs.refresh_from_db()
    assert not cs.is_open and cs.closed_by == researcher
    assert login(expert).post(f"/labelling/{cs.pk}/close/", {"confirm": "1"}).status_code == 403


def test_list_offers_to_change_the_last_label(pair, login):
    cs, (expert, _other) = pair
    first = queue(cs, expert)[0]
    comparisons.label_submit(comparison=first.comparison, expert=expert, winner="tie", margin=None)
    client = login(expert)
    assert f"/labelling/{cs.pk}/next/?last=1" in client.get("/labelling/").content.decode()
    assert client.get(f"/labelling/{cs.pk}/next/?last=1")["Location"] == f"/labelling/{cs.pk}/{first.pk}/"


def test_a_prefetched_page_does_not_start_the_timer_but_arriving_on_it_does(pair, login):
    cs, (expert, _other) = pair
    first, second = queue(cs, expert)[:2]
    client = login(expert)
    client.get(f"/labelling/{cs.pk}/{second.pk}/", headers={"Sec-Purpose": "prefetch"})
    assert LabelAssignment.objects.get(pk=second.pk).first_viewed_at is None
    response = client.post(f"/labelling/{cs.pk}/{first.pk}/", {"winner": "tie"})
    assert response["Location"] == f"/labelling/{cs.pk}/{second.pk}/"
    assert LabelAssignment.objects.get(pk=second.pk).first_viewed_at is not None


def test_a_page_fetched_ahead_by_the_label_page_does_not_start_the_timer(pair, login):
    """app.js fetches the next comparison with ``Purpose: prefetch`` (a script cannot send ``Sec-Purpose``)."""
    cs, (expert, _other) = pair
    second = queue(cs, expert)[1]
    response = login(expert).get(f"/labelling/{cs.pk}/{second.pk}/", headers={"Purpose": "prefetch"})
    assert response.status_code == 200 and b'id="label-page"' in response.content
    assert LabelAssignment.objects.get(pk=second.pk).first_viewed_at is None
