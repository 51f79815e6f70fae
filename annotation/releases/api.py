"""REST API for releases: list, create, edit items, validate, freeze, download, compare."""

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items.models import Benchmark
from annotation.releases import comparisons, drafts, selectors
from annotation.releases import services as releases
from annotation.releases.export import ZIP_CONTENT_TYPE
from annotation.releases.models import Release
from annotation.releases.serializers import (
    ReleaseCreateSerializer,
    ReleaseFreezeSerializer,
    ReleaseItemsSerializer,
    ReleaseSerializer,
)
from core.inputs import whole_number
from core.permissions import api_permission
from core.routing import app_router

# Anyone who reads items reads releases; building and freezing needs manage_release.
READ = api_permission("items.view_item")
MANAGE = api_permission("releases.manage_release")


class ReleaseViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ReleaseSerializer
    queryset = Release.objects.select_related("benchmark", "created_by", "frozen_by").order_by("id")

    def get_permissions(self) -> list[BasePermission]:
        return [READ()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [MANAGE()]

    @extend_schema(request=ReleaseCreateSerializer, responses={201: ReleaseSerializer})
    def create(self, request: Request) -> Response:
        data = ReleaseCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        benchmark = Benchmark.objects.filter(slug=values.pop("benchmark")).first()
        if benchmark is None:
            return Response({"benchmark": ["Unknown benchmark."]}, status=status.HTTP_400_BAD_REQUEST)
        release = releases.release_create(benchmark=benchmark, user=request.user, **values)
        return Response(ReleaseSerializer(release).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ReleaseItemsSerializer, responses=ReleaseSerializer)
    @action(detail=True, methods=["post"])
    def items(self, request: Request, pk: str | None = None) -> Response:
        """Add or remove items of a draft release by uid."""
        data = ReleaseItemsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        release = releases.release_items_change(release=self.get_object(), user=request.user, **data.validated_data)
        return Response(ReleaseSerializer(release).data)

    @extend_schema(
        responses={
            200: OpenApiResponse(description="validation checklist"),
            202: OpenApiResponse(description="a large draft being checked by a worker: the previous checklist, if any"),
        }
    )
    @action(detail=True, methods=["get"])
    def validation(self, request: Request, pk: str | None = None) -> Response:
        release = self.get_object()
        if release.is_frozen:
            return Response(release.validation)
        draft = drafts.draft_checks(release)
        body = {
            "failed": draft.failed,
            "checks": draft.checks,
            "computed_at": draft.computed_at,
            "current": draft.current,
        }
        # A large draft is checked by a worker: 202 with the previous result (or none) until the current one is kept.
        return Response(body, status=200 if draft.current else 202)

    @extend_schema(request=ReleaseFreezeSerializer, responses=ReleaseSerializer)
    @action(detail=True, methods=["post"])
    def freeze(self, request: Request, pk: str | None = None) -> Response:
        data = ReleaseFreezeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        release = releases.release_freeze(release=self.get_object(), user=request.user, **data.validated_data)
        return Response(ReleaseSerializer(release).data)

    @extend_schema(responses={(200, ZIP_CONTENT_TYPE): OpenApiTypes.BINARY, 409: None})
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> HttpResponse:
        release = self.get_object()
        try:
            content, content_type, filename = selectors.release_export_download(release=release)
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=status.HTTP_409_CONFLICT)
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    @extend_schema(
        parameters=[
            OpenApiParameter("against", int, description="id of the older release"),
            OpenApiParameter("page", int, description="page of the added, removed and revised lists (100 each)"),
        ],
        responses={
            200: OpenApiResponse(description="counts, one page of added, removed and revised, unchanged"),
            202: OpenApiResponse(description="large releases being compared by a worker: the previous comparison"),
        },
    )
    @action(detail=True, methods=["get"])
    def compare(self, request: Request, pk: str | None = None) -> Response:
        new = self.get_object()
        against = request.query_params.get("against")
        if not against:
            return Response({"against": [_("Give the id of the release to compare with.")]}, status=400)
        old_id = whole_number(against)
        if old_id is None:
            return Response({"against": [_("A release id is a whole number; got “%s”.") % against[:40]]}, status=400)
        old = Release.objects.filter(pk=old_id).first()
        if old is None:
            return Response({"against": [_("No release has id %(id)s.") % {"id": old_id}]}, status=400)
        page = whole_number(request.query_params.get("page", "1")) or 1
        try:
            comparison = comparisons.comparison_page(old=old, new=new, page=page)
        except ValidationError as exc:
            return Response({"against": exc.messages}, status=400)
        # Large releases are compared by a worker: 202 with the previous comparison (or none) until it is stored.
        return Response(comparison.as_dict(), status=200 if comparison.current else 202)


# The router mounted at /api/releases/ (config/urls.py), the releases' list at its root: so it has no index page.
router = app_router("releases")
router.include_root_view = False
router.register("", ReleaseViewSet, basename="release")
