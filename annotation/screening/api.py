"""REST API for screening: rounds (open, close, items, statistics), my assignments and reviews, adjudication.

The same permissions and blindness as the pages: reviewers see their own reviews only; outcomes and statistics of an
open round are for those who manage rounds; conflicts are adjudicated after the round closes.
"""

from django.contrib.auth import get_user_model
from django.db.models import Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.queue.api import assignments_list_schema
from annotation.screening import selectors, services
from annotation.screening.models import Criterion, ReviewAssignment, RoundItem, ScreeningRound
from annotation.screening.serializers import (
    AdjudicateSerializer,
    ReviewAssignmentDetailSerializer,
    ReviewAssignmentSerializer,
    ReviewWriteSerializer,
    RoundCloseSerializer,
    RoundDetailSerializer,
    RoundItemDetailSerializer,
    RoundItemSerializer,
    RoundOpenSerializer,
    RoundSerializer,
    RoundStatisticsSerializer,
)
from core.inputs import whole_number
from core.permissions import api_permission
from core.routing import app_router

REVIEW = api_permission("screening.review_item")
MANAGE = api_permission("screening.manage_round")
ADJUDICATE = api_permission("screening.adjudicate_item")

REVIEW_EXAMPLE = OpenApiExample(
    "A complete review",
    value={
        "scores": {"scenario_plausibility": 4, "linguistic_clarity": 5, "answer_key_correctness": "pass"},
        "decision": "revise",
        "comment": "Option C is ambiguous.",
    },
    request_only=True,
)


def _int_param(request: Request, name: str) -> int | None:
    value = request.query_params.get(name, "")
    number = whole_number(value)
    if value and number is None:
        raise ApiValidationError({name: [_("A whole number.")]})
    return number


def with_details(rounds: QuerySet[ScreeningRound]) -> QuerySet[ScreeningRound]:
    """Rounds with their criteria (in the rubric's order) and reviewers (by username), the same order every time."""
    reviewers = get_user_model().objects.order_by("username")
    return rounds.prefetch_related("criteria", Prefetch("reviewers", queryset=reviewers))


class RoundViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Screening rounds: reviewers list and read them; those who manage rounds open and close them."""

    queryset = ScreeningRound.objects.all()
    lookup_value_regex = r"\d+"

    def get_queryset(self):  # noqa: ANN201
        params = self.request.query_params
        rounds = selectors.round_list(
            user=self.request.user, status=params.get("status", ""), benchmark=params.get("benchmark", "")
        )
        return with_details(rounds) if self.action == "retrieve" else rounds

    def get_permissions(self) -> list[BasePermission]:
        if self.action in {"create", "close"}:
            return [MANAGE()]
        return [REVIEW()]

    def get_serializer_class(self):  # noqa: ANN201
        return RoundDetailSerializer if self.action == "retrieve" else RoundSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=["open", "closed"], description="filter by status"),
            OpenApiParameter("benchmark", str, description="filter by benchmark slug"),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=RoundOpenSerializer,
        responses={201: RoundDetailSerializer},
        examples=[
            OpenApiExample(
                "Two reviewers per draft MCQ",
                value={
                    "benchmark": "facet",
                    "title": "Round 1: perception MCQs",
                    "reviewers": ["expert1", "expert2", "expert3"],
                    "reviewers_per_item": 2,
                    "status": "draft",
                    "kind": "mcq",
                },
                request_only=True,
            )
        ],
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Open a round on the matching items and assign each to reviewers (the service of the page)."""
        payload = RoundOpenSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        criteria = None
        if data.get("criteria"):
            codes = data["criteria"]
            criteria = list(
                Criterion.objects.filter(code__in=codes).filter(
                    Q(dimension=None) | Q(dimension__benchmark=data["benchmark"])
                )
            )
            unknown = sorted(set(codes) - {c.code for c in criteria})
            if unknown:
                raise ApiValidationError(
                    {"criteria": [_("Unknown criteria: %(codes)s.") % {"codes": ", ".join(unknown)}]}
                )
        round = services.round_open(
            benchmark=data["benchmark"],
            title=data["title"],
            user=request.user,
            reviewers=list(data["reviewers"]),
            reviewers_per_item=data["reviewers_per_item"],
            filters={k: data[k] for k in ("status", "dimension", "kind") if data.get(k)},
            criteria=criteria,
            deadline=data.get("deadline"),
        )
        created = with_details(self.get_queryset()).get(pk=round.pk)
        return Response(RoundDetailSerializer(created).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=RoundCloseSerializer,
        responses=RoundSerializer,
        examples=[OpenApiExample("Close, returning unreviewed items", value={"unreviewed": "return_to_authors"})],
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, pk: str | None = None) -> Response:
        """Close the round: agreed items get their decision, conflicts wait for adjudication, statistics are stored."""
        payload = RoundCloseSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        services.round_close(
            round=get_object_or_404(ScreeningRound, pk=pk),
            user=request.user,
            unreviewed=payload.validated_data.get("unreviewed"),
            note=payload.validated_data["note"],
        )
        return Response(RoundSerializer(self.get_queryset().get(pk=pk)).data)

    @extend_schema(responses=RoundStatisticsSerializer)
    @action(detail=True, methods=["get"])
    def statistics(self, request: Request, pk: str | None = None) -> Response:
        """Decisions, per dimension and criterion, agreement (Krippendorff's alpha) and throughput.

        After the round closes: the figures stored then. While it is open, counted live in the database, for those
        who manage rounds only (reviewers review blind).
        """
        round = get_object_or_404(ScreeningRound, pk=pk)
        if not round.is_open and round.statistics:
            return Response({"final": True, "statistics": round.statistics})
        if not request.user.has_perm("screening.manage_round"):
            detail = _("Statistics appear once the round closes.")
            return Response({"final": False, "statistics": None, "detail": detail})
        return Response({"final": False, "statistics": selectors.round_statistics_data(round=round)})

    @extend_schema(
        responses=RoundItemSerializer(many=True),
        parameters=[
            OpenApiParameter("outcome", str, enum=[c for c, _label in RoundItem.Outcome.choices]),
            OpenApiParameter("dimension", str, description="dimension code"),
            OpenApiParameter("kind", str, description="item kind"),
        ],
    )
    @action(detail=True, methods=["get"])
    def items(self, request: Request, pk: str | None = None) -> Response:
        """The round's items by uid with their outcome (pending until the round closes) and review counts."""
        round = get_object_or_404(ScreeningRound, pk=pk)
        params = request.query_params
        outcome = params.get("outcome", "")
        if outcome and outcome not in RoundItem.Outcome.values:
            raise ApiValidationError({"outcome": [_("Unknown outcome %(value)s.") % {"value": outcome}]})
        if round.is_open and outcome and not request.user.has_perm("screening.manage_round"):
            outcome = RoundItem.Outcome.PENDING
        items = selectors.round_item_list(
            round=round, outcome=outcome, dimension=params.get("dimension", ""), kind=params.get("kind", "")
        )
        page = self.paginate_queryset(items)
        return self.get_paginated_response(RoundItemSerializer(page, many=True).data)


