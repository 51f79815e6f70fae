"""REST API for pairwise labelling: response import and comparison sets for builders, a blind queue for experts.

Builders (labelling.manage_comparisons) import responses and build and close sets; they see model names. Experts
(labelling.label_comparisons) get their next comparison as two anonymised texts left and right, label, change a
label while the set is open, skip, and list their own labels. Nothing an expert can reach names a model.
"""

import json

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.labelling import selectors, services
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment
from annotation.labelling.serializers import (
    BlindComparisonSerializer,
    ComparisonSetCreateSerializer,
    ComparisonSetDetailSerializer,
    ComparisonSetSerializer,
    ImportResultSerializer,
    LabelAssignmentSerializer,
    LabellingProgressSerializer,
    LabelSerializer,
    LabelWriteSerializer,
    NextComparisonSerializer,
    ResponseImportSerializer,
)
from annotation.labelling.views import BUILDERS, LABELLERS
from core.inputs import whole_number
from core.permissions import api_permission
from core.routing import app_router

MANAGE = api_permission("labelling.manage_comparisons", why=BUILDERS)
LABEL = api_permission("labelling.label_comparisons", why=LABELLERS)
VIEW = api_permission("items.view_item")

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

    @extend_schema(responses=LabellingProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """My progress in the set: labelled, assigned, and skipped but not yet labelled."""
        comparison_set = get_object_or_404(ComparisonSet, pk=pk)
        progress = selectors.expert_progress(comparison_set=comparison_set, expert=request.user)
        return Response(LabellingProgressSerializer(progress).data)


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

    @extend_schema(
        parameters=[
            OpenApiParameter("set", int, description="only this comparison set"),
            OpenApiParameter("state", str, enum=["pending", "labelled", "skipped"], description="filter by state"),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

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


class LabelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """My labels, in the order I gave them, with how often I changed each."""

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
        return labels.annotate(n_changes=Count("changes"))

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
