"""The API's page numbers: `?page=N&page_size=M`, with the page size bounded."""

from rest_framework.pagination import PageNumberPagination


class PageSizePagination(PageNumberPagination):
    """50 rows a page unless `page_size` asks for another number, at most 500."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