@assignments_list_schema(owner="round", owner_description="only this round", done="submitted")
class AssignmentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """My review assignments: list, my next one, open one, save a draft, submit, change my review, skip."""

    permission_classes = [REVIEW]
    queryset = ReviewAssignment.objects.none()
    serializer_class = ReviewAssignmentSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self):  # noqa: ANN201
        return selectors.reviewer_assignments(
            reviewer=self.request.user,
            round=_int_param(self.request, "round"),
            state=self.request.query_params.get("state", ""),
        )

    def _mine(self, pk: str | None) -> ReviewAssignment:
        mine = ReviewAssignment.objects.select_related("round_item")
        assignment = get_object_or_404(mine, pk=pk, reviewer=self.request.user)
        return selectors.review_assignment(round_id=assignment.round_item.round_id, pk=assignment.pk)

    def _detail(self, assignment: ReviewAssignment) -> dict:
        round_item = assignment.round_item
        assignment.criteria = [
            {"code": c.code, "name": c.name, "scale": c.scale}
            for c in services.criteria_for(round_item.round, round_item.item)
        ]
        return ReviewAssignmentDetailSerializer(assignment).data

    @extend_schema(responses=ReviewAssignmentDetailSerializer)
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """One of my assignments with the item's content, the criteria that apply and my review; starts its timer."""
        assignment = self._mine(kwargs.get("pk"))
        services.review_mark_viewed(assignment=assignment)
        return Response(self._detail(assignment))

    @extend_schema(
        parameters=[OpenApiParameter("round", int, required=True, description="the round")],
        responses={200: ReviewAssignmentDetailSerializer, 204: None},
    )
    @action(detail=False, methods=["get"])
    def next(self, request: Request) -> Response:
        """My next item to review in the round (skipped ones come back last); 204 when my queue is done."""
        round_id = _int_param(request, "round")
        if round_id is None:
            raise ApiValidationError({"round": [_("This parameter is required.")]})
        round = get_object_or_404(ScreeningRound, pk=round_id)
        nxt = selectors.next_assignment(round=round, reviewer=request.user)
        if nxt is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        assignment = selectors.review_assignment(round_id=round.pk, pk=nxt.pk)
        services.review_mark_viewed(assignment=assignment)
        return Response(self._detail(assignment))

    @extend_schema(request=ReviewWriteSerializer, responses=ReviewAssignmentDetailSerializer, examples=[REVIEW_EXAMPLE])
    @action(detail=True, methods=["post"])
    def draft(self, request: Request, pk: str | None = None) -> Response:
        """Save my unfinished review (never visible to other reviewers)."""
        assignment = self._mine(pk)
        data = self._payload(request)
        services.review_save_draft(
            round_item=assignment.round_item,
            reviewer=request.user,
            scores=data["scores"],
            decision=data.get("decision", ""),
            comment=data["comment"],
        )
        return Response(self._detail(self._mine(pk)))

    @extend_schema(
        methods=["POST"],
        request=ReviewWriteSerializer,
        responses=ReviewAssignmentDetailSerializer,
        examples=[REVIEW_EXAMPLE],
        description="Submit my review: every criterion that applies scored, a decision, a comment for revise/reject.",
    )
    @extend_schema(
        methods=["PUT"],
        request=ReviewWriteSerializer,
        responses=ReviewAssignmentDetailSerializer,
        examples=[REVIEW_EXAMPLE],
        description="Change my submitted review while the round is open; the change is recorded with old and new "
        "values and the seconds since I last opened the item.",
    )
    @action(detail=True, methods=["post", "put"])
    def review(self, request: Request, pk: str | None = None) -> Response:
        """Submit (POST) or change (PUT) my review of this item."""
        assignment = self._mine(pk)
        data = self._payload(request)
        service = services.review_submit if request.method == "POST" else services.review_change
        service(
            round_item=assignment.round_item,
            reviewer=request.user,
            scores=data["scores"],
            decision=data.get("decision", ""),
            comment=data["comment"],
        )
        return Response(self._detail(self._mine(pk)))

    @extend_schema(request=None, responses=ReviewAssignmentSerializer)
    @action(detail=True, methods=["post"])
    def skip(self, request: Request, pk: str | None = None) -> Response:
        """Put this item aside: it moves to the end of my queue and stays mine."""
        assignment = self._mine(pk)
        services.review_skip(round_item=assignment.round_item, reviewer=request.user)
        return Response(ReviewAssignmentSerializer(self.get_queryset().get(pk=assignment.pk)).data)

    @staticmethod
    def _payload(request: Request) -> dict:
        payload = ReviewWriteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return payload.validated_data


class RoundItemViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Items of closed rounds for adjudication: every review side by side, then a decision on a conflict."""

    permission_classes = [ADJUDICATE]
    queryset = RoundItem.objects.all()
    serializer_class = RoundItemDetailSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self):  # noqa: ANN201
        return RoundItem.objects.select_related("round", "item__dimension", "adjudicated_by")

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """An item of a round with every reviewer's review once the round is closed (none while it is open)."""
        round_item = self.get_object()
        reviews = [] if round_item.round.is_open else selectors.round_item_reviews(round_item=round_item)
        round_item.reviews = [{"reviewer": r.get_username(), "review": review} for r, review in reviews]
        round_item.n_reviews = sum(
            1 for _r, review in reviews if review is not None and review.status == review.Status.SUBMITTED
        )
        round_item.n_assigned = len(reviews)
        return Response(RoundItemDetailSerializer(round_item).data)

    @extend_schema(
        request=AdjudicateSerializer,
        responses=RoundItemSerializer,
        examples=[OpenApiExample("Accept", value={"decision": "accept", "note": "Both concerns were minor."})],
    )
    @action(detail=True, methods=["post"])
    def adjudicate(self, request: Request, pk: str | None = None) -> Response:
        """Decide a conflict after the round closed (the item gets the status of the decision)."""
        payload = AdjudicateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        round_item = services.round_item_adjudicate(
            round_item=get_object_or_404(RoundItem, pk=pk),
            user=request.user,
            decision=payload.validated_data["decision"],
            note=payload.validated_data["note"],
        )
        round_item = selectors.round_item_list(round=round_item.round).get(pk=round_item.pk)
        return Response(RoundItemSerializer(round_item).data)


# The router mounted at /api/screening/ (config/urls.py); its index lists only the routes the user may use.
router = app_router("screening", needs={"rounds": "screening.review_item", "assignments": "screening.review_item"})
router.register("rounds", RoundViewSet, basename="screening-round")
router.register("assignments", AssignmentViewSet, basename="screening-assignment")
router.register("round-items", RoundItemViewSet, basename="screening-round-item")
