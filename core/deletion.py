"""Admin delete confirmations whose cost does not grow with the rows hanging off an object."""

from collections.abc import Iterable

from django.contrib import admin
from django.db import connections
from django.db.models import CASCADE, PROTECT, Field, Model, Q, QuerySet
from django.db.models.deletion import get_candidate_relations_to_delete
from django.http import HttpRequest
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

# A deletion confirmation names this many of the objects chosen, and counts the rest.
ROOTS_LISTED = 20
# Cascades deeper than this are not followed (none of the product's models nests so deep).
MAX_CASCADE_DEPTH = 8

DeletionSummary = tuple[list[str], dict[str, int], set[str], list[str]]


def deletion_summary(objs: Iterable[Model], request: HttpRequest, admin_site: admin.AdminSite) -> DeletionSummary:
    """What deleting ``objs`` would delete and what protects them, counted in one query whatever their number.

    Django's own confirmation collects and prints every related object (1,714 queries for a user who authored
    10,000 items); this counts each model the deletion cascades to (the relations Django's collector follows)
    with one subquery per relation path, and names the protecting models with their counts."""
    if isinstance(objs, QuerySet):  # the changelist's "delete selected": the rows are counted, not loaded
        model, listed, total = objs.model, list(objs[:ROOTS_LISTED]), objs.count()
        root = model._base_manager.filter(pk__in=objs.values("pk"))
    else:
        objs = list(objs)
        if not objs:
            return [], {}, set(), []
        model, listed, total = type(objs[0]), objs[:ROOTS_LISTED], len(objs)
        root = model._base_manager.filter(pk__in=[obj.pk for obj in objs])
    if not total:
        return [], {}, set(), []
    cascaded: list[tuple[type[Model], QuerySet]] = []
    protecting: list[tuple[type[Model], Field, QuerySet]] = []
    _deletion_paths(root, model, cascaded, protecting, path=(model,))
    # A model reached along several paths (an assignment through its round and its round item) is counted once.
    reached: dict[type[Model], Q] = {}
    for related, children in cascaded:
        reached[related] = reached.get(related, Q()) | Q(pk__in=children.values("pk"))
    deleted_rows = [related._base_manager.filter(condition) for related, condition in reached.items()]
    counts = _count_all(deleted_rows + [entry[-1] for entry in protecting], using=root.db)
    model_count: dict[str, int] = {model._meta.verbose_name_plural: total}
    perms_needed: set[str] = set()
    for related, count in zip(reached, counts[: len(reached)], strict=True):
        if not count or related is model:
            continue
        model_count[related._meta.verbose_name_plural] = count
        model_admin = admin_site._registry.get(related)
        if model_admin is not None and not model_admin.has_delete_permission(request):
            perms_needed.add(related._meta.verbose_name)
    protected = [
        _protection_message(related, field, count)
        for (related, field, _qs), count in zip(protecting, counts[len(reached) :], strict=True)
        if count
    ]
    deleted = [f"{capfirst(model._meta.verbose_name)}: {obj}" for obj in listed]
    if total > len(listed):
        deleted.append(_("… and %(count)d more") % {"count": total - len(listed)})
    return deleted, model_count, perms_needed, protected


def _deletion_paths(
    parents: QuerySet,
    model: type[Model],
    cascaded: list[tuple[type[Model], QuerySet]],
    protecting: list[tuple[type[Model], Field, QuerySet]],
    path: tuple[type[Model], ...],
) -> None:
    """Append the rows each relation of ``model`` would delete (CASCADE, followed further) or that protect it."""
    for relation in get_candidate_relations_to_delete(model._meta):
        field = relation.field
        on_delete = field.remote_field.on_delete
        if on_delete not in (CASCADE, PROTECT):
            continue  # SET_NULL and friends keep the row
        related = relation.related_model
        children = related._base_manager.filter(**{f"{field.attname}__in": parents.values(field.target_field.attname)})
        if on_delete is PROTECT:
            protecting.append((related, field, children))
            continue
        cascaded.append((related, children))
        if related not in path and len(path) < MAX_CASCADE_DEPTH:
            _deletion_paths(children, related, cascaded, protecting, path + (related,))


def _protection_message(related: type[Model], field: Field, count: int) -> str:
    noun = related._meta.verbose_name if count == 1 else related._meta.verbose_name_plural
    return ngettext(
        "%(count)d %(objects)s (%(model)s) refers to it through “%(field)s” and protects it: "
        "delete or reassign it first.",
        "%(count)d %(objects)s (%(model)s) refer to it through “%(field)s” and protect it: "
        "delete or reassign them first.",
        count,
    ) % {"count": count, "objects": noun, "model": related._meta.label, "field": field.verbose_name}


def _count_all(querysets: list[QuerySet], using: str) -> list[int]:
    """Each queryset's row count, all in one SELECT of scalar subqueries."""
    if not querysets:
        return []
    parts, params = [], []
    for qs in querysets:
        sql, qs_params = qs.values("pk").query.get_compiler(using).as_sql()
        parts.append(f"(SELECT COUNT(*) FROM ({sql}) AS counted)")
        params.extend(qs_params)
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        return [int(value) for value in cursor.fetchone()]


class CountedDeleteMixin:
    """A ModelAdmin whose delete confirmation counts what the deletion takes instead of listing every object
    (``deletion_summary``): its cost stays flat however many rows hang off the object."""

    def get_deleted_objects(self, objs: Iterable[Model], request: HttpRequest) -> DeletionSummary:
        return deletion_summary(objs, request, self.admin_site)
