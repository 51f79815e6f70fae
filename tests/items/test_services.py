"""Item services: revisions, conflicts, immutability, taxonomy loading and roles."""

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from core.roles import declared_permissions, roles_sync
from items import services
from items.models import Benchmark, Dimension, EmotionCategory, Item, ItemRevision, Scenario, ScenarioDomain
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db


def state_for(item, content, **kwargs):
    return services.ItemState(dimension=item.dimension, content=content, **kwargs)


def test_taxonomy_has_the_published_structure(taxonomy):
    facet = Benchmark.objects.get(slug="facet")
    modules = Dimension.objects.filter(benchmark=facet, parent=None)
    assert sorted(m.name_en for m in modules) == ["Emotion Cognition", "Emotion Interaction", "Emotion Perception"]
    leaves = Dimension.objects.filter(benchmark=facet, level="dimension")
    assert leaves.count() == 10
    assert sorted(d.name_en for d in leaves if d.subjective) == [
        "Emotion Deepening",
        "Emotion Matching",
        "Emotion Regulation",
        "Empathetic Understanding",
        "Expression Naturalness",
    ]
    assert {"Hidden Emotion Recognition", "Crisis Recognition", "Social Adequacy"} <= {d.name_en for d in leaves}
    assert sum(d.target_items for d in leaves) == 480
    eicap = Benchmark.objects.get(slug="eicap")
    assert Dimension.objects.filter(benchmark=eicap, level="layer").count() == 6
    assert Dimension.objects.filter(benchmark=eicap, level="subcategory").count() == 24
    assert EmotionCategory.objects.count() == 62
    assert set(EmotionCategory.objects.values_list("valence", flat=True)) == {"positive", "neutral", "negative"}
    assert ScenarioDomain.objects.count() == 6 and Scenario.objects.count() == 48
    assert all(d.name_zh for d in Dimension.objects.all())


def test_loading_the_taxonomy_twice_changes_nothing(taxonomy):
    before = (Dimension.objects.count(), EmotionCategory.objects.count(), Scenario.objects.count())
    services.taxonomy_load_fixture("taxonomy.json")
    assert (Dimension.objects.count(), EmotionCategory.objects.count(), Scenario.objects.count()) == before


def test_every_revise_creates_a_new_numbered_revision_with_author_and_message(taxonomy, expert, lead):
    item = make_item(user=expert)
    content = mcq_content()
    content["zh"]["question"] = "米娅此刻有什么感受？"
    revision = services.item_revise(item=item, state=state_for(item, content), user=lead, message="zh wording")
    assert (revision.number, revision.author, revision.message) == (2, lead, "zh wording")
    item.refresh_from_db()
    assert item.current_revision == revision and item.updated_by == lead and item.created_by == expert
    assert list(item.revisions.values_list("number", flat=True)) == [1, 2]


def test_revising_with_identical_content_saves_nothing(taxonomy, expert):
    item = make_item(user=expert)
    assert services.item_revise(item=item, state=state_for(item, mcq_content()), user=expert) is None
    assert item.revisions.count() == 1


def test_editing_a_stale_revision_is_a_conflict_and_keeps_the_newer_text(taxonomy, expert, lead):
    item = make_item(user=expert)
    first = mcq_content()
    first["en"]["question"] = "Lead's wording"
    services.item_revise(item=item, state=state_for(item, first), user=lead, base_revision=1)
    stale = mcq_content()
    stale["en"]["question"] = "Expert's wording"
    with pytest.raises(services.RevisionConflict, match="changed by lead1 \\(revision 2"):
        services.item_revise(item=item, state=state_for(item, stale), user=expert, base_revision=1)
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.content["en"]["question"] == "Lead's wording"


def test_revisions_are_immutable_through_the_orm(taxonomy, expert):
    revision = make_item(user=expert).current_revision
    revision.message = "rewritten history"
    with pytest.raises(ValidationError):
        revision.save()
    with pytest.raises(ValidationError):
        ItemRevision.objects.filter(pk=revision.pk).update(message="x")
    with pytest.raises(ValidationError):
        revision.delete()
    assert ItemRevision.objects.get(pk=revision.pk).message == "created in a test"


def test_parity_problems_are_stored_and_flagged_on_the_item(taxonomy, expert):
    content = mcq_content()
    del content["zh"]
    item = make_item(content=content, user=expert)
    assert (item.has_en, item.has_zh, item.parity_ok) == (True, False, False)
    assert [i["code"] for i in item.current_revision.parity_issues] == ["missing_language"]


def test_dimension_of_another_benchmark_is_refused_and_nothing_is_written(taxonomy, expert):
    item = make_item(user=expert)
    foreign = Dimension.objects.get(
        benchmark__slug="eicap",
        code=Dimension.objects.filter(benchmark__slug="eicap", level="subcategory").first().code,
    )
    with pytest.raises(ValidationError, match="another benchmark"):
        services.item_revise(item=item, state=services.ItemState(dimension=foreign, content=mcq_content()), user=expert)
    assert item.revisions.count() == 1


def test_creating_a_duplicate_uid_is_refused(taxonomy, expert):
    make_item(uid="dup-1", user=expert)
    with pytest.raises(ValidationError, match="already exists"):
        make_item(uid="dup-1", user=expert)
    assert Item.objects.filter(uid="dup-1").count() == 1


def test_roles_have_exactly_their_permissions(db):
    roles_sync()
    for role, names in declared_permissions().items():
        granted = {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=role).permissions.all()}
        assert granted == set(names), f"{role}: declared permissions that do not exist: {set(names) - granted}"
    expert = {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name="expert").permissions.all()}
    assert "items.change_item" in expert and "screening.adjudicate_item" not in expert
    researcher = {
        f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name="researcher").permissions.all()
    }
    assert "items.view_item" in researcher and "items.change_item" not in researcher
