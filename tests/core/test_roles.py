"""Roles: each group holds exactly the permissions its apps declare."""

from django.contrib.auth.models import Group

from core.roles import declared_permissions, roles_sync


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
