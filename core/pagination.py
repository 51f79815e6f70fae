"""The API's page numbers (`?page=N&page_size=M`, with the page size bounded), and pagination of long lists that
costs the same on the first, the last and any deep page.

Django's ``Paginator`` counts every matching row on each request and reads a deep page with ``OFFSET``, joining
every skipped row. ``IdsFirstPaginator`` keeps the count in the cache for a short while (on PostgreSQL, a result
of many thousand rows takes the planner's estimate instead), reads only the primary keys of the page (from the
end of the ordering when the page is nearer the end, so the last page costs what the first does), then loads just
those rows with their joins and prefetches.
"""

import hashlib
import json
from collections.abc import Mapping
from functools import partial

from django.core.cache import cache
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db import connection
from django.db.models import QuerySet
from django.utils.functional import cached_property
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

COUNT_TTL_SECONDS = 30
ESTIMATE_ABOVE = 5000


def count_cache_key(scope: str, filters: Mapping[str, str]) -> str:
    """Return the cache key of the row count of one filtered list."""
    digest = hashlib.sha256(repr(sorted((k, str(v)) for k, v in filters.items())).encode()).hexdigest()[:32]
    return f"count:{scope}:{digest}"


class IdsFirstPaginator(Paginator):
    """A ``Paginator`` over an ordered queryset with a cached count and an ids-first page read.

    ``count_key`` keeps the count in the cache under that key; ``estimate=False`` always counts exactly (for lists
    whose count is cheap and must be exact, such as one expert's own labels).
    """

    def __init__(
        self,
        object_list: QuerySet,
        per_page: int,
        orphans: int = 0,
        allow_empty_first_page: bool = True,
        *,
        count_key: str | None = None,
        known_count: int | None = None,
        estimate: bool = True,
    ) -> None:
        super().__init__(object_list, per_page, orphans=orphans, allow_empty_first_page=allow_empty_first_page)
        self.count_key = count_key
        self.estimate = estimate
        if known_count is not None:
            self.count = known_count

    estimated = False

    @cached_property
    def count(self) -> int:
        """Return the number of rows, from the cache when it was counted in the last seconds.

        On PostgreSQL a result the planner expects to hold more than ``ESTIMATE_ABOVE`` rows is not counted (that
        reads every matching row); the planner's estimate is shown instead, marked as such.
        """
        if self.count_key is None:
            count, self.estimated = self._count()
            return count
        count, self.estimated = cache.get_or_set(self.count_key, self._count, COUNT_TTL_SECONDS)
        return count

    def _count(self) -> tuple[int, bool]:
        if self.estimate and connection.vendor == "postgresql":
            plan = json.loads(self.object_list.order_by().values("pk").explain(format="json"))
            rows = int(plan[0]["Plan"]["Plan Rows"])
            if rows > ESTIMATE_ABOVE:
                return rows, True
        return self.object_list.count(), False

    def page(self, number: int | str) -> Page:
        if self.count and self.estimated:  # counting sets ``estimated``
            if self._in_first_half(number):
                return self._page_of_estimate(number)
            self._count_exactly()
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = min(bottom + self.per_page, self.count)
        ids = self.object_list.values_list("pk", flat=True)
        if bottom > self.count - top:
            # Nearer the end: read the ids backwards, so the last page skips nothing.
            pks = list(ids.reverse()[self.count - top : self.count - bottom])[::-1]
        else:
            pks = list(ids[bottom:top])
        return self._page_of(pks, number)

    def _page_of(self, pks: list, number: int) -> Page:
        """Return page ``number`` holding the rows of ``pks``, loaded in one query with their joins, in that order."""
        rows = {obj.pk: obj for obj in self.object_list.filter(pk__in=pks)} if pks else {}
        return self._get_page([rows[pk] for pk in pks if pk in rows], number, self)

    def get_page(self, number: int | str | None) -> Page:
        """As ``Paginator.get_page`` (a page past the end shows the last one), also when only reading the page
        showed that an estimate reached past the last row: the count is then made exact and the last page read."""
        try:
            return super().get_page(number)
        except EmptyPage:
            if self.estimated:
                self._count_exactly()
            return self.page(self.num_pages)

    def _in_first_half(self, number: int | str) -> bool:
        """Whether page ``number`` starts in the first half of the estimate (an unreadable number counts as in)."""
        try:
            return (int(number) - 1) * self.per_page <= self.count // 2
        except (TypeError, ValueError):
            return True

    def _count_exactly(self) -> None:
        """Replace the estimate with the exact count (kept in the cache under the list's key, if it has one).

        A page in the second half is read from the end, which needs the exact count; counting costs about what
        reading forwards to that depth would, once per ``COUNT_TTL_SECONDS`` for a list with a key.
        """
        self.count, self.estimated = self.object_list.count(), False
        self.__dict__.pop("num_pages", None)
        if self.count_key is not None:
            cache.set(self.count_key, (self.count, False), COUNT_TTL_SECONDS)

    def _page_of_estimate(self, number: int | str) -> Page:
        """Read a page forwards when the count is the planner's estimate, which can be short or long.

        Reading from the end would then place the last rows at the estimate's last page and skip (or repeat) the
        rows between, so a reader following ``next`` would miss some. Forwards (pages in the first half of the
        estimate; deeper ones are counted exactly first), one id more than the page tells whether another page
        follows: the count is raised to show it, and on the true last page it becomes exact. A page past the last
        row is empty (404), however far the estimate reached.
        """
        try:
            number = int(number)
        except (TypeError, ValueError) as exc:
            raise PageNotAnInteger(self.error_messages["invalid_page"]) from exc
        if number < 1:
            raise EmptyPage(self.error_messages["min_page"])
        bottom = (number - 1) * self.per_page
        pks = list(self.object_list.values_list("pk", flat=True)[bottom : bottom + self.per_page + 1])
        more = len(pks) > self.per_page
        pks = pks[: self.per_page]
        if not pks and number > 1:
            raise EmptyPage(self.error_messages["no_results"])
        self.count = max(self.count, bottom + self.per_page + 1) if more else bottom + len(pks)
        self.__dict__.pop("num_pages", None)  # computed from the count, which has just been corrected
        return self._page_of(pks, number)


class PageSizePagination(PageNumberPagination):
    """50 rows a page unless `page_size` asks for another number, at most 500."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class IdsFirstPagination(PageSizePagination):
    """The API's page numbers (``core.pagination``) over ``IdsFirstPaginator``: ids first, then the page's rows.

    The count is kept in the cache per list and filters (``count_scope``); ``cached_count = False`` counts exactly on
    every request instead, for a list that differs per user.
    """

    cached_count = True

    def count_scope(self, request: Request, view: object) -> str:
        """Return the part of the count's cache key that names the list (its filters are added)."""
        return f"api-{getattr(view, 'basename', 'list')}"

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: object = None) -> list | None:
        if self.cached_count:
            paging = (self.page_query_param, self.page_size_query_param)
            params = {k: v for k, v in request.query_params.items() if k not in paging}
            key = count_cache_key(self.count_scope(request, view), params)
            self.django_paginator_class = partial(IdsFirstPaginator, count_key=key)
        else:
            self.django_paginator_class = partial(IdsFirstPaginator, estimate=False)
        return super().paginate_queryset(queryset, request, view)
