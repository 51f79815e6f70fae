"""The API's routers: one per app under /api/<app>/, whose index lists only the routes the user may use."""

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


def app_router(app: str, *, needs: dict[str, str] | None = None, default: str | None = None) -> routers.DefaultRouter:
    """Return the router of ``app``'s API (mounted at /api/<app>/), its index named "<app>-api-root"."""
    router = routers.DefaultRouter()
    # No ".json" twins of every route: the API answers JSON, and custom actions did not accept a format suffix.
    router.include_format_suffixes = False
    router.root_view_name = f"{app}-api-root"
    router.APIRootView = type(
        f"{app.title()}RootView",
        (PermittedRootView,),
        {"needs": needs or {}, "default": default, "__doc__": f"The {app} API's index: the routes you may use."},
    )
    return router
