"""REST API for calibration under /api/calibration/: judge prompts, prompt sets, judges and juries, calibration runs,
reports, suggestion, selection.

Same permissions as the pages: judge prompts are read by everyone who reads items and written by their authors;
judges, runs and reports show which models wrote the responses experts label, so they need ``run_judge``.
"""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from calibration import exports, selectors, services
from calibration.api_juries import JuryViewSet
from calibration.api_keys import KeyValidationViewSet
from calibration.api_support import calibration_runs_with_judges, judges_with_members
from calibration.models import CalibrationRun, Judge, JudgePrompt, JudgeSelection, PromptSet
from calibration.report import DOWNLOADS, report_file
from calibration.serializers import (
    CalibrationRunCreateSerializer,
    CalibrationRunDetailSerializer,
    CalibrationRunSerializer,
    JudgePromptCreateSerializer,
    JudgePromptSerializer,
    JudgeSelectionSerializer,
    JudgeSelectSerializer,
    JudgeSerializer,
    PromptSetCreateSerializer,
    PromptSetSerializer,
    SuggestionSerializer,
)
from calibration.views import BLIND
from core.figures import CONTENT_TYPES as FIGURE_CONTENT_TYPES
from core.figures import FORMATS as FIGURE_FORMATS
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

RUN_JUDGE = "calibration.run_judge"
REPORT_STATE_EXAMPLE = {
    "state": "computing",
    "under_way": True,
    "error": "",
    "requested_at": "2026-05-04T10:00:00Z",
    "reported_at": None,
    "report_digest": "",
    "status_url": "https://eistudio.example.org/api/calibration/runs/3/report/status/",
    "report_url": "https://eistudio.example.org/api/calibration/runs/3/report/",
}
AUTHOR = "calibration.author_judge_prompt"
READ_ITEMS = "items.view_item"


def not_ready() -> Response:
    return Response(
        {
            "detail": _("The report has not been computed yet."),
            "code": "report_not_ready",
        },
        status=status.HTTP_409_CONFLICT,
    )


class JudgePromptViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Judge prompt versions: read by everyone who reads items, a new version written by prompt authors."""

    serializer_class = JudgePromptSerializer
    queryset = JudgePrompt.objects.none()

    def get_queryset(self):  # noqa: ANN201
        prompts = selectors.judge_prompt_list()
        dimension = self.request.query_params.get("dimension")
        return prompts.filter(dimension__code=dimension) if dimension else prompts

    def get_permissions(self) -> list[BasePermission]:
        return [api_permission(AUTHOR if self.action == "create" else READ_ITEMS)()]

    @extend_schema(parameters=[OpenApiParameter("dimension", str, description="filter by dimension code")])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=JudgePromptCreateSerializer,
        responses={201: JudgePromptSerializer},
        examples=[
            OpenApiExample(
                "New version",
                request_only=True,
                value={
                    "dimension": 7,
                    "criteria": "1. Names the feeling accurately. 2. Invites the person to say more.",
                    "analysis_steps": "Compare the techniques, then the length, then decide.",
                    "length_penalty": "Prefer the shorter reply when both are equally good.",
                    "few_shot": [],
                    "notes": "sharper first criterion",
                },
            )
        ],
    )
    def create(self, request: Request) -> Response:
        """Save the next version of the judge prompt of a subjective dimension."""
        payload = JudgePromptCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        prompt = services.judge_prompt_create(**payload.validated_data, user=request.user)
        return Response(JudgePromptSerializer(prompt).data, status=status.HTTP_201_CREATED)


class PromptSetViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Prompt sets (one prompt version per dimension, used together by a judge): read like prompts, bundled by
    prompt authors."""

    serializer_class = PromptSetSerializer
    queryset = PromptSet.objects.prefetch_related("prompts")

    def get_permissions(self) -> list[BasePermission]:
        return [api_permission(AUTHOR if self.action == "create" else READ_ITEMS)()]

    @extend_schema(
        request=PromptSetCreateSerializer,
        responses={201: PromptSetSerializer},
        examples=[OpenApiExample("Bundle", request_only=True, value={"name": "default", "prompts": [12, 13, 14]})],
    )
    def create(self, request: Request) -> Response:
        """Bundle judge prompt versions as the next version of the named prompt set."""
        payload = PromptSetCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        prompt_set = services.prompt_set_create(name=data["name"], judge_prompts=data["prompts"], user=request.user)
        return Response(PromptSetSerializer(prompt_set).data, status=status.HTTP_201_CREATED)


class JudgeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Candidate judges (an endpoint with a prompt set version), for those who run calibration."""

    serializer_class = JudgeSerializer
    queryset = Judge.objects.none()
    permission_classes = [api_permission(RUN_JUDGE, why=BLIND)]

    def get_queryset(self):  # noqa: ANN201
        return judges_with_members()

    @extend_schema(
        examples=[
            OpenApiExample(
                "Register a judge", request_only=True, value={"name": "gpt-judge", "endpoint": 3, "prompt_set": 1}
            )
        ]
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Register a candidate judge."""
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: JudgeSerializer) -> None:
        serializer.instance = services.judge_create(**serializer.validated_data)


class JudgeSelectionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Every selection of the primary judge, latest (the one in force) first."""

    serializer_class = JudgeSelectionSerializer
    queryset = JudgeSelection.objects.select_related("judge", "selected_by")
    permission_classes = [api_permission(RUN_JUDGE, why=BLIND)]


REPORT_EXAMPLE = {
    "report_digest": "9f2c…",
    "reported_at": "2026-11-30T21:00:00Z",
    "report": {
        "run": "pilot",
        "experts": ["x0", "x1", "x2"],
        "judges": ["judge-a", "judge-b"],
        "strata": [
            {
                "key": "overall",
                "label": "overall",
                "baseline": {"alpha_ordinal": {"value": 0.71, "ci_low": 0.6, "ci_high": 0.8}},
                "judges": {"judge-a": {"alpha_with_judge": {"value": 0.69, "ci_low": 0.58, "ci_high": 0.78}}},
            }
        ],
        "suggestion": {"judge": "judge-a", "rule": "…", "reasoning": ["…"]},
    },
}


class CalibrationRunViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Calibration runs: start, follow, compute and read the report, download it, and select the primary judge."""

    serializer_class = CalibrationRunSerializer
    queryset = CalibrationRun.objects.none()
    permission_classes = [api_permission(RUN_JUDGE, why=BLIND)]

    def get_queryset(self):  # noqa: ANN201
        return calibration_runs_with_judges()

    def get_serializer_class(self):  # noqa: ANN201
        return CalibrationRunSerializer if self.action == "list" else CalibrationRunDetailSerializer

    def _run(self, pk: str | None) -> CalibrationRun:
        return get_object_or_404(calibration_runs_with_judges(), pk=pk)

    @extend_schema(
        request=CalibrationRunCreateSerializer,
        responses={201: CalibrationRunDetailSerializer},
        examples=[
            OpenApiExample(
                "Start",
                request_only=True,
                value={"name": "pilot", "comparison_set": 1, "judges": [1, 2], "combine_rule": "facet_tie", "seed": 0},
            )
        ],
    )
    def create(self, request: Request) -> Response:
        """Start a calibration run: every judge asked about every comparison of the set, in both orders."""
        payload = CalibrationRunCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = services.calibration_run_start(
            name=data["name"],
            comparison_set=data["comparison_set"],
            judges=list(data["judges"]),
            combine_rule=data["combine_rule"],
            seed=data["seed"],
            bootstrap=data["bootstrap"],
            user=request.user,
        )
        detail = CalibrationRunDetailSerializer(self._run(run.pk), context={"request": request})
        return Response(detail.data, status=status.HTTP_201_CREATED)

    def _report(self, run: CalibrationRun) -> Response:
        return Response({"report_digest": run.report_digest, "reported_at": run.reported_at, "report": run.report})

    @extend_schema(
        methods=["GET"],
        request=None,
        responses={200: OpenApiTypes.OBJECT, 409: OpenApiResponse(description="not computed yet")},
        examples=[OpenApiExample("Report", response_only=True, value=REPORT_EXAMPLE)],
        description="The report the run's page shows: baseline and judges per stratum, costs and the suggestion.",
    )
    @extend_schema(
        methods=["POST"],
        request=None,
        responses={202: OpenApiTypes.OBJECT},
        examples=[OpenApiExample("Queued", response_only=True, status_codes=["202"], value=REPORT_STATE_EXAMPLE)],
        description="Queue the computation (or recomputation) of the report from the stored verdicts for a "
        "background worker; answers 202 with the computation's state and the address to poll for it "
        "(``status_url``, also in the Location header). Refused until every judge's run has finished and been "
        "collected. Asking again while it is under way changes nothing.",
    )
    @action(detail=True, methods=["get", "post"])
    def report(self, request: Request, pk: str | None = None) -> Response:
        run = get_object_or_404(CalibrationRun, pk=pk)
        if request.method == "POST":
            run = services.calibration_report_request(run=run)
            body = self._report_state(request, run)
            return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]})
        if not run.report:
            return not_ready()
        return self._report(run)

    def _report_state(self, request: Request, run: CalibrationRun) -> dict:
        return {
            "state": run.report_state,
            "under_way": services.report_under_way(run),
            "error": run.report_error,
            "requested_at": run.report_requested_at,
            "reported_at": run.reported_at,
            "report_digest": run.report_digest,
            "status_url": request.build_absolute_uri(reverse("calibration-run-report-status", args=[run.pk])),
            "report_url": request.build_absolute_uri(reverse("calibration-run-report", args=[run.pk])),
        }

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT},
        examples=[OpenApiExample("Computing", response_only=True, value=REPORT_STATE_EXAMPLE)],
        description="Where the report's computation stands: idle (never requested), queued, computing, done or "
        "failed (with the error); ``report_url`` gives the report once it is done.",
    )
    @action(detail=True, methods=["get"], url_path="report/status", url_name="report-status")
    def report_status(self, request: Request, pk: str | None = None) -> Response:
        return Response(self._report_state(request, get_object_or_404(CalibrationRun, pk=pk)))

    @extend_schema(
        request=None,
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=sorted(DOWNLOADS) + list(FIGURE_FORMATS))],
        responses={
            **media_type_responses([content_type for content_type, _build in DOWNLOADS.values()]),
            **media_type_responses(FIGURE_CONTENT_TYPES.values()),
            404: OpenApiResponse(description="unknown format"),
            409: OpenApiResponse(description="not computed yet"),
        },
        description="Download the report as JSON, CSV or a LaTeX table (the page's downloads).",
    )
    @action(detail=True, methods=["get"], url_path=r"files/(?P<fmt>[a-z]+)", url_name="file")
    def file(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        run = get_object_or_404(CalibrationRun, pk=pk)
        if not run.report:
            return not_ready()
        found = report_file(run, fmt)
        if found is None:
            return unknown_format_response(sorted(DOWNLOADS) + list(FIGURE_FORMATS))
        content, content_type, filename = found
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: OpenApiResponse(description="not computed yet")},
    )
    @action(detail=True, methods=["get"], url_path=r"verdicts/(?P<fmt>[a-z]+)", url_name="verdicts")
    def verdicts(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """The judges' verdicts, one row per judge and comparison: both orders (raw, parsed, canonical score) and their
        combination by the run's rule, as CSV, JSONL or Parquet."""
        return self._table(request, pk, fmt, pairs=False)

    @extend_schema(
        parameters=[OpenApiParameter("language", str, enum=["en", "zh"], required=False)],
        responses={**TABLE_RESPONSES, 409: OpenApiResponse(description="not computed yet")},
    )
    @action(detail=True, methods=["get"], url_path=r"pairs/(?P<fmt>[a-z]+)", url_name="pairs")
    def pairs(self, request: Request, pk: str | None = None, fmt: str = "") -> HttpResponse:
        """Preference pairs (chosen/rejected) from the verdicts; headers X-Preference-Pairs and X-Left-Out-Ties,
        -Inconsistent, -Unparsed count what was left out."""
        return self._table(request, pk, fmt, pairs=True)

    def _table(self, request: Request, pk: str | None, fmt: str, *, pairs: bool) -> HttpResponse:
        run = get_object_or_404(CalibrationRun, pk=pk)
        try:
            language = language_param(request.query_params.get("language"))
        except ValueError:
            return Response({"language": [_("Expected en or zh.")]}, status=status.HTTP_400_BAD_REQUEST)
        if fmt not in FORMATS:
            return unknown_format_response(FORMATS)
        if not pairs:
            rows = exports.verdict_rows(run=run, language=language)
            return table_response(rows, exports.VERDICT_COLUMNS, fmt, filename=f"verdicts-calibration-{run.pk}")
        counts = exports.verdict_preference_counts(run=run, language=language)
        rows = exports.verdict_preference_rows(run=run, language=language)
        filename = f"preference-pairs-calibration-{run.pk}"
        return table_response(rows, exports.PAIR_COLUMNS, fmt, filename=filename, headers=pair_headers(counts))

    @extend_schema(request=None, responses={200: SuggestionSerializer, 409: OpenApiResponse(description="no report")})
    @action(detail=True, methods=["get"])
    def suggestion(self, request: Request, pk: str | None = None) -> Response:
        """Which judge the report suggests as primary, by which rule and why."""
        run = self._run(pk)
        if not run.report:
            return not_ready()
        suggested = run.report.get("suggestion") or {}
        # Judge names are unique; a suggested jury is a judge too.
        judge = Judge.objects.filter(name=suggested.get("judge") or "").first()
        return Response(
            SuggestionSerializer(
                {
                    "judge": judge.pk if judge else None,
                    "judge_name": judge.name if judge else None,
                    "rule": suggested.get("rule", ""),
                    "reasoning": suggested.get("reasoning", []),
                    "report_digest": run.report_digest,
                }
            ).data
        )

    @extend_schema(
        request=JudgeSelectSerializer,
        responses={201: JudgeSelectionSerializer, 409: OpenApiResponse(description="no report")},
        examples=[
            OpenApiExample(
                "Select",
                request_only=True,
                value={"judge": 1, "reason": "Highest lower bound of alpha; not worse than the experts."},
            )
        ],
    )
    @action(detail=True, methods=["post"])
    def select(self, request: Request, pk: str | None = None) -> Response:
        """Make a judge of this run the primary judge, on this run's report, with a reason."""
        run = get_object_or_404(CalibrationRun, pk=pk)
        payload = JudgeSelectSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        if not run.report_digest:
            return Response(
                {"detail": _("Choose a judge from a computed report."), "code": "report_not_ready"},
                status=status.HTTP_409_CONFLICT,
            )
        selection = services.judge_select(
            run=run,
            judge=payload.validated_data["judge"],
            user=request.user,
            reason=payload.validated_data["reason"],
            report_digest=run.report_digest,
            override_rule=payload.validated_data["override_rule"],
        )
        return Response(JudgeSelectionSerializer(selection).data, status=status.HTTP_201_CREATED)


# The router mounted at /api/calibration/ (config/urls.py); its index lists only the routes the user may use.
router = app_router("calibration", needs={"prompts": READ_ITEMS, "prompt-sets": READ_ITEMS}, default=RUN_JUDGE)
router.register("prompts", JudgePromptViewSet, basename="calibration-prompt")
router.register("prompt-sets", PromptSetViewSet, basename="calibration-prompt-set")
router.register("judges", JudgeViewSet, basename="calibration-judge")
router.register("juries", JuryViewSet, basename="calibration-jury")
router.register("runs", CalibrationRunViewSet, basename="calibration-run")
router.register("selections", JudgeSelectionViewSet, basename="calibration-selection")
router.register("key-validations", KeyValidationViewSet, basename="calibration-key-validation")
