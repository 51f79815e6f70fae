"""REST API for items, revisions and taxonomy (DRF)."""

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items import selectors, services
from annotation.items.api_replysets import KeyDisagreementViewSet, ReplySetViewSet, ReplyViewSet
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
from annotation.items.serializers import (
    BenchmarkSerializer,
    CrisisLevelSerializer,
    DimensionSerializer,
    EmotionSerializer,
    ItemImportJobSerializer,
    ItemImportUploadSerializer,
    ItemSerializer,
    ItemWriteSerializer,
    RevisionSerializer,
    ScenarioDomainSerializer,
    ScenarioSerializer,
    StatusDecideSerializer,
    StatusDecisionSerializer,
)
from annotation.items.services import import_jobs
from core.pagination import IdsFirstPagination, PageSizePagination
from core.permissions import api_permission
from core.routing import app_router

VIEW = api_permission("items.view_item")
VIEW_REVISIONS = api_permission("items.view_itemrevision")
CREATE = api_permission("items.add_item")
REVISE = api_permission("items.change_item", why=gettext_lazy("You do not have permission to revise items."))
DECIDE = api_permission(
    services.DECIDE_STATUS,
    why=gettext_lazy("Only a lead expert or an admin may accept, reject or return an item to draft."),
)


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


class ItemViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Items with their current revision. Create and revise go through the same services as the pages."""

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

    def get_permissions(self) -> list[BasePermission]:
        if self.action == "create":
            return [CREATE()]
        if self.action == "revise":
            return [REVISE()]
        if self.action == "status_decisions" and self.request.method == "POST":
            return [DECIDE()]
        return [VIEW()]

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
        item = services.item_create_with_status(
            benchmark=benchmark,
            uid=data["uid"],
            kind=data["kind"],
            state=_state_from(data, benchmark.slug),
            user=request.user,
            status=data.get("status", Item.Status.DRAFT),
            status_reason=data.get("status_reason", ""),
            message=data.get("message", ""),
        )
        return Response(ItemSerializer(selectors.item_detail(uid=item.uid)).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ItemWriteSerializer, responses={200: ItemSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def revise(self, request: Request, uid: str | None = None) -> Response:
        """Save a new revision; send ``base_revision`` to be told (409) if someone saved in between."""
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
    # pagination_class=None: both answer the whole list, a plain array, as the schema says.
    @action(
        detail=True,
        methods=["get", "post"],
        url_path="status",
        serializer_class=StatusDecideSerializer,
        pagination_class=None,
    )
    def status_decisions(self, request: Request, uid: str | None = None) -> Response:
        """List the item's status decisions, or decide its status (``items.decide_status``)."""
        item = get_object_or_404(Item, uid=uid)
        if request.method == "GET":
            return Response(StatusDecisionSerializer(selectors.item_status_decisions(item=item), many=True).data)
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
    @action(detail=True, methods=["get"], pagination_class=None)
    def revisions(self, request: Request, uid: str | None = None) -> Response:
        item = get_object_or_404(Item, uid=uid)
        return Response(RevisionSerializer(selectors.item_revisions(item=item), many=True).data)


class RevisionViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [VIEW_REVISIONS]
    serializer_class = RevisionSerializer
    queryset = ItemRevision.objects.select_related("item", "author").order_by("id")
    pagination_class = IdsFirstPagination


class ItemImportViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Item imports run by a background worker: upload a file, then poll its ``status_url``.

    The importer sees their own jobs; an admin (``items.view_itemimportjob``) sees every one.
    """

    permission_classes = [CREATE]
    serializer_class = ItemImportJobSerializer
    pagination_class = PageSizePagination
    parser_classes = [MultiPartParser, FormParser]
    queryset = Item.objects.none()

    def get_queryset(self):  # noqa: ANN201
        return selectors.item_import_jobs(user=self.request.user)

    @extend_schema(
        request={"multipart/form-data": ItemImportUploadSerializer},
        responses={
            202: ItemImportJobSerializer,
            400: OpenApiResponse(description="no file, an unknown format or an empty file (nothing stored)"),
        },
        description="Store a JSONL file and queue its import for a background worker; answers 202 at once with the "
        "job (``status_url``, also in the Location header). The worker checks every line, then imports all the "
        "items in one transaction, or none: the job then lists every line's error.",
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        upload = ItemImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        job = import_jobs.item_import_job_start(
            data=data["file"].read(),
            user=request.user,
            filename=data["file"].name or "",
            format=data["format"],
            benchmark=data.get("benchmark") or None,
            dry_run=data["dry_run"],
        )
        body = ItemImportJobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]})


class _TaxonomyViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [VIEW]
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


# The router mounted at /api/ (config/urls.py), as before the apps had routers of their own: its index lists only
# the routes the user may use. The releases' routes are under /api/releases/, on their app's router.
router = app_router(
    "items",
    default="items.view_item",
    needs={"revisions": "items.view_itemrevision", "item-imports": "items.add_item"},
)
router.register("items", ItemViewSet, basename="item")
router.register("revisions", RevisionViewSet, basename="revision")
router.register("item-imports", ItemImportViewSet, basename="item-import")
router.register("benchmarks", BenchmarkViewSet, basename="benchmark")
router.register("dimensions", DimensionViewSet, basename="dimension")
router.register("emotions", EmotionViewSet, basename="emotion")
router.register("scenario-domains", ScenarioDomainViewSet, basename="scenario-domain")
router.register("scenarios", ScenarioViewSet, basename="scenario")
router.register("crisis-levels", CrisisLevelViewSet, basename="crisis-level")
router.register("reply-sets", ReplySetViewSet, basename="reply-set")
router.register("replies", ReplyViewSet, basename="reply")
router.register("key-disagreements", KeyDisagreementViewSet, basename="key-disagreement")
