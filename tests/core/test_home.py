"""The registry of home-page panels and item-page sections: each name once, each panel in its own template."""

import pytest

from core import home


@pytest.fixture
def registry(monkeypatch):
    """Register into copies of the registries, so that a test's parts leave the real ones as they were."""
    monkeypatch.setattr(home, "_PANELS", dict(home._PANELS))
    monkeypatch.setattr(home, "_ITEM_SECTIONS", dict(home._ITEM_SECTIONS))


def test_every_app_registers_its_panel_under_its_own_name_and_template():
    assert {name: panel.template for name, panel in home._PANELS.items()} == {
        "items": "items/_home_panel.html",
        "screening": "screening/_home_panel.html",
        "labelling": "labelling/_home_panel.html",
        "researcher": "evaluation/_home_panel.html",
    }


@pytest.mark.usefixtures("registry")
def test_a_second_panel_under_a_taken_name_is_refused():
    with pytest.raises(home.AlreadyRegistered, match="'screening' is already registered"):
        home.panel("screening", template="other/_home_panel.html", position=1)(lambda user: {})
    assert home._PANELS["screening"].template == "screening/_home_panel.html"


@pytest.mark.usefixtures("registry")
def test_a_second_item_section_under_a_taken_name_is_refused():
    with pytest.raises(home.AlreadyRegistered, match="'screening-feedback' is already registered"):
        home.item_section("screening-feedback")(lambda item: {})


@pytest.mark.usefixtures("registry")
def test_two_item_sections_giving_the_same_key_are_refused():
    home._ITEM_SECTIONS.clear()
    home.item_section("first")(lambda item: {"notes": 1})
    home.item_section("second")(lambda item: {"notes": 2})
    with pytest.raises(home.KeyCollision, match="'first' and 'second' both give 'notes'"):
        home.item_context(item=object())


@pytest.mark.usefixtures("registry")
def test_panels_keep_their_own_context_come_in_order_and_skip_users_without_a_part():
    home._PANELS.clear()
    home.panel("late", template="b.html", position=2)(lambda user: {"count": 2})
    home.panel("early", template="a.html", position=1)(lambda user: {"count": 1})
    home.panel("none", template="c.html", position=0)(lambda user: None)
    assert home.home_panels(user=None) == [
        {"name": "early", "template": "a.html", "context": {"count": 1}},
        {"name": "late", "template": "b.html", "context": {"count": 2}},
    ]
