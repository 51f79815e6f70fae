"""REST API for items, revisions and taxonomy (DRF)."""

from functools import partial

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, DjangoModelPermissions
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items import selectors, services
from annotation.items.interchange import ItemRecord, LineError
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemRevision,
    Scenario,
    ScenarioDomain,
    StatusDecision,
)
from annotation.items.pagination import IdsFirstPaginator, count_cache_key
from annotation.items.serializers import (
    BenchmarkSerializer,
    CrisisLevelSerializer,
    DimensionSerializer,
    EmotionSerializer,
    ItemSerializer,
    ItemWriteSerializer,
    RevisionSerializer,
    ScenarioDomainSerializer,
    ScenarioSerializer,
    StatusDecideSerializer,
    StatusDecisionSerializer,
)
from core.pagination import PageSizePagination


class ItemPermissions(DjangoModelPermissions):
    """Reading needs view_item; creating add_item; revising change_item."""

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }


class CanViewItems(BasePermission):
    def has_permission(self, request: Request, view: object) -> bool:
        return request.user.has_perm("items.view_item")


def _state_from(data: dict, benchmark: str) -> services.ItemState:
    record = ItemRecord(
        line=0,
        uid=data.get("uid", ""),
        benchmark=benchmark,
        dimension=data["dimension"],
        kind=data.get("kind", "mcq"),
        content=data["content"],
        scenario=data.get("scenario") or None,
        emotions=data.get("emotions", []),
        crisis_level=data.get("crisis_level"),
        difficulty=data.get("difficulty", ""),
        metadata=data.get("metadata", {}),
    )
    state = services.TaxonomyIndex().resolve(record)
    if isinstance(state, list):
        raise services.ImportFailed(state)
    return state


FILTER_PARAMS = [OpenApiParameter(name, str, description=f"filter by {name}") for name in selectors.ITEM_FILTERS]


class IdsFirstPagination(PageSizePagination):
    """Page numbers as elsewhere in the API, read ids first with a cached count (annotation.items.pagination)."""

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: object = None) -> list | None:
        paging = (self.page_query_param, self.page_size_query_param)
        params = {k: v for k, v in request.query_params.items() if k not in paging}
        scope = f"api-{getattr(view, 'basename', 'list')}"
        self.django_paginator_class = partial(IdsFirstPaginator, count_key=count_cache_key(scope, params))
        return super().paginate_queryset(queryset, request, view)


class ItemViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Items with their current revision. Create and revise go through the same services as the pages."""

    permission_classes = [ItemPermissions]
    lookup_field = "uid"
    queryset = Item.objects.none()
    pagination_class = IdsFirstPagination

    def get_queryset(self):  # noqa: ANN201
        return (
            selectors.item_list(filters=self.request.query_params)
            .select_related("created_by", "updated_by")
            .prefetch_related("emotions")
        )

    def get_serializer_class(self):  # noqa: ANN201
        return ItemWriteSerializer if self.action in {"create", "revise"} else ItemSerializer

    @extend_schema(parameters=FILTER_PARAMS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=ItemWriteSerializer, responses={201: ItemSerializer})
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        write = ItemWriteSerializer(data=request.data)
        write.is_valid(raise_exception=True)
        data = write.validated_data
        missing = [name for name in ("uid", "benchmark", "kind") if not data.get(name)]
        if missing:
            return Response(
                {name: [_("This field is required.")] for name in missing}, status=status.HTTP_400_BAD_REQUEST
            )
        benchmark = Benchmark.objects.filter(slug=data["benchmark"]).first()
        if benchmark is None:
            message = _("unknown benchmark %(benchmark)s") % {"benchmark": repr(data["benchmark"])}
            raise services.ImportFailed([LineError(0, "benchmark", message)])
        wanted = data.get("status", Item.Status.DRAFT)
        reason = data.get("status_reason", "").strip()
        if wanted != Item.Status.DRAFT and not services.user_may_decide_status(request.user):
            return Response(
                {
                    "status": [
                        _(
                            "Only a lead expert or an admin may give a new item the status %(status)s; leave the "
                            "field out: new items start as draft and are accepted or rejected through screening."
                        )
                        % {"status": wanted}
                    ]
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        if wanted != Item.Status.DRAFT and not reason:
            return Response(
                {"status_reason": [_("Give the reason for the status %(status)s.") % {"status": wanted}]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        with transaction.atomic():
            item = services.item_create(
                benchmark=benchmark,
                uid=data["uid"],
                kind=data["kind"],
                state=_state_from(data, benchmark.slug),
                user=request.user,
                message=data.get("message", ""),
            )
            if wanted != Item.Status.DRAFT:
                services.item_status_decide(
                    item=item,
                    status=wanted,
                    user=request.user,
                    reason=reason,
                    source=StatusDecision.Source.LEAD_DECISION,
                )
        return Response(ItemSerializer(selectors.item_detail(uid=item.uid)).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ItemWriteSerializer, responses={200: ItemSerializer, 409: None})
    @action(detail=True, methods=["post"], permission_classes=[ItemPermissions])
    def revise(self, request: Request, uid: str | None = None) -> Response:
        """Save a new revision; send ``base_revision`` to be told (409) if someone saved in between."""
        if not request.user.has_perm("items.change_item"):
            return Response(
                {"detail": _("You do not have permission to revise items.")}, status=status.HTTP_403_FORBIDDEN
            )
        item = get_object_or_404(Item.objects.select_related("benchmark"), uid=uid)
        write = ItemWriteSerializer(data=request.data)
        write.is_valid(raise_exception=True)
        data = write.validated_data
        if data.get("status", item.status) != item.status:
            message = _(
                "Revising does not change the status (the item is %(status)s); a lead expert or an admin decides "
                "it with POST /api/items/%(uid)s/status/."
            ) % {"status": item.status, "uid": item.uid}
            return Response({"status": [message]}, status=status.HTTP_400_BAD_REQUEST)
        state = _state_from({**data, "kind": item.kind}, item.benchmark.slug)
        if "metadata" not in data:
            state.metadata = item.metadata
        services.item_revise(
            item=item,
            state=state,
            user=request.user,
            message=data.get("message", ""),
            base_revision=data.get("base_revision"),
        )
        return Response(ItemSerializer(selectors.item_detail(uid=item.uid)).data)

    @extend_schema(
        methods=["GET"], responses=StatusDecisionSerializer(many=True), description="The item's status decisions."
    )
    @extend_schema(
        methods=["POST"],
        request=StatusDecideSerializer,
        responses={201: StatusDecisionSerializer, 403: None},
        description="Accept, reject or return the item to draft, with a reason (lead experts and admins).",
    )
    @action(detail=True, methods=["get", "post"], url_path="status", serializer_class=StatusDecideSerializer)
    def status_decisions(self, request: Request, uid: str | None = None) -> Response:
        """List the item's status decisions, or decide its status (``items.decide_status``)."""
        item = get_object_or_404(Item, uid=uid)
        if request.method == "GET":
            return Response(StatusDecisionSerializer(selectors.item_status_decisions(item=item), many=True).data)
        if not request.user.has_perm(services.DECIDE_STATUS):
            return Response(
                {"detail": _("Only a lead expert or an admin may accept, reject or return an item to draft.")},
                status=status.HTTP_403_FORBIDDEN,
            )
        write = StatusDecideSerializer(data=request.data)
        write.is_valid(raise_exception=True)
        decision = services.item_status_decide(
            item=item,
            status=write.validated_data["status"],
            user=request.user,
            reason=write.validated_data["reason"],
            source=StatusDecision.Source.LEAD_DECISION,
        )
        return Response(StatusDecisionSerializer(decision).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=RevisionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def revisions(self, request: Request, uid: str | None = None) -> Response:
        item = get_object_or_404(Item, uid=uid)
        return Response(RevisionSerializer(selectors.item_revisions(item=item), many=True).data)


class RevisionViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [ItemPermissions]
    serializer_class = RevisionSerializer
    queryset = ItemRevision.objects.select_related("item", "author").order_by("id")
    pagination_class = IdsFirstPagination


class _TaxonomyViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [CanViewItems]
    pagination_class = None


class BenchmarkViewSet(_TaxonomyViewSet):
    serializer_class = BenchmarkSerializer
    queryset = Benchmark.objects.all()
    lookup_field = "slug"


class DimensionViewSet(_TaxonomyViewSet):
    serializer_class = DimensionSerializer
    queryset = Dimension.objects.select_related("benchmark", "parent").order_by("benchmark__slug", "position")


class EmotionViewSet(_TaxonomyViewSet):
    serializer_class = EmotionSerializer
    queryset = EmotionCategory.objects.all()
    lookup_field = "code"


class ScenarioDomainViewSet(_TaxonomyViewSet):
    serializer_class = ScenarioDomainSerializer
    queryset = ScenarioDomain.objects.all()
    lookup_field = "code"


class ScenarioViewSet(_TaxonomyViewSet):
    serializer_class = ScenarioSerializer
    queryset = Scenario.objects.select_related("domain")
    lookup_field = "code"


class CrisisLevelViewSet(_TaxonomyViewSet):
    serializer_class = CrisisLevelSerializer
    queryset = CrisisLevel.objects.all()
    lookup_field = "level"
