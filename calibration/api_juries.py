"""REST API for judge juries under /api/calibration/juries/: list, read and create juries.

A jury is a ``Judge`` of kind ``jury``; once created it is a candidate of calibration runs, selected and used as the
primary judge through the judges' routes like any judge. Juries name the judges behind them, so they need
``run_judge``, as the judges' routes do.
"""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from calibration.models import Judge, JudgeKind, JuryAggregation
from calibration.services import jury_create
from calibration.views import BLIND
from core.permissions import api_permission


class JurySerializer(serializers.ModelSerializer):
    members = serializers.PrimaryKeyRelatedField(
        many=True, queryset=Judge.objects.filter(kind=JudgeKind.SINGLE), help_text="ids of single judges, two or more"
    )
    member_names = serializers.SerializerMethodField()
    aggregation = serializers.ChoiceField(choices=JuryAggregation.choices)

    class Meta:
        model = Judge
        fields = ["id", "name", "kind", "aggregation", "members", "member_names", "created_at"]
        read_only_fields = ["id", "kind", "member_names", "created_at"]
        # Uniqueness and the jury's rules are checked by the service, which answers with the reason.
        validators = []

    def get_member_names(self, jury: Judge) -> list[str]:
        return sorted(m.name for m in jury.members.all())


class JuryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Judge juries: panels of single judges combined by majority vote or mean signed score."""

    serializer_class = JurySerializer
    queryset = Judge.objects.none()
    permission_classes = [api_permission("calibration.run_judge", why=BLIND)]

    def get_queryset(self):  # noqa: ANN201
        return Judge.objects.filter(kind=JudgeKind.JURY).prefetch_related("members").order_by("name")

    @extend_schema(
        examples=[
            OpenApiExample(
                "Register a jury",
                request_only=True,
                value={"name": "panel", "members": [1, 2, 3], "aggregation": "majority"},
            )
        ]
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Register a jury of two or more single judges."""
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: JurySerializer) -> None:
        data = serializer.validated_data
        serializer.instance = jury_create(
            name=data["name"], members=list(data["members"]), aggregation=data["aggregation"]
        )
