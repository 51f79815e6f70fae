"""Screening reads: a round's statistics (agreement, decisions, criteria, throughput)."""

import pytest

from annotation.screening import selectors
from annotation.screening.models import RoundItem
from tests.factories import make_review, make_screening_round

pytestmark = pytest.mark.django_db


def test_statistics_report_alpha_decisions_and_throughput(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers)
    plan = {
        "cand-0": ["accept", "accept"],
        "cand-1": ["reject", "reject"],
        "cand-2": ["accept", "reject"],
        "cand-3": ["revise", "revise"],
    }
    for uid, decisions in plan.items():
        ri = RoundItem.objects.get(round=round, item__uid=uid)
        for assignment, decision in zip(ri.assignments.order_by("reviewer__username"), decisions, strict=True):
            make_review(round=round, uid=uid, reviewer=assignment.reviewer, decision=decision)
    stats = selectors.round_statistics(round=round)
    assert stats.decisions == {"accept": 3, "reject": 3, "revise": 2}
    # Krippendorff's alpha (nominal) for units {a,a},{x,x},{a,x},{v,v}: 1 - D_o/D_e with
    # D_o = 2/8 and D_e = (3*3 + 3*2 + 3*2)*2 / (8*7) = 42/56, so alpha = 1 - (2/8)/(42/56) = 2/3.
    assert stats.alpha == pytest.approx(2 / 3)
    assert stats.per_criterion["Linguistic clarity"] == {"n": 8, "mean": 5.0}
    assert stats.per_criterion["Correctness of the answer key"] == {"n": 8, "pass_rate": 1.0}
    assert sum(t["submitted"] for t in stats.throughput) == 8 and stats.progress == (8, 8)
