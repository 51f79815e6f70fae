"""Item reads: coverage counts and the item list's filters."""

import pytest

from annotation.items import selectors, services
from annotation.items.models import Benchmark, EmotionCategory, Scenario
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db


def test_coverage_counts_per_language_domain_valence_and_difficulty(taxonomy, lead):
    scenario = Scenario.objects.get(code="academic_anxiety")
    joy = EmotionCategory.objects.filter(valence="positive").first()
    fear = EmotionCategory.objects.filter(valence="negative").first()
    accepted = make_item(uid="cov-1", user=lead)
    services.item_revise(
        item=accepted,
        state=services.ItemState(
            dimension=accepted.dimension,
            content=mcq_content(),
            scenario=scenario,
            emotions=[joy, fear],
            difficulty="hard",
        ),
        user=lead,
    )
    services.item_status_decide(item=accepted, status="accepted", user=lead, reason="screened", source="lead_decision")
    english_only = mcq_content()
    del english_only["zh"]
    make_item(uid="cov-2", content=english_only, user=lead, status="draft")
    make_item(uid="cov-3", user=lead, status="rejected")
    data = selectors.coverage(benchmark=Benchmark.objects.get(slug="facet"))
    row = data["table"][accepted.dimension_id]
    assert row["lang"] == {"en": {"accepted": 1, "candidate": 1}, "zh": {"accepted": 1, "candidate": 0}}
    domain = scenario.domain.code
    assert row["domain"][("en", domain)] == {"accepted": 1, "candidate": 0}
    assert row["valence"][("zh", "positive")]["accepted"] == 1 and row["valence"][("zh", "negative")]["accepted"] == 1
    assert row["valence"][("en", "neutral")]["accepted"] == 0
    assert row["difficulty"][("en", "hard")]["accepted"] == 1 and row["difficulty"][("en", "none")]["candidate"] == 1


def test_candidate_status_filter_lists_drafts_and_items_in_screening(taxonomy, lead):
    make_item(uid="c-draft", user=lead, status="draft")
    make_item(uid="c-screen", user=lead, status="in_screening")
    make_item(uid="c-acc", user=lead, status="accepted")
    uids = list(selectors.item_list(filters={"status": "candidate"}).values_list("uid", flat=True))
    assert uids == ["c-draft", "c-screen"]
