"""The shared work queue (``annotation.queue``), exercised through screening's and labelling's services alike."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.queue import services
from annotation.queue.selectors import (
    progress_figures,
    queue_after,
    queue_counts,
    queue_next,
    queue_previous,
    queue_skipped,
    queue_workers,
    worker_assignments,
)

pytestmark = pytest.mark.django_db


def fresh(work, assignment):
    return work.model.objects.get(pk=assignment.pk)


def test_a_queue_has_four_assignments_for_its_worker_and_counts_them(work):
    assert work.queue().count() == 4
    assert work.counts() == (4, 0, 0)


def test_next_follows_the_queue_order_and_wraps_around(work):
    first, second, third, last = work.queue()
    assert queue_next(queue=work.queue()) == first
    assert queue_next(queue=work.queue(), after=first) == second
    assert queue_next(queue=work.queue(), after=second.pk) == third
    assert queue_next(queue=work.queue(), after=last.pk) == first
    work.finish(first)
    # After the assignment just finished the queue starts again from the top.
    assert queue_next(queue=work.queue(), after=first.pk) == second
    assert queue_next(queue=work.queue()) == second


def test_next_is_none_once_every_assignment_is_finished(work):
    for assignment in work.queue():
        work.finish(assignment)
    assert queue_next(queue=work.queue()) is None
    assert work.counts() == (4, 4, 0)


def test_after_the_last_one_left_is_put_aside_it_comes_back_and_then_the_queue_is_done(work):
    *rest, last = work.queue()
    for assignment in rest:
        work.finish(assignment)
    assert queue_after(queue=work.queue(), after=rest[-1].pk) == last
    work.skip(last)
    assert queue_next(queue=work.queue(), after=last.pk) is None
    assert queue_after(queue=work.queue(), after=last.pk) == last
    work.finish(last)
    assert queue_after(queue=work.queue(), after=last.pk) is None


def test_previous_follows_the_order_the_work_was_finished(work):
    a, b, c, _d = work.queue()
    for assignment in (c, a, b):
        work.finish(assignment)
    assert queue_previous(queue=work.queue()) == b
    assert queue_previous(queue=work.queue(), before=fresh(work, b)) == a
    assert queue_previous(queue=work.queue(), before=fresh(work, a)) == c
    assert queue_previous(queue=work.queue(), before=fresh(work, c)) is None
    # From an unfinished assignment "previous" is the latest finished one.
    assert queue_previous(queue=work.queue(), before=fresh(work, _d)) == b


def test_skip_moves_the_assignment_to_the_end_and_counts_it_once(work):
    first, *rest = work.queue()
    work.skip(first)
    work.skip(fresh(work, first))
    assert list(work.queue()) == [*rest, first]
    assert list(queue_skipped(queue=work.queue())) == [first]
    assert work.counts() == (4, 0, 1)
    for assignment in rest:
        work.finish(assignment)
    assert queue_next(queue=work.queue()) == first
    work.finish(first)
    assert work.counts() == (4, 4, 0)
    assert not queue_skipped(queue=work.queue()).exists()
    with pytest.raises(ValidationError, match="nothing to skip"):
        work.skip(first)


def test_the_states_split_a_workers_assignments_into_pending_finished_and_put_aside(work, make_user):
    first, second, *_rest = work.queue()
    work.finish(first)
    work.skip(second)

    def mine(state: str, owner: int | None = work.owner.pk) -> list:
        return list(worker_assignments(model=work.model, worker=work.worker, owner=owner, state=state))

    assert mine(work.model.DONE) == [first]
    assert second in mine("pending") and first not in mine("pending")
    assert mine("skipped") == [second]
    assert mine("") == list(work.queue()) == mine("", owner=None)
    assert mine("", owner=work.owner.pk + 1) == []
    assert not worker_assignments(model=work.model, worker=make_user("expert", username="queue-other")).exists()


def test_a_change_is_timed_from_the_change_clock_and_restarts_it(work):
    first = work.queue().first()
    work.finish(first)
    started = timezone.now() - timedelta(seconds=30)
    work.model.objects.filter(pk=first.pk).update(**{work.model.CHANGE_FROM: started})
    assert 30 <= services.change_seconds(assignment=fresh(work, first)) <= 33
    changed = work.change(first)
    assert 30 <= changed.changes.get().seconds_spent <= 33
    assert getattr(fresh(work, first), work.model.CHANGE_FROM) == changed.changed_at
    assert services.change_seconds(assignment=work.model(**{work.model.CHANGE_FROM: None})) is None


def test_writes_are_refused_once_the_round_or_set_closes_even_through_a_stale_copy(work):
    first, second, *_rest = work.queue().select_related(work.owner_path)
    work.finish(first)
    work.close()
    # The assignments still hold their work's round or set as read while it was open: the lock reads it again.
    work_of_second = getattr(second, work.owner_path.split("__")[0])
    assert getattr(work_of_second, work.model.OWNER).is_open
    for write, assignment in ((work.finish, second), (work.skip, second), (work.change, first)):
        with pytest.raises(ValidationError, match="closed"):
            write(assignment)


def test_the_lock_refuses_an_assignment_that_is_not_there(work):
    with pytest.raises(ValidationError, match="not assigned"):
        services.assignment_lock(assignments=work.model.objects.none(), not_assigned="not assigned", closed="closed")


def test_progress_recount_rebuilds_what_the_services_stored(work):
    first, second, third, _last = work.queue()
    work.finish(first)
    work.skip(second)
    work.finish(third)
    work.change(third)
    before = work.counts()
    stored = {f: getattr(work.progress(), f) for f in ("assigned", "skipped", work.model.DONE)}
    # Data written without the services: the finishing times and the counts are lost.
    work.model.objects.filter(pk__in=[first.pk, third.pk]).update(**{work.model.DONE_AT: None})
    work.model.progress.objects.filter(**{work.model.OWNER: work.owner}).update(assigned=0, skipped=0)
    rows = work.recount()
    assert len(rows) == 1 and work.counts() == before == (4, 2, 1)
    assert {f: getattr(work.progress(), f) for f in stored} == stored
    finished = worker_assignments(model=work.model, worker=work.worker, owner=work.owner.pk, state=work.model.DONE)
    assert list(finished) == [first, third]


def test_counts_are_read_from_the_stored_progress_and_are_zero_without_it(work, make_user):
    first = work.queue().first()
    work.finish(first)
    work.skip(work.queue().filter(**{f"{work.model.DONE_AT}__isnull": True}).first())
    assert queue_counts(model=work.model, owner=work.owner, worker=work.worker) == {"done": 1, "total": 4, "skipped": 1}
    stranger = make_user("expert", username="queue-stranger")
    assert queue_counts(model=work.model, owner=work.owner, worker=stranger) == {"done": 0, "total": 0, "skipped": 0}


def test_the_workers_are_the_active_users_with_the_permission_by_username(work, make_user):
    permission = {"round": "screening.review_item", "comparison_set": "labelling.label_comparisons"}[work.model.OWNER]
    make_user("expert", username="queue-a-inactive", is_active=False)
    make_user("researcher", username="queue-researcher")
    names = [u.get_username() for u in queue_workers(permission=permission)]
    assert work.worker.get_username() in names and "queue-a-inactive" not in names
    assert "queue-researcher" not in names
    assert names == sorted(names)


@pytest.mark.parametrize(
    ("done", "total", "figures"),
    [(0, 4, (0, 4, 4, 0)), (1, 3, (1, 3, 2, 33)), (4, 4, (4, 4, 0, 100)), (0, 0, (0, 0, 0, 0))],
)
def test_progress_figures_say_what_is_done_and_left(done, total, figures):
    assert tuple(progress_figures(done=done, total=total).values()) == figures


@pytest.mark.parametrize("url", ["/screening/new/", "/labelling/new/"])
def test_the_forms_that_choose_workers_cost_the_same_queries_however_many_users(
    url, db, taxonomy, make_user, admin_user, login, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = login(admin_user)
    counts = []
    for batch in range(2):
        for n in range(10 * (batch + 1)):
            make_user("expert", username=f"picker-{batch}-{n}")
        with CaptureQueriesContext(connection) as queries:
            page = client.get(url)
        assert page.status_code == 200
        assert "picker-0-0" in page.content.decode()
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 12, counts
