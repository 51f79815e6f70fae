"""REST API for endpoints (admins write), runs (start, follow, pause, resume, cancel) and calls (read)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, routers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from core.permissions import api_permission
from core.routing import IntegerLookupRouter
from llm import selectors, services
from llm.models import Endpoint, LLMCall, Run
from llm.serializers import (
    CallDetailSerializer,
    CallFilterSerializer,
    CallSerializer,
    ConnectionReportSerializer,
    EndpointSerializer,
    ProgressSerializer,
    RunBudgetSerializer,
    RunCreateSerializer,
    RunFilterSerializer,
    RunItemSerializer,
    RunSerializer,
)


class EndpointViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Endpoints: researchers read, admins create, change and test. Keys are never part of any payload."""

    serializer_class = EndpointSerializer
    queryset = Endpoint.objects.order_by("name")

    def get_permissions(self) -> list[BasePermission]:
        if self.action in {"list", "retrieve"}:
            return [api_permission("llm.view_endpoint")()]
        return [api_permission("llm.manage_endpoint")()]

    def perform_create(self, serializer: EndpointSerializer) -> None:
        serializer.instance = services.endpoint_create(data=serializer.validated_data)

    def perform_update(self, serializer: EndpointSerializer) -> None:
        serializer.instance = services.endpoint_update(endpoint=serializer.instance, data=serializer.validated_data)

    @extend_schema(request=None, responses=ConnectionReportSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        """Send one tiny request to the endpoint and report latency or the error."""
        report = services.endpoint_probe(endpoint=self.get_object())
        return Response(ConnectionReportSerializer(report).data)


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Runs: list, detail, progress and results for researchers; start, pause, resume and cancel with run_llm."""

    serializer_class = RunSerializer
    queryset = Run.objects.none()

    def get_queryset(self):  # noqa: ANN201
        if self.action != "list":
            return selectors.run_list()
        params = RunFilterSerializer(data=given_parameters(self.request))
        params.is_valid(raise_exception=True)
        return selectors.run_list(**params.validated_data)

    def get_permissions(self) -> list[BasePermission]:
        if self.action in {"list", "retrieve", "progress", "results"}:
            return [api_permission("llm.view_run")()]
        return [api_permission("llm.run_llm")()]

    @extend_schema(parameters=[RunFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def create(self, request: Request) -> Response:
        payload = RunCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = services.run_create(
            endpoint=data["endpoint"],
            prompts=data["prompts"],
            parser=data["parser"],
            name=data["name"],
            purpose=data["purpose"],
            user=request.user,
            fresh=data["fresh"],
            max_parse_retries=data.get("max_parse_retries"),
            batch=data["batch"],
            batch_fallback=data["batch_fallback"],
            budget=data["budget"],
        )
        return Response(RunSerializer(selectors.run_detail(pk=run.pk)).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=ProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """Counts, spend and estimate only: cheap enough to poll every second."""
        run = get_object_or_404(Run.objects.select_related("endpoint"), pk=pk)
        return Response(ProgressSerializer(selectors.run_progress(run=run)).data)

    @extend_schema(
        responses=RunItemSerializer(many=True),
        parameters=[OpenApiParameter("status", str, description="pending, done, failed or cached")],
    )
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk: str | None = None) -> Response:
        """The run's items in prompt order, with parsed results and call ids (paginated)."""
        run = get_object_or_404(Run, pk=pk)
        page = self.paginate_queryset(selectors.run_items(run=run, status=request.query_params.get("status", "")))
        return self.get_paginated_response(RunItemSerializer(page, many=True).data)

    def _act(self, pk: str | None, service: object) -> Response:
        run = get_object_or_404(Run, pk=pk)
        service(run=run)
        return Response(RunSerializer(selectors.run_detail(pk=run.pk)).data)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        return self._act(pk, services.run_pause)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        return self._act(pk, services.run_resume)

    @extend_schema(request=RunBudgetSerializer, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def budget(self, request: Request, pk: str | None = None) -> Response:
        """Set or remove the run's budget; a run paused by its budget resumes when the budget is raised."""
        run = get_object_or_404(Run, pk=pk)
        payload = RunBudgetSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        services.run_budget_set(run=run, budget=payload.validated_data["budget"])
        return Response(RunSerializer(selectors.run_detail(pk=run.pk)).data)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        return self._act(pk, services.run_cancel)


def given_parameters(request: Request) -> dict[str, str]:
    """Return the query parameters that have a value (``?status=`` filters nothing, as before)."""
    return {name: value for name, value in request.query_params.items() if value != ""}


class CallViewSet(viewsets.ReadOnlyModelViewSet):
    """The call log: every request sent (or served from the cache), with its reply, tokens, cost and attempts."""

    permission_classes = [api_permission("llm.view_llmcall")]
    queryset = LLMCall.objects.none()

    def get_queryset(self):  # noqa: ANN201
        if self.action == "retrieve":
            return LLMCall.objects.select_related("endpoint")
        params = CallFilterSerializer(data=given_parameters(self.request))
        params.is_valid(raise_exception=True)
        return selectors.call_list(**params.validated_data)

    def get_serializer_class(self):  # noqa: ANN201
        return CallDetailSerializer if self.action == "retrieve" else CallSerializer

    @extend_schema(parameters=[CallFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)


class LLMRootView(routers.APIRootView):
    """The LLM API's index: for those who may read runs."""

    permission_classes = [api_permission("llm.view_run")]


router = IntegerLookupRouter()
# No ".json" twins of every route: the API answers JSON, and custom actions did not accept a format suffix.
router.include_format_suffixes = False
router.APIRootView = LLMRootView
router.root_view_name = "llm-api-root"
router.register("endpoints", EndpointViewSet, basename="llm-endpoint")
router.register("runs", RunViewSet, basename="llm-run")
router.register("calls", CallViewSet, basename="llm-call")
