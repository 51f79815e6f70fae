"""REST API for evaluation runs under /api/evaluation/: create, estimate, start, pause, resume, cancel, budget,
progress, report, files, drill-down.

Same permission as the pages (``run_evaluation``): runs tie responses to model codes and endpoints, so those who
label responses blind never reach them.
"""

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.releases.models import Release
from core.inputs import page_number, whole_number
from core.permissions import api_permission
from core.routing import app_router
from core.rowfiles import (
    FORMATS,
    TABLE_RESPONSES,
    language_param,
    media_type_responses,
    pair_headers,
    table_response,
    unknown_format_response,
)
from evaluation import exports, selectors, services
from evaluation.models import ContaminationCheck, EvaluationRun
from evaluation.report import report_file, report_files_names
from evaluation.report.files import CONTENT_TYPES as FILE_CONTENT_TYPES
from evaluation.report.files import report_eicap_languages
from evaluation.serializers import (
    BudgetSerializer,
    EstimateSerializer,
    EvaluationProgressSerializer,
    EvaluationRunCreateSerializer,
    EvaluationRunDetailSerializer,
    EvaluationRunSerializer,
    EvidenceSerializer,
)
from evaluation.services.contamination import contamination_check_create
from evaluation.services.runs import evaluation_budget_set
from evaluation.views import BLIND
from llm.models import Endpoint

RUN_EVALUATION = "evaluation.run_evaluation"


def not_ready() -> Response:
    return Response(
        {"detail": _("The report is not ready yet."), "code": "report_not_ready"}, status=status.HTTP_409_CONFLICT
    )


class FileSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.URLField(help_text="Where to download it.")


class FilesSerializer(serializers.Serializer):
    files = FileSerializer(many=True)


class EvaluationRunViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Evaluation runs of models under test on a frozen release, with the primary judge."""

    serializer_class = EvaluationRunSerializer
    queryset = EvaluationRun.objects.none()
    permission_classes = [api_permission(RUN_EVALUATION, why=BLIND)]

    def get_queryset(self):  # noqa: ANN201
        runs = selectors.evaluation_runs_with_models()
        params = self.request.query_params
        if params.get("phase"):
            runs = runs.filter(phase=params["phase"])
        if params.get("release"):
            # ?release=null answered 500 (Schemathesis): an id that is no whole number is refused, naming it.
            if (release := whole_number(params["release"])) is None:
                raise ApiValidationError({"release": [_("A whole number.")]})
            runs = runs.filter(release_id=release)
        return runs

    def get_serializer_class(self):  # noqa: ANN201
        return EvaluationRunSerializer if self.action == "list" else EvaluationRunDetailSerializer

    def _run(self, pk: str | None) -> EvaluationRun:
        return get_object_or_404(EvaluationRun, pk=pk)

    def _detail(self, run: EvaluationRun, code: int = status.HTTP_200_OK) -> Response:
        fresh = get_object_or_404(selectors.evaluation_runs_with_models(), pk=run.pk)
        return Response(EvaluationRunDetailSerializer(fresh).data, status=code)

    @extend_schema(
        parameters=[
            OpenApiParameter("phase", str, enum=EvaluationRun.Phase.values, description="filter by phase"),
            OpenApiParameter("release", int, description="filter by release id"),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=EvaluationRunCreateSerializer,
        responses={201: EvaluationRunDetailSerializer},
        examples=[
            OpenApiExample(
                "Plan a run",
                request_only=True,
                value={"name": "study-1", "release": 4, "endpoints": [2, 5], "languages": ["en", "zh"], "seed": 0},
            )
        ],
    )
    def create(self, request: Request) -> Response:
        """Plan a run (not started: read its estimate, then start it). The judge defaults to the primary judge."""
        payload = EvaluationRunCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = dict(payload.validated_data)
        data["endpoints"] = list(data["endpoints"])
        data["languages"] = sorted(set(data["languages"]))
        run = services.evaluation_run_create(**data, user=request.user)
        return self._detail(run, status.HTTP_201_CREATED)

    @extend_schema(
        responses=EstimateSerializer,
        examples=[
            OpenApiExample(
                "Estimate",
                response_only=True,
                value={
                    "response_calls": 960,
                    "response_cost": "0.41200000",
                    "judge_calls_round_robin": 240,
                    "judge_cost_round_robin": "1.92000000",
                    "total_cost": "2.33200000",
                },
            )
        ],
    )
    @action(detail=True, methods=["get"])
    def estimate(self, request: Request, pk: str | None = None) -> Response:
        """The calls and money of the responses and of round-robin judging, as the page shows before Start."""
        return Response(EstimateSerializer(services.evaluation_estimate(run=self._run(pk))).data)

    @extend_schema(responses=EvaluationProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """Phase, overall percentage, time left and call counts: cheap enough to poll every few seconds."""
        return Response(EvaluationProgressSerializer(selectors.evaluation_run_progress(run=self._run(pk))).data)

    @extend_schema(request=None, responses=EvaluationRunDetailSerializer)
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        """Start collecting responses from every model; the workers carry the run to its report."""
        run = services.evaluation_run_start(run=self._run(pk), user=request.user)
        return self._detail(run)

    @extend_schema(request=None, responses=EvaluationRunDetailSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        """Pause the run's queued and running LLM runs (requests in flight finish)."""
        return self._detail(services.evaluation_run_pause(run=self._run(pk)))

    @extend_schema(request=None, responses=EvaluationRunDetailSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Queue the run's paused LLM runs again."""
        return self._detail(services.evaluation_run_resume(run=self._run(pk)))

    @extend_schema(
        request=BudgetSerializer,
        responses=EvaluationRunDetailSerializer,
        examples=[OpenApiExample("Raise the cap", request_only=True, value={"budget": "25.00"})],
    )
    @action(detail=True, methods=["post"])
    def budget(self, request: Request, pk: str | None = None) -> Response:
        """Set, raise or remove the run's spending cap; LLM runs it paused resume when it is raised."""
        payload = BudgetSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return self._detail(evaluation_budget_set(run=self._run(pk), budget=payload.validated_data["budget"]))

    @extend_schema(request=None, responses=EvaluationRunDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel a running run and its LLM runs; what was collected stays."""
        return self._detail(services.evaluation_run_cancel(run=self._run(pk)))

    @extend_schema(
        methods=["GET"],
        request=None,
        responses={200: OpenApiTypes.OBJECT, 409: OpenApiResponse(description="not ready yet")},
        description="The report the run's page shows (leaderboard, accuracy, ratings, win rates, analyses, notes).",
        examples=[
            OpenApiExample(
                "Report",
                response_only=True,
                value={"report_digest": "3b1f…", "finished_at": "2026-11-30T21:00:00Z", "report": {"objective": {}}},
            )
        ],
    )
    @extend_schema(
        methods=["POST"],
        request=None,
        responses={200: OpenApiTypes.OBJECT},
        description="Recompute the report of a done run from its stored answers and verdicts (same data, same digest).",
    )
    @action(detail=True, methods=["get", "post"])
    def report(self, request: Request, pk: str | None = None) -> Response:
        run = self._run(pk)
        if request.method == "POST":
            services.evaluation_report_compute(run=run)
            run.refresh_from_db()
        if not run.report:
            return not_ready()
        return Response({"report_digest": run.report_digest, "finished_at": run.finished_at, "report": run.report})

    @extend_schema(
        request=None,
        responses={200: FilesSerializer, 409: OpenApiResponse(description="not ready yet")},
        examples=[
            OpenApiExample(
                "Files",
                response_only=True,
                value={
                    "files": [
                        {
                            "name": "report.json",
                            "url": "https://eistudio.example.org/api/evaluation/runs/4/files/report.json/",
                        }
                    ]
                },
            )
        ],
    )
    @action(detail=True, methods=["get"])
    def files(self, request: Request, pk: str | None = None) -> Response:
        """The report's files, as the page lists them for download, with their addresses."""
        run = self._run(pk)
        if not run.report:
            return not_ready()
        files = [
            {
                "name": name,
                "url": request.build_absolute_uri(reverse("evaluation-run-file", kwargs={"pk": run.pk, "name": name})),
            }
            for name in report_files_names(
                run.languages,
                eicap_languages=report_eicap_languages(run.report),
                held_out=bool(run.report.get("held_out")),
            )
        ]
        return Response(FilesSerializer({"files": files}).data)

    @extend_schema(
        operation_id="evaluation_runs_file_download",
        request=None,
        parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH, description="e.g. report.json")],
        responses={
            **media_type_responses([*FILE_CONTENT_TYPES.values(), "application/octet-stream"]),
            404: OpenApiResponse(description="no such file"),
            409: OpenApiResponse(description="not ready yet"),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"files/(?P<name>[A-Za-z0-9_.-]+)", url_name="file")
    def file(self, request: Request, pk: str | None = None, name: str = "") -> HttpResponse:
        """Download one file of the report (CSV, LaTeX, SVG, PNG, PDF or JSON)."""
        run = self._run(pk)
        if not run.report:
            return not_ready()
        found = report_file(run, name)
        if found is None:
            reason = _("No such file.")
            return Response({"detail": reason, "code": "not_found", "name": [reason]}, status=status.HTTP_404_NOT_FOUND)
        content, content_type, filename = found
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: OpenApiResponse(description="not ready yet")},
    )
    @action(detail=True, methods=["get"], url_path=r"verdicts/(?P<fmt>[a-z]+)", url_name="verdicts")
    def verdicts(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """The judge's pair verdicts, one row per item, language and pair of model codes: both orders (raw, parsed,
        canonical score) and their combination by the run's rule, as CSV, JSONL or Parquet."""
        return self._table(request, pk, fmt, pairs=False)

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: OpenApiResponse(description="not ready yet")},
    )
    @action(detail=True, methods=["get"], url_path=r"pairs/(?P<fmt>[a-z]+)", url_name="pairs")
    def pairs(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """Preference pairs (chosen/rejected) from the verdicts; headers X-Preference-Pairs and X-Left-Out-Ties,
        -Inconsistent, -Unparsed count what was left out."""
        return self._table(request, pk, fmt, pairs=True)

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses=TABLE_RESPONSES,
    )
    @action(detail=True, methods=["get"], url_path=r"answers/(?P<fmt>[a-z]+)", url_name="answers")
    def answers(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """The raw objective answers, one row per model, item, language and turn: protocol, layer, dimension, key,
        choice, correctness and (log-probability answers) the margin of the key over the best distractor."""
        return self._table(request, pk, fmt, pairs=False, answers=True)

    def _table(self, request: Request, pk: str | None, fmt: str, *, pairs: bool, answers: bool = False) -> HttpResponse:
        run = get_object_or_404(EvaluationRun.objects.select_related("judge"), pk=pk)
        try:
            language = language_param(request.query_params.get("language"))
        except ValueError:
            return Response({"language": [_("Expected en or zh.")]}, status=status.HTTP_400_BAD_REQUEST)
        if fmt not in FORMATS:
            return unknown_format_response(FORMATS)
        if answers:
            rows = exports.answer_rows(run=run, language=language)
            return table_response(rows, exports.ANSWER_COLUMNS, fmt, filename=f"answers-evaluation-{run.pk}")
        if not pairs:
            rows = exports.verdict_rows(run=run, language=language)
            return table_response(rows, exports.VERDICT_COLUMNS, fmt, filename=f"verdicts-evaluation-{run.pk}")
        counts = exports.verdict_preference_counts(run=run, language=language)
        rows = exports.verdict_preference_rows(run=run, language=language)
        filename = f"preference-pairs-evaluation-{run.pk}"
        return table_response(rows, exports.PAIR_COLUMNS, fmt, filename=filename, headers=pair_headers(counts))

    @extend_schema(
        request=None,
        parameters=[
            OpenApiParameter("model", str, description="model code, e.g. M01"),
            OpenApiParameter("dimension", str, description="dimension code"),
            OpenApiParameter("language", str, enum=["en", "zh"]),
            OpenApiParameter("page", int, description="page of the three lists, from 1 (see has_next)"),
        ],
        responses=EvidenceSerializer,
    )
    @action(detail=True, methods=["get"])
    def drill(self, request: Request, pk: str | None = None) -> Response:
        """The answers, open responses, verdicts and raw judge outputs behind a cell of the report."""
        run = self._run(pk)
        filters = {key: request.query_params.get(key) or None for key in ("model", "dimension", "language")}
        page = page_number(request.query_params.get("page"))
        if page is None:
            raise ApiValidationError({"page": [_("A page number is a whole number from 1.")]})
        evidence = selectors.evaluation_run_evidence(run=run, page=page, **filters)
        return Response(EvidenceSerializer({"filters": filters, **evidence}).data)


class ContaminationCheckSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContaminationCheck
        fields = [
            "id", "release", "name", "corpus_texts", "corpus_sha256", "embedding_endpoint", "status", "result",
            "error", "created_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields


class ContaminationCheckCreateSerializer(serializers.Serializer):
    release = serializers.PrimaryKeyRelatedField(queryset=Release.objects.all())
    name = serializers.CharField(max_length=200)
    corpus = serializers.FileField(help_text="JSONL: one object per line with a text, prompt or messages field.")
    embedding_endpoint = serializers.PrimaryKeyRelatedField(
        queryset=Endpoint.objects.filter(is_active=True),
        required=False,
        allow_null=True,
        help_text="An endpoint with an embedding model: the embedding cosine is reported beside TF-IDF.",
    )


class ContaminationCheckViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Contamination checks: the TF-IDF nearest-neighbour cosine from a release's texts to an uploaded corpus, and
    the embedding cosine too with an ``embedding_endpoint``.

    A small corpus is checked at once; a large one is queued for a worker (``status`` says which, poll the check).
    """

    serializer_class = ContaminationCheckSerializer
    parser_classes = [MultiPartParser]
    permission_classes = [api_permission(RUN_EVALUATION, why=BLIND)]

    def get_queryset(self):  # noqa: ANN201 (a queryset)
        return ContaminationCheck.objects.select_related("release").defer("corpus").order_by("-created_at", "-id")

    @extend_schema(request=ContaminationCheckCreateSerializer, responses={201: ContaminationCheckSerializer})
    def create(self, request: Request) -> Response:
        """Upload a corpus (multipart: release, name, corpus) and check the release against it."""
        data = ContaminationCheckCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            check = contamination_check_create(
                release=data.validated_data["release"],
                name=data.validated_data["name"],
                data=data.validated_data["corpus"].read(),
                user=request.user,
                embedding_endpoint=data.validated_data.get("embedding_endpoint"),
            )
        except ValidationError as exc:
            errors = exc.message_dict if hasattr(exc, "error_dict") else {"corpus": exc.messages}
            raise ApiValidationError(errors) from exc
        check.refresh_from_db()
        return Response(ContaminationCheckSerializer(check).data, status=status.HTTP_201_CREATED)


# The router mounted at /api/evaluation/ (config/urls.py): its routes for those who may run evaluations.
router = app_router("evaluation", default=RUN_EVALUATION)
router.register("runs", EvaluationRunViewSet, basename="evaluation-run")
router.register("contamination", ContaminationCheckViewSet, basename="evaluation-contamination")
