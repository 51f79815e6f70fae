"""The near-duplicate check of the release checklist: the release's own pinned texts only, memory bounded."""

import tracemalloc

import pytest

from annotation.items import services, synthetic
from annotation.items.models import Benchmark
from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.checks import EntryFacts, release_checklist
from tests.factories import make_item
from tests.items.test_near_duplicates import SCENARIOS, content, edited

pytestmark = pytest.mark.django_db


def build(**kwargs: object):
    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="1.0.0", title="FACET", user=None, **kwargs
    )


def near_duplicate_check(release):
    return next(c for c in release_selectors.release_validate(release=release) if c.code == "near_duplicates")


def test_only_the_release_s_items_are_compared(taxonomy, lead):
    en, zh = SCENARIOS[0]
    make_item(uid="in-1", content=content(en, zh), user=lead, status="accepted")
    make_item(uid="in-2", content=content(*SCENARIOS[1]), user=lead, status="accepted")
    make_item(uid="out-copy", content=content(edited(en), zh), user=lead)  # a draft: not in the release
    check = near_duplicate_check(build())
    assert check.passed and check.offenders == []


def test_pairs_are_named_per_language_with_their_scores(taxonomy, lead):
    en, zh = SCENARIOS[2]
    make_item(uid="dup-a", content=content(en, zh), user=lead, status="accepted")
    make_item(uid="dup-b", content=content(edited(en), zh), user=lead, status="accepted")
    make_item(uid="dup-c", content=content(*SCENARIOS[3]), user=lead, status="accepted")
    check = near_duplicate_check(build())
    assert not check.passed and check.offenders == ["dup-a", "dup-b"]
    assert check.params["pairs"] == 2
    assert [d.split(" (")[0] for d in check.details] == ["en: dup-a ~ dup-b", "zh: dup-a ~ dup-b"]


def test_the_pinned_revisions_are_compared_not_later_edits(taxonomy, lead):
    en, zh = SCENARIOS[0]
    make_item(uid="pin-a", content=content(en, zh), user=lead, status="accepted")
    later = make_item(uid="pin-b", content=content(*SCENARIOS[1]), user=lead, status="accepted")
    release = build()
    state = services.ItemState(dimension=later.dimension, content=content(edited(en), zh))
    services.item_revise(item=later, state=state, user=lead, message="now a copy")
    assert near_duplicate_check(release).passed


def test_a_large_release_is_checked_without_a_square_matrix():
    items = synthetic.scenarios(3000, seed=11)
    items.append({"en": items[0]["en"] + " Really.", "zh": items[0]["zh"] + "真的。"})
    entries = [
        EntryFacts(
            uid=f"syn-{i:04d}",
            kind="open_prompt",
            status="accepted",
            dimension="d",
            dimension_target=None,
            content={lang: {"prompt": item[lang]} for lang in ("en", "zh")},
            domain=None,
            valences=[],
            revision=1,
            accepted_revisions=(1,),
        )
        for i, item in enumerate(items)
    ]
    tracemalloc.start()
    try:
        checks = release_checklist(entries, duplicate_threshold=0.85, max_domain_share=1, min_valence_share=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    check = next(c for c in checks if c.code == "near_duplicates")
    assert check.offenders == ["syn-0000", "syn-3000"] and check.params["pairs"] == 2
    assert peak < 64 * 2**20, peak  # the old dense 3001 x 3001 matrices took 72 MB each
