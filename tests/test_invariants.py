"""Invariants in the database: every field with choices has a CheckConstraint allowing exactly its choices (and the
empty string when the field may be left blank), so that a write that skips validation still cannot store another
value."""

from django.apps import apps
from django.conf import settings
from django.db import models
from django.db.models import Q

PROJECT_APPS = [
    config
    for config in apps.get_app_configs()
    if config.name in settings.INSTALLED_APPS
    and config.path.startswith(str(settings.BASE_DIR))
    and "site-packages" not in config.path  # a virtual environment inside the checkout
]


# Every choice field is constrained now; a field listed here would be one still waiting for its constraint (the last
# test fails as soon as it gains one, so the list cannot outlive the gap).
NOT_YET_CONSTRAINED: set[str] = set()


def _in_lookups(condition: Q) -> list[tuple[str, object]]:
    """Return every ``(lookup, value)`` pair in ``condition``, however deep its ``&``, ``|`` and ``~`` go."""
    pairs = []
    for child in condition.children:
        if isinstance(child, Q):
            pairs += _in_lookups(child)
        else:
            pairs.append(child)
    return pairs


def _choice_fields() -> list[tuple[type[models.Model], models.Field]]:
    return [
        (model, field)
        for config in PROJECT_APPS
        for model in config.get_models()
        if not model._meta.abstract and not model._meta.proxy and model._meta.managed
        for field in model._meta.local_concrete_fields
        if field.choices
    ]


def _allowed_by_constraints(model: type[models.Model], field: models.Field) -> set | None:
    """Return the values the first CheckConstraint naming ``field__in`` lets through (with the ones it compares the
    field to, as a jury's ``aggregation__in`` beside a single judge's ``aggregation=""``); None if none names it."""
    names = {field.name, field.attname}
    for constraint in model._meta.constraints:
        if not isinstance(constraint, models.CheckConstraint):
            continue
        pairs = _in_lookups(constraint.condition)
        if not any(lookup in {f"{name}__in" for name in names} for lookup, _value in pairs):
            continue
        allowed = set()
        for lookup, value in pairs:
            if lookup in {f"{name}__in" for name in names}:
                allowed |= set(value)
            elif lookup in names | {f"{name}__exact" for name in names}:
                allowed.add(value)
        return allowed
    return None


def test_the_walk_finds_the_choice_fields_of_every_layer():
    labels = {model._meta.app_label for model, _field in _choice_fields()}
    assert {"items", "screening", "releases", "labelling", "calibration", "evaluation", "llm"} <= labels


def test_every_field_with_choices_has_a_check_constraint_allowing_exactly_its_choices():
    missing, different = [], []
    for model, field in _choice_fields():
        allowed = _allowed_by_constraints(model, field)
        label = f"{model._meta.label}.{field.name}"
        if label in NOT_YET_CONSTRAINED:
            continue
        if allowed is None:
            missing.append(label)
        elif allowed != {value for value, _label in field.flatchoices} | ({""} if field.blank else set()):
            different.append(label)
    assert not missing, f"no CheckConstraint limits these fields to their choices: {missing}"
    assert not different, f"the CheckConstraint allows other values than the choices of: {different}"


def test_the_fields_not_yet_constrained_still_lack_their_constraint():
    fields = {f"{model._meta.label}.{field.name}": (model, field) for model, field in _choice_fields()}
    assert fields.keys() >= NOT_YET_CONSTRAINED
    assert [label for label in sorted(NOT_YET_CONSTRAINED) if _allowed_by_constraints(*fields[label]) is not None] == []
