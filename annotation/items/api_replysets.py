"""REST API of the EiCAP reply-set audit: reply sets, the audit of a reply, expansion into probes, and the review
of the probes on which the independent judge disagreed with the key (no judge endpoint or model is named)."""

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items import selectors
from annotation.items.models import KeyJudgement, Reply, ReplyRevision, ReplySet, ReplyTurn
from annotation.items.serializers import (
    ExpandSerializer,
    KeyJudgementSerializer,
    KeyReviewSerializer,
    ReplyAuditSerializer,
    ReplySerializer,
    ReplySetSerializer,
)
from annotation.items.services import expansion, replysets
from core.pagination import PageSizePagination
from core.permissions import api_permission

VIEW = api_permission("items.view_item")
AUDIT = api_permission("items.change_item", why=gettext_lazy("You do not have permission to audit replies."))
EXPAND = api_permission("items.add_item", why=gettext_lazy("You do not have permission to create probes."))


class ReplySetPagination(PageSizePagination):
    """10 reply sets a page unless ``page_size`` asks for another number, at most 100: a set carries its turns,
    six replies a turn and their revisions (50 sets a page serialised about 1,200 nested rows, 0.1-0.3 s)."""

    page_size = 10
    max_page_size = 100


class ReplySetViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Reply sets with their turns and replies; ``?state=to_audit|audited|expanded`` and ``?dimension=`` filter."""

    lookup_field = "uid"
    lookup_value_regex = "[^/]+"
    serializer_class = ReplySetSerializer
    pagination_class = ReplySetPagination
    queryset = ReplySet.objects.none()

    def get_queryset(self) -> QuerySet[ReplySet]:
        replies = Reply.objects.select_related("current_revision", "audited_by").prefetch_related(
            Prefetch("revisions", queryset=ReplyRevision.objects.select_related("author"))
        )
        turns = ReplyTurn.objects.prefetch_related(Prefetch("replies", queryset=replies))
        params = self.request.query_params
        return (
            selectors.reply_set_list(dimension=params.get("dimension", ""), state=params.get("state", ""))
            .select_related("benchmark")
            .prefetch_related(Prefetch("turns", queryset=turns))
        )

    def get_permissions(self) -> list[BasePermission]:
        return [EXPAND()] if self.action == "expand" else [VIEW()]

    @extend_schema(
        parameters=[
            OpenApiParameter("dimension", str, description="a dimension code"),
            OpenApiParameter("state", str, enum=list(selectors.REPLY_SET_STATES)),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=ExpandSerializer, responses={200: None})
    @action(detail=True, methods=["post"])
    def expand(self, request: Request, uid: str | None = None) -> Response:
        """Create or revise the set's one-vs-three probes; answers what was created, revised and why not."""
        reply_set = get_object_or_404(ReplySet, uid=uid)
        data = ExpandSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = expansion.reply_set_expand(reply_set=reply_set, user=request.user, **data.validated_data)
        return Response(report.as_dict())


class ReplyViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """One reply; ``POST .../audit/`` accepts, rejects (with a reason) or edits it (a new revision)."""

    serializer_class = ReplySerializer
    queryset = Reply.objects.select_related("current_revision", "audited_by").prefetch_related("revisions__author")

    def get_permissions(self) -> list[BasePermission]:
        return [AUDIT()] if self.action == "audit" else [VIEW()]

    @extend_schema(request=ReplyAuditSerializer, responses={200: ReplySerializer})
    @action(detail=True, methods=["post"])
    def audit(self, request: Request, pk: str | None = None) -> Response:
        reply = get_object_or_404(Reply, pk=pk)
        data = ReplyAuditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        replysets.reply_audit(reply=reply, user=request.user, **data.validated_data)
        return Response(ReplySerializer(self.get_queryset().get(pk=reply.pk)).data)


class KeyDisagreementViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """The probe turns on which the newest key validation's judge did not choose the key; ``?review=open`` etc."""

    serializer_class = KeyJudgementSerializer
    pagination_class = PageSizePagination
    queryset = KeyJudgement.objects.none()

    def get_queryset(self) -> QuerySet[KeyJudgement]:
        validation = selectors.key_validation_latest()
        if validation is None:
            return KeyJudgement.objects.none()
        return selectors.key_disagreements(validation=validation, review=self.request.query_params.get("review", ""))

    def get_permissions(self) -> list[BasePermission]:
        return [AUDIT()] if self.action == "review" else [VIEW()]

    @extend_schema(parameters=[OpenApiParameter("review", str, enum=list(KeyJudgement.Review.values))])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=KeyReviewSerializer, responses={200: KeyJudgementSerializer})
    @action(detail=True, methods=["post"])
    def review(self, request: Request, pk: str | None = None) -> Response:
        judgement = get_object_or_404(KeyJudgement, pk=pk)
        data = KeyReviewSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        replysets.key_judgement_review(judgement=judgement, user=request.user, **data.validated_data)
        judgement.refresh_from_db()
        return Response(KeyJudgementSerializer(judgement).data)
