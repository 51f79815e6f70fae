"""Serializers of the screening API: rounds, my assignments and reviews, adjudication, statistics."""

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from annotation.items.models import Benchmark
from annotation.screening.models import DECISIONS, Review, ReviewAssignment, RoundItem, ScreeningRound


class RoundSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    opened_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    closed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    items = serializers.IntegerField(source="n_items", read_only=True)
    my_assigned = serializers.IntegerField(read_only=True)
    my_submitted = serializers.IntegerField(read_only=True)

    class Meta:
        model = ScreeningRound
        fields = [
            "id",
            "benchmark",
            "number",
            "title",
            "status",
            "filters",
            "reviewers_per_item",
            "deadline",
            "items",
            "my_assigned",
            "my_submitted",
            "opened_by",
            "opened_at",
            "closed_by",
            "closed_at",
            "close_note",
        ]
        read_only_fields = fields


class RoundDetailSerializer(RoundSerializer):
    criteria = serializers.SlugRelatedField(slug_field="code", many=True, read_only=True)
    reviewers = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)

    class Meta(RoundSerializer.Meta):
        fields = [*RoundSerializer.Meta.fields, "criteria", "reviewers"]
        read_only_fields = fields


class RoundOpenSerializer(serializers.Serializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    title = serializers.CharField(max_length=200)
    reviewers = serializers.SlugRelatedField(
        slug_field="username", many=True, queryset=get_user_model().objects.filter(is_active=True)
    )
    reviewers_per_item = serializers.IntegerField(min_value=1, default=2)
    status = serializers.ChoiceField(choices=["", "draft", "in_screening"], required=False, default="")
    dimension = serializers.CharField(required=False, allow_blank=True, default="", help_text=_("dimension code"))
    kind = serializers.CharField(required=False, allow_blank=True, default="")
    criteria = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_empty=False,
        help_text=_("Criterion codes; default: every criterion of the benchmark."),
    )
    deadline = serializers.DateTimeField(required=False, allow_null=True)


class RoundCloseSerializer(serializers.Serializer):
    unreviewed = serializers.ChoiceField(
        choices=["return_to_authors", "decide_on_submitted"],
        required=False,
        allow_null=True,
        help_text=_("What happens to items still lacking reviews (required when there are any)."),
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")


class RoundStatisticsSerializer(serializers.Serializer):
    final = serializers.BooleanField(help_text=_("True once the round is closed: the figures stored then."))
    statistics = serializers.DictField(allow_null=True)
    detail = serializers.CharField(required=False)


class RoundItemSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    dimension = serializers.CharField(source="item.dimension.code", read_only=True)
    kind = serializers.CharField(source="item.kind", read_only=True)
    revision = serializers.IntegerField(source="revision_id", read_only=True)
    submitted_reviews = serializers.IntegerField(source="n_reviews", read_only=True)
    assigned_reviews = serializers.IntegerField(source="n_assigned", read_only=True)
    adjudicated_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = RoundItem
        fields = [
            "id",
            "item",
            "dimension",
            "kind",
            "revision",
            "outcome",
            "submitted_reviews",
            "assigned_reviews",
            "adjudicated_by",
            "adjudicated_at",
            "adjudication_note",
        ]
        read_only_fields = fields


class ReviewSerializer(serializers.ModelSerializer):
    changes = serializers.SerializerMethodField()

    class Meta:
        model = Review
        fields = ["status", "scores", "decision", "comment", "started_at", "submitted_at", "changed_at", "changes"]
        read_only_fields = fields

    def get_changes(self, review: Review) -> int:
        return review.changes.count()


class ReviewAssignmentSerializer(serializers.ModelSerializer):
    """One of my assignments: the round, the item and my review's state (no content)."""

    round = serializers.IntegerField(source="round_item.round_id", read_only=True)
    round_item = serializers.IntegerField(source="round_item_id", read_only=True)
    item = serializers.CharField(source="round_item.item.uid", read_only=True)
    review_status = serializers.SerializerMethodField()

    class Meta:
        model = ReviewAssignment
        fields = ["id", "round", "round_item", "item", "position", "skipped_at", "review_status"]
        read_only_fields = fields

    def get_review_status(self, assignment: ReviewAssignment) -> str:
        review = getattr(assignment, "review", None)
        return review.status if review else "none"


class ReviewCriterionSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    scale = serializers.CharField()


class ReviewAssignmentDetailSerializer(ReviewAssignmentSerializer):
    """One of my assignments with what I review: the revision's content, the criteria and my review."""

    dimension = serializers.CharField(source="round_item.item.dimension.code", read_only=True)
    kind = serializers.CharField(source="round_item.item.kind", read_only=True)
    revision = serializers.IntegerField(source="round_item.revision.number", read_only=True)
    content = serializers.JSONField(source="round_item.revision.content", read_only=True)
    criteria = ReviewCriterionSerializer(many=True, read_only=True)
    review = serializers.SerializerMethodField()

    class Meta(ReviewAssignmentSerializer.Meta):
        fields = [
            *ReviewAssignmentSerializer.Meta.fields,
            *["dimension", "kind", "revision", "content", "criteria", "review"],
        ]
        read_only_fields = fields

    def get_review(self, assignment: ReviewAssignment) -> dict | None:
        review = getattr(assignment, "review", None)
        return ReviewSerializer(review).data if review else None


class ReviewWriteSerializer(serializers.Serializer):
    scores = serializers.DictField(
        help_text=_("Criterion code to a score 1 to 5, or pass/fail."), required=False, default=dict
    )
    decision = serializers.ChoiceField(choices=[code for code, _label in DECISIONS], required=False, allow_blank=True)
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000)


class AdjudicateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=[code for code, _label in DECISIONS])
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000)


class RoundItemReviewSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    review = ReviewSerializer(allow_null=True)


class RoundItemDetailSerializer(RoundItemSerializer):
    reviews = RoundItemReviewSerializer(many=True, read_only=True)

    class Meta(RoundItemSerializer.Meta):
        fields = [*RoundItemSerializer.Meta.fields, "reviews"]
        read_only_fields = fields
