"""The API's description of a worker's queue: the "my assignments" list, filtered by round or set and by state."""

from collections.abc import Callable

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view


def assignments_list_schema(*, owner: str, owner_description: str, done: str) -> Callable[[type], type]:
    """Return the class decorator that describes a "my assignments" viewset's list: only the round or set named by
    the query parameter ``owner``, and a ``state`` (pending, finished as ``done``, or put aside)."""
    parameters = [
        OpenApiParameter(owner, int, description=owner_description),
        OpenApiParameter("state", str, enum=["pending", done, "skipped"], description="filter by state"),
    ]
    return extend_schema_view(list=extend_schema(parameters=parameters))
