"""Accepted items, a fixed clock and a release of them frozen at that time, shared by the release tests."""

from datetime import UTC, datetime

import pytest

from annotation.items import services
from annotation.releases import services as releases
from tests.factories import make_frozen_release, make_item, mcq_content

FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def open_prompt(en, zh):
    return {"en": {"prompt": en}, "zh": {"prompt": zh}}


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(releases.timezone, "now", lambda: FIXED_NOW)


@pytest.fixture
def accepted_items(taxonomy, lead):
    items = [make_item(uid=f"rel-{i}", user=lead, status="accepted") for i in range(3)]
    items.append(
        make_item(
            uid="rel-open",
            kind="open_prompt",
            dimension="emotion_matching",
            content=open_prompt(
                "My cat died this morning and I can't stop crying.", "我的猫今天早上走了，我一直在哭。"
            ),
            user=lead,
            status="accepted",
        )
    )
    # The three MCQs share their text, so give them distinct contexts to keep near-duplicates out of the way.
    for n, item in enumerate(items[:3]):
        content = mcq_content()
        content["en"]["context"] = ["A quiet office on a Monday.", "Grandma's 80th birthday party.", "An exam hall."][n]
        content["zh"]["context"] = ["周一安静的办公室。", "奶奶的八十岁生日宴。", "考场里。"][n]
        services.item_revise(item=item, state=services.ItemState(dimension=item.dimension, content=content), user=lead)
        # The new text sent the item back to draft; accept it again, as screening would.
        services.item_status_decide(
            item=item, status="accepted", user=lead, reason="screened again", source="lead_decision"
        )
    make_item(uid="rel-draft", user=lead, status="draft")
    return items


@pytest.fixture
def frozen(accepted_items, fixed_clock):
    return make_frozen_release(version="1.0.0", title="FACET 1.0.0", override_reason="test subset")


@pytest.fixture
def frozen_layout_1(accepted_items, fixed_clock, monkeypatch):
    """The same release frozen as a release was frozen before export layout 2 (its files are kept as written)."""
    from annotation.releases import export

    monkeypatch.setattr(export, "LAYOUT", 1)
    return make_frozen_release(version="1.0.0", title="FACET 1.0.0", override_reason="test subset")
