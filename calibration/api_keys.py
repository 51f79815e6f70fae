"""REST API of EiCAP key validations under /api/calibration/key-validations/: start one, read its figure and the
probe turns on which the judge disagreed with the key. They name the judge's endpoint, so they need ``run_judge``."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.items.models import Benchmark, KeyValidation
from annotation.items.selectors import key_disagreements
from annotation.items.serializers import KeyJudgementSerializer
from calibration import keys, selectors
from calibration.views import BLIND
from core.permissions import api_permission
from llm.models import Endpoint


class KeyValidationSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    endpoint = serializers.PrimaryKeyRelatedField(queryset=Endpoint.objects.filter(is_active=True))
    endpoint_name = serializers.CharField(source="endpoint.name", read_only=True)
    run = serializers.IntegerField(source="llm_run_id", read_only=True)

    class Meta:
        model = KeyValidation
        fields = [
            "id",
            "benchmark",
            "endpoint",
            "endpoint_name",
            "seed",
            "run",
            "collected",
            "collected_at",
            "kappa",
            "ci_low",
            "ci_high",
            "agreement",
            "n_units",
            "n_probes",
            "unanswered",
            "n_boot",
            "undefined_reason",
            "created_at",
        ]
        read_only_fields = [f for f in fields if f not in ("benchmark", "endpoint", "seed")]


class KeyValidationViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Key validations; ``POST`` starts one (``benchmark`` slug, judge ``endpoint`` id, ``seed``)."""

    serializer_class = KeyValidationSerializer
    permission_classes = [api_permission("calibration.run_judge", why=BLIND)]
    queryset = KeyValidation.objects.none()

    def get_queryset(self):  # noqa: ANN201
        return selectors.key_validation_list()

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        data = KeyValidationSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        validation = keys.key_validation_start(user=request.user, **data.validated_data)
        return Response(KeyValidationSerializer(validation).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=KeyJudgementSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def disagreements(self, request: Request, pk: str | None = None) -> Response:
        """The probe turns on which the judge chose another option than the key, or none."""
        validation = get_object_or_404(KeyValidation, pk=pk)
        found = key_disagreements(validation=validation)
        return Response(KeyJudgementSerializer(found, many=True).data)
