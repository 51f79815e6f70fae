"""REST API for pairwise labelling: response import and comparison sets for builders, a blind queue for experts.

Builders (labelling.manage_comparisons) import responses and build and close sets; they see model names. Experts
(labelling.label_comparisons) get their next comparison as two anonymised texts left and right, label, change a
label while the set is open, skip, and list their own labels. Nothing an expert can reach names a model.
"""

import json

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items.services import ImportFailed
from annotation.labelling import attention, exports, selectors, services
from annotation.labelling.experts import expert_statistics
from annotation.labelling.label_studio import exporting as label_studio_exporting
from annotation.labelling.label_studio import importing as label_studio_importing
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment, LabelChange
from annotation.labelling.serializers import (
    AttentionChecksSerializer,
    BlindComparisonSerializer,
    ComparisonSetCreateSerializer,
    ComparisonSetDetailSerializer,
    ComparisonSetSerializer,
    ExpertStatisticsSerializer,
    ImportResultSerializer,
    LabelAssignmentSerializer,
    LabellingProgressSerializer,
    LabelSerializer,
    LabelWriteSerializer,
    NextComparisonSerializer,
    ResponseImportSerializer,
)
from annotation.labelling.views import BUILDERS, DATA_WHY, LABELLERS
from annotation.queue.api import assignments_list_schema
from core.inputs import whole_number
from core.pagination import IdsFirstPagination
from core.permissions import api_permission
from core.routing import app_router
from core.rowfiles import FORMATS, TABLE_RESPONSES, pair_headers, table_response, unknown_format_response

MANAGE = api_permission("labelling.manage_comparisons", why=BUILDERS)
LABEL = api_permission("labelling.label_comparisons", why=LABELLERS)
VIEW = api_permission("items.view_item")
DATA = api_permission("labelling.manage_comparisons", why=DATA_WHY)
FORMAT_PATH = r"(?P<fmt>[a-z]+)"

VERDICT_EXAMPLES = [
    OpenApiExample("Left is better by +++", value={"winner": "left", "margin": 3, "rationale": "Names the feeling."}),
    OpenApiExample("A tie", value={"winner": "tie"}),
]


class ResponseViewSet(viewsets.GenericViewSet):
    """Model responses: import, as on the import page (all or nothing, errors by line and field)."""

    permission_classes = [MANAGE]
    serializer_class = ResponseImportSerializer

    @extend_schema(
        request={"multipart/form-data": ResponseImportSerializer, "application/json": ResponseImportSerializer},
        responses={201: ImportResultSerializer},
        examples=[
            OpenApiExample(
                "Rows as JSON",
                value={"rows": [{"item": "facet-em-001", "language": "en", "model": "model-x", "text": "..."}]},
                request_only=True,
            ),
            OpenApiExample("Result", value={"created": 1, "unchanged": 0}, response_only=True),
        ],
    )
    @action(detail=False, methods=["post"], url_path="import", url_name="import")
    def import_responses(self, request: Request) -> Response:
        """Import responses from a JSONL file (``file``) or a list of rows (``rows``)."""
        payload = ResponseImportSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        upload = payload.validated_data.get("file")
        if upload is not None:
            data = upload.read()
        else:
            rows = payload.validated_data["rows"]
            data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        result = services.responses_import(data=data, user=request.user)
        return Response(ImportResultSerializer(result).data, status=status.HTTP_201_CREATED)


def _language(request: Request) -> str | None:
    language = request.query_params.get("language") or None
    if language not in (None, "en", "zh"):
        raise ValidationError({"language": _("Expected en or zh.")})
    return language


def _unknown_format() -> Response:
    return unknown_format_response(FORMATS)


class ComparisonSetViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Comparison sets: everyone who may read items lists them; builders create and close; experts label in them."""

    queryset = ComparisonSet.objects.all()
    lookup_value_regex = r"\d+"

    def get_queryset(self):  # noqa: ANN201
        return selectors.comparison_sets(user=self.request.user)

    def get_permissions(self) -> list[BasePermission]:
        if self.action in {"create", "close"}:
            return [MANAGE()]
        if self.action in {
            "labels",
            "pairs",
            "label_studio_tasks",
            "label_studio_config",
            "label_studio_import",
            "experts",
            "attention_checks",
        }:
            return [DATA()]
        if self.action in {"next", "progress"}:
            return [LABEL()]
        return [VIEW()]

    def get_serializer_class(self):  # noqa: ANN201
        return ComparisonSetDetailSerializer if self.action == "retrieve" else ComparisonSetSerializer

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """A set with each assigned expert's progress (assigned, labelled, skipped, changed)."""
        comparison_set = self.get_object()
        comparison_set.progress = selectors.set_progress(comparison_set=comparison_set)
        return Response(ComparisonSetDetailSerializer(comparison_set, context={"request": request}).data)

    @extend_schema(
        request=ComparisonSetCreateSerializer,
        responses={201: ComparisonSetSerializer},
        examples=[
            OpenApiExample(
                "Three experts, 5 comparisons per stratum",
                value={
                    "name": "Pilot set",
                    "benchmark": "facet",
                    "experts": ["expert1", "expert2", "expert3"],
                    "per_stratum": 5,
                    "experts_per_comparison": 2,
                    "seed": 7,
                    "languages": ["en", "zh"],
                },
                request_only=True,
            )
        ],
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Build a set by stratified sampling and assign it to experts (the service of the page)."""
        payload = ComparisonSetCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        built = services.comparison_set_build(
            name=data["name"],
            benchmark=data["benchmark"],
            experts=data["experts"],
            user=request.user,
            seed=data["seed"],
            per_stratum=data.get("per_stratum"),
            experts_per_comparison=data.get("experts_per_comparison"),
            dimensions=data.get("dimensions"),
            languages=tuple(data["languages"]),
            description=data["description"],
        )
        comparison_set = selectors.comparison_sets(user=request.user).get(pk=built.pk)
        data = ComparisonSetSerializer(comparison_set, context={"request": request}).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=ComparisonSetSerializer)
    @action(detail=True, methods=["post"])
    def close(self, request: Request, pk: str | None = None) -> Response:
        """Close the set: its labels become final; experts can no longer label, change or skip in it."""
        services.comparison_set_close(comparison_set=get_object_or_404(ComparisonSet, pk=pk), user=request.user)
        return Response(ComparisonSetSerializer(self.get_queryset().get(pk=pk), context={"request": request}).data)

    @extend_schema(
        responses=NextComparisonSerializer,
        examples=[
            OpenApiExample(
                "The next comparison, blind",
                value={
                    "done": False,
                    "progress": {"labelled": 3, "assigned": 40, "skipped": 1},
                    "comparison": {
                        "assignment": 118,
                        "comparison_set": 2,
                        "item": "facet-em-001",
                        "language": "en",
                        "dimension": "emotion_matching",
                        "dimension_name": "Emotion matching",
                        "dimension_definition": "...",
                        "context": "",
                        "prompt": "My dog died last week.",
                        "left": "I'm so sorry...",
                        "right": "That must be hard...",
                        "skipped": False,
                        "label": None,
                    },
                },
                response_only=True,
            )
        ],
    )
    @action(detail=True, methods=["get"])
    def next(self, request: Request, pk: str | None = None) -> Response:
        """My next comparison in the set (skipped ones come back last); opening it starts its timer."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        nxt = selectors.label_next(comparison_set=comparison_set, expert=request.user)
        comparison = None
        if nxt is not None:
            assignment = selectors.label_assignment(comparison_set=comparison_set, pk=nxt.pk)
            services.assignment_mark_viewed(assignment=assignment)
            comparison = selectors.blind_comparison(assignment=assignment)
        progress = selectors.expert_progress(comparison_set=comparison_set, expert=request.user)
        return Response(
            NextComparisonSerializer({"done": nxt is None, "progress": progress, "comparison": comparison}).data
        )

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: None},
    )
    @action(detail=True, methods=["get"], url_path=f"labels/{FORMAT_PATH}", url_name="labels")
    def labels(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """The closed set's labels as CSV, JSONL or Parquet, one row per expert label (409 while it is open)."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        language = _language(request)
        if fmt not in FORMATS:
            return _unknown_format()
        rows = exports.label_rows(comparison_set=comparison_set, language=language)
        return table_response(rows, exports.LABEL_COLUMNS, fmt, filename=f"labels-set-{comparison_set.pk}")

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: None},
    )
    @action(detail=True, methods=["get"], url_path=f"pairs/{FORMAT_PATH}", url_name="pairs")
    def pairs(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """The closed set's preference pairs; headers X-Preference-Pairs and X-Left-Out-* count what was left out."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        language = _language(request)
        if fmt not in FORMATS:
            return _unknown_format()
        counts = exports.label_preference_counts(comparison_set=comparison_set, language=language)
        rows = exports.label_preference_rows(comparison_set=comparison_set, language=language)
        filename = f"preference-pairs-set-{comparison_set.pk}"
        return table_response(rows, exports.PAIR_COLUMNS, fmt, filename=filename, headers=pair_headers(counts))

    @extend_schema(
        responses={
            (200, "application/json"): {
                "type": "array",
                "description": "Label Studio tasks: each with its data (the comparison, both texts anonymised).",
                "items": {"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]},
            }
        }
    )
    @action(detail=True, methods=["get"], url_path="label-studio/tasks", url_name="label-studio-tasks")
    def label_studio_tasks(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The set as Label Studio tasks: one per comparison, texts anonymised, the order shown in ``shown_order``."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        chunks = label_studio_exporting.task_chunks(comparison_set=comparison_set)
        return StreamingHttpResponse(chunks, content_type="application/json; charset=utf-8")

    @extend_schema(responses={(200, "application/xml"): str})
    @action(detail=True, methods=["get"], url_path="label-studio/config", url_name="label-studio-config")
    def label_studio_config(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The Label Studio labelling config for the tasks: a Pairwise control and a margin choice."""
        get_object_or_404(ComparisonSet, pk=pk)
        return HttpResponse(label_studio_exporting.set_config(), content_type="application/xml; charset=utf-8")

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}, "mapping": {"type": "string"}},
            },
            "application/json": {
                "type": "object",
                "properties": {"tasks": {"type": "array", "items": {"type": "object"}}, "mapping": {"type": "object"}},
            },
        },
        responses={201: dict, 400: None, 409: None},
    )
    @action(detail=True, methods=["post"], url_path="label-studio/import", url_name="label-studio-import")
    def label_studio_import(self, request: Request, pk: str | None = None) -> Response:
        """Import a Label Studio JSON export's pairwise annotations as expert labels of the open set, all or nothing.

        Send the export as a file (``file``, multipart, with an optional ``mapping`` text of lines ``id-or-email =
        account``) or as JSON ``{"tasks": [...], "mapping": {"id-or-email": "account"}}``, where an error's line is
        the task's place in the list.
        """
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        upload = request.FILES.get("file")
        try:
            if upload is not None:
                data = upload.read()
                mapping = label_studio_importing.mapping_parse(str(request.data.get("mapping") or ""))
            else:
                # A JSON body that is no object (a bare list) answered 500 (Schemathesis): refused as any other.
                body = request.data if isinstance(request.data, dict) else {}
                tasks, mapping = body.get("tasks"), body.get("mapping") or {}
                if not isinstance(tasks, list) or not isinstance(mapping, dict):
                    raise ValueError(_("Send the export as a file, or as JSON with a list of tasks and a mapping."))
                # One task a line, so that an error's line is the task's place in the list.
                data = "".join(json.dumps(task, ensure_ascii=False) + "\n" for task in tasks).encode("utf-8")
                mapping = {str(key): str(value) for key, value in mapping.items()}
        except ValueError as exc:
            return Response({"detail": str(exc), "code": "invalid"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            result = label_studio_importing.label_studio_import(
                comparison_set=comparison_set, data=data, user=request.user, mapping=mapping
            )
        except ImportFailed as exc:
            return Response(exc.payload(), status=status.HTTP_400_BAD_REQUEST)
        return Response(result, status=status.HTTP_201_CREATED)

    @extend_schema(responses=ExpertStatisticsSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def experts(self, request: Request, pk: str | None = None) -> Response:
        """Each expert's progress, median time per label, agreement with the other experts and accuracy on the
        attention checks (for the set's builder)."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        rows = [row.as_dict() for row in expert_statistics(comparison_set=comparison_set)]
        return Response(ExpertStatisticsSerializer(rows, many=True).data)

    @extend_schema(request=AttentionChecksSerializer, responses={200: dict})
    @action(detail=True, methods=["post"], url_path="attention-checks", url_name="attention-checks")
    def attention_checks(self, request: Request, pk: str | None = None) -> Response:
        """Mark comparisons of the open set as attention checks with their known answer (A, B or tie), or clear
        them (an empty answer). Experts are not told which comparisons are checks."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        body = AttentionChecksSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        answers = {row["comparison"]: row["answer"] for row in body.validated_data["checks"]}
        try:
            changed = attention.attention_checks_set(comparison_set=comparison_set, answers=answers, user=request.user)
        except DjangoValidationError as exc:
            raise ValidationError({"checks": exc.messages}) from exc
        return Response({"changed": changed, "checks": len(selectors.attention_checks(comparison_set=comparison_set))})

    @extend_schema(responses=LabellingProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """My progress in the set: labelled, assigned, and skipped but not yet labelled."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        progress = selectors.expert_progress(comparison_set=comparison_set, expert=request.user)
        return Response(LabellingProgressSerializer(progress).data)


@assignments_list_schema(owner="set", owner_description="only this comparison set", done="labelled")
class AssignmentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """My assignments: list (pending, labelled, skipped), open one blind, label it, change my label, skip it."""

    permission_classes = [LABEL]
    lookup_value_regex = r"\d+"
    queryset = LabelAssignment.objects.none()
    serializer_class = LabelAssignmentSerializer

    def get_queryset(self):  # noqa: ANN201
        params = self.request.query_params
        comparison_set = params.get("set")
        return selectors.expert_assignments(
            expert=self.request.user,
            comparison_set=whole_number(comparison_set),
            state=params.get("state", ""),
        )

    def _mine(self, pk: str | None) -> LabelAssignment:
        mine = LabelAssignment.objects.select_related("comparison__comparison_set")
        assignment = get_object_or_404(mine, pk=pk, expert=self.request.user)
        return selectors.label_assignment(comparison_set=assignment.comparison.comparison_set, pk=assignment.pk)

    @extend_schema(responses=BlindComparisonSerializer)
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """One of my comparisons, blind, with my verdict if I gave one; opening it starts its timer."""
        assignment = self._mine(kwargs.get("pk"))
        services.assignment_mark_viewed(assignment=assignment)
        return Response(BlindComparisonSerializer(selectors.blind_comparison(assignment=assignment)).data)

    @extend_schema(
        methods=["POST"],
        request=LabelWriteSerializer,
        responses={201: LabelSerializer, 409: None},
        examples=VERDICT_EXAMPLES,
        description="Submit my verdict (as seen on screen). Sending the same verdict again returns it; a different "
        "one is a 409 conflict: change a label with PUT.",
    )
    @extend_schema(
        methods=["PUT"],
        request=LabelWriteSerializer,
        responses=LabelSerializer,
        examples=VERDICT_EXAMPLES,
        description="Change my label while the set is open; the change is recorded with the old and new verdict "
        "and the seconds since I last opened the comparison.",
    )
    @action(detail=True, methods=["post", "put"])
    def label(self, request: Request, pk: str | None = None) -> Response:
        """Submit (POST) or change (PUT) my label of this comparison."""
        assignment = self._mine(pk)
        existed = hasattr(assignment, "label")
        payload = LabelWriteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        verdict = payload.validated_data
        service = services.label_submit if request.method == "POST" else services.label_change
        label = service(
            comparison=assignment.comparison,
            expert=request.user,
            winner=verdict["winner"],
            margin=verdict.get("margin"),
            rationale=verdict["rationale"],
        )
        label = selectors.expert_labels(comparison_set=assignment.comparison.comparison_set, expert=request.user).get(
            pk=label.pk
        )
        created = request.method == "POST" and not existed
        return Response(LabelSerializer(label).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses=LabelAssignmentSerializer)
    @action(detail=True, methods=["post"])
    def skip(self, request: Request, pk: str | None = None) -> Response:
        """Put this comparison aside: it moves to the end of my queue and stays mine."""
        assignment = self._mine(pk)
        skipped = services.label_skip(comparison=assignment.comparison, expert=request.user)
        skipped = selectors.expert_assignments(expert=request.user).get(pk=skipped.pk)
        return Response(LabelAssignmentSerializer(skipped).data)


class LabelPagination(IdsFirstPagination):
    """An expert's own labels: ids first, counted exactly (the list differs per expert; the count is one index
    range of the expert's assignments)."""

    cached_count = False


class LabelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """My labels, in the order I gave them, with how often I changed each."""

    pagination_class = LabelPagination
    permission_classes = [LABEL]
    serializer_class = LabelSerializer
    lookup_value_regex = r"\d+"
    queryset = ExpertLabel.objects.none()

    def get_queryset(self):  # noqa: ANN201
        labels = (
            ExpertLabel.objects.filter(assignment__expert=self.request.user)
            .select_related("assignment__comparison__item", "assignment__comparison__dimension")
            .order_by("created_at", "id")
        )
        comparison_set = self.request.query_params.get("set", "")
        if (set_id := whole_number(comparison_set)) is not None:
            labels = labels.filter(assignment__comparison__comparison_set_id=set_id)
        # A subquery, not a GROUP BY over every label with its joined item: the page reads ids first
        # (LabelPagination), so only the page's labels are counted and joined.
        changes = LabelChange.objects.filter(label=OuterRef("pk")).order_by().values("label").annotate(n=Count("id"))
        return labels.annotate(n_changes=Coalesce(Subquery(changes.values("n")), 0))

    @extend_schema(parameters=[OpenApiParameter("set", int, description="only this comparison set")])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)


# The router mounted at /api/labelling/ (config/urls.py); its index lists only the routes the user may use.
router = app_router(
    "labelling",
    needs={
        "sets": "items.view_item",
        "assignments": "labelling.label_comparisons",
        "labels": "labelling.label_comparisons",
    },
)
router.register("responses", ResponseViewSet, basename="labelling-response")
router.register("sets", ComparisonSetViewSet, basename="labelling-set")
router.register("assignments", AssignmentViewSet, basename="labelling-assignment")
router.register("labels", LabelViewSet, basename="labelling-label")
