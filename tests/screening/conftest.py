"""The default criteria, three reviewers and four candidate items, shared by the screening tests."""

import pytest

from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion
from tests.factories import make_item, mcq_content


@pytest.fixture(autouse=True)
def criteria(db):
    """Make sure the default criteria exist: a data migration creates them, and a transactional test's flush
    removes them."""
    default_criteria_create(Criterion)


@pytest.fixture
def reviewers(make_user):
    return [make_user("expert", username=f"rev{i}") for i in range(3)]


@pytest.fixture
def candidates(taxonomy, lead):
    items = []
    for i in range(4):
        content = mcq_content()
        content["en"]["context"] = f"Candidate scenario number {i}."
        items.append(make_item(uid=f"cand-{i}", content=content, user=lead))
    return items
