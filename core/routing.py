"""The API's routers: one per app under /api/<app>/, whose index lists only the routes the user may use."""

from django.db import models
from rest_framework import routers
from rest_framework.request import Request
from rest_framework.response import Response


class PermittedRootView(routers.APIRootView):
    """An API index listing a route only to those holding the permission it needs (``needs``; ``default`` for
    routes it does not name, None meaning any signed-in user). Every route still checks for itself."""

    needs: dict[str, str] = {}
    default: str | None = None

    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        self.api_root_dict = {
            prefix: name
            for prefix, name in self.api_root_dict.items()
            if (needed := self.needs.get(prefix, self.default)) is None or request.user.has_perm(needed)
        }
        return super().get(request, *args, **kwargs)


class IntegerLookupRouter(routers.DefaultRouter):
    """A router whose detail routes take only digits where the lookup is an integer field (``pk``, ``id``, a
    ``PositiveSmallIntegerField``...), so ``/api/llm/runs/abc/progress/`` answers 404 from the resolver instead of
    reaching a view that would turn ``"abc"`` into a query. A viewset's own ``lookup_value_regex`` wins."""

    def get_lookup_regex(self, viewset: type, lookup_prefix: str = "") -> str:
        if getattr(viewset, "lookup_value_regex", None) is None and _integer_lookup(viewset):
            lookup_field = getattr(viewset, "lookup_field", "pk")
            lookup_url_kwarg = getattr(viewset, "lookup_url_kwarg", None) or lookup_field
            return f"(?P<{lookup_prefix}{lookup_url_kwarg}>[0-9]+)"
        return super().get_lookup_regex(viewset, lookup_prefix)


def _integer_lookup(viewset: type) -> bool:
    """Say whether ``viewset`` looks its objects up by an integer field of its model."""
    lookup_field = getattr(viewset, "lookup_field", "pk")
    queryset = getattr(viewset, "queryset", None)
    if queryset is None:
        return lookup_field in ("pk", "id")
    meta = queryset.model._meta
    field = meta.pk if lookup_field == "pk" else meta.get_field(lookup_field)
    while isinstance(field, models.ForeignKey | models.OneToOneField):
        field = field.target_field
    return isinstance(field, models.IntegerField | models.AutoField)


def app_router(app: str, *, needs: dict[str, str] | None = None, default: str | None = None) -> IntegerLookupRouter:
    """Return the router of ``app``'s API (mounted at /api/<app>/), its index named "<app>-api-root"."""
    router = IntegerLookupRouter()
    # No ".json" twins of every route: the API answers JSON, and custom actions did not accept a format suffix.
    router.include_format_suffixes = False
    router.root_view_name = f"{app}-api-root"
    router.APIRootView = type(
        f"{app.title()}RootView",
        (PermittedRootView,),
        {"needs": needs or {}, "default": default, "__doc__": f"The {app} API's index: the routes you may use."},
    )
    return router
