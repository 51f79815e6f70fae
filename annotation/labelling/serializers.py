"""Serializers of the labelling API. What experts receive is blind: response texts as left/right, never models."""

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from annotation.items.models import Benchmark, Dimension
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment
from annotation.labelling.pairwise import MARGINS, WINNERS, shown_choice


class ResponseImportSerializer(serializers.Serializer):
    """A JSONL file upload (``file``) or the same rows as a JSON list (``rows``)."""

    file = serializers.FileField(required=False, help_text=_("JSONL: one {item, language, model, text} per line."))
    rows = serializers.ListField(child=serializers.DictField(), required=False, allow_empty=False)

    def validate(self, attrs: dict) -> dict:
        if bool(attrs.get("file")) == bool(attrs.get("rows")):
            raise serializers.ValidationError({"file": [_("Send either a JSONL file or a list of rows.")]})
        return attrs


class ImportResultSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ComparisonSetSerializer(serializers.ModelSerializer):
    """A set as everyone who may see the set list sees it: no model names, no responses.

    The description is the builders' free text, which may name models: only builders receive it, everyone else
    ``null`` (the field is always there, as the OpenAPI schema says).
    """

    benchmark = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    comparisons = serializers.IntegerField(source="n_comparisons", read_only=True)
    my_labelled = serializers.IntegerField(read_only=True)
    my_assigned = serializers.IntegerField(read_only=True)
    is_open = serializers.BooleanField(read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    description = serializers.CharField(
        read_only=True, allow_null=True, help_text="The builders' free text; null for those who do not build sets."
    )

    class Meta:
        model = ComparisonSet
        fields = [
            "id",
            "name",
            "benchmark",
            "description",
            "seed",
            "per_stratum",
            "experts_per_comparison",
            "comparisons",
            "my_labelled",
            "my_assigned",
            "is_open",
            "created_by",
            "created_at",
            "closed_at",
        ]
        read_only_fields = fields

    def to_representation(self, instance: ComparisonSet) -> dict:
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not request.user.has_perm("labelling.manage_comparisons"):
            data["description"] = None
        return data


class ExpertProgressSerializer(serializers.Serializer):
    expert = serializers.CharField()
    assigned = serializers.IntegerField()
    labelled = serializers.IntegerField()
    skipped = serializers.IntegerField()
    changed = serializers.IntegerField()


class ComparisonSetDetailSerializer(ComparisonSetSerializer):
    progress = ExpertProgressSerializer(many=True, read_only=True)

    class Meta(ComparisonSetSerializer.Meta):
        fields = [*ComparisonSetSerializer.Meta.fields, "progress"]
        read_only_fields = fields


class ComparisonSetCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    experts = serializers.SlugRelatedField(
        slug_field="username", many=True, queryset=get_user_model().objects.filter(is_active=True)
    )
    per_stratum = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    experts_per_comparison = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    seed = serializers.IntegerField(default=0)
    languages = serializers.ListField(
        child=serializers.ChoiceField(choices=["en", "zh"]), default=["en", "zh"], allow_empty=False
    )
    dimensions = serializers.ListField(child=serializers.CharField(), required=False, allow_empty=False)
    description = serializers.CharField(required=False, allow_blank=True, default="")

    def validate(self, attrs: dict) -> dict:
        codes = attrs.get("dimensions")
        if codes:
            found = list(Dimension.objects.filter(benchmark=attrs["benchmark"], code__in=codes))
            unknown = sorted(set(codes) - {d.code for d in found})
            if unknown:
                raise serializers.ValidationError(
                    {"dimensions": [_("Unknown dimensions: %(codes)s.") % {"codes": ", ".join(unknown)}]}
                )
            attrs["dimensions"] = found
        return attrs


class LabellingProgressSerializer(serializers.Serializer):
    labelled = serializers.IntegerField()
    assigned = serializers.IntegerField()
    skipped = serializers.IntegerField()


class ExpertStatisticsSerializer(serializers.Serializer):
    """One expert of a set, for its builder: progress, time per label, agreement, attention checks."""

    expert_id = serializers.IntegerField()
    username = serializers.CharField()
    name = serializers.CharField()
    labelled = serializers.IntegerField()
    assigned = serializers.IntegerField()
    skipped = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True, help_text="Median seconds per label (timed labels).")
    timed_labels = serializers.IntegerField()
    agreeing_pairs = serializers.IntegerField()
    shared_pairs = serializers.IntegerField(help_text="Pairs of this expert's label with another's, same comparison.")
    agreement = serializers.FloatField(allow_null=True, help_text="agreeing_pairs / shared_pairs (same side).")
    checks_answered = serializers.IntegerField()
    checks_correct = serializers.IntegerField()
    check_accuracy = serializers.FloatField(allow_null=True)


class AttentionCheckSerializer(serializers.Serializer):
    comparison = serializers.IntegerField(min_value=1)
    answer = serializers.ChoiceField(
        choices=["A", "B", "tie", ""], allow_blank=True, help_text="Known answer, canonical order; empty clears."
    )


class AttentionChecksSerializer(serializers.Serializer):
    checks = AttentionCheckSerializer(many=True, allow_empty=False, max_length=5000)


class BlindComparisonSerializer(serializers.Serializer):
    """One assigned comparison as the expert sees it: the prompt, and two anonymised texts left and right."""

    assignment = serializers.IntegerField()
    comparison_set = serializers.IntegerField()
    item = serializers.CharField(help_text=_("The item's uid."))
    language = serializers.CharField()
    dimension = serializers.CharField(help_text=_("The dimension's code."))
    dimension_name = serializers.CharField()
    dimension_definition = serializers.CharField()
    context = serializers.CharField()
    prompt = serializers.CharField()
    left = serializers.CharField()
    right = serializers.CharField()
    skipped = serializers.BooleanField()
    label = serializers.DictField(allow_null=True, help_text=_("My verdict as shown on screen, if I labelled it."))


class NextComparisonSerializer(serializers.Serializer):
    done = serializers.BooleanField()
    progress = LabellingProgressSerializer()
    comparison = BlindComparisonSerializer(allow_null=True)


class LabelWriteSerializer(serializers.Serializer):
    """A verdict as seen on screen: the better side (or a tie) and the margin, 1 to 5 pluses."""

    winner = serializers.ChoiceField(choices=WINNERS)
    margin = serializers.ChoiceField(choices=list(MARGINS), required=False, allow_null=True)
    rationale = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000)

    def validate(self, attrs: dict) -> dict:
        if attrs["winner"] == "tie" and attrs.get("margin"):
            raise serializers.ValidationError({"margin": [_("A tie has no margin.")]})
        if attrs["winner"] != "tie" and not attrs.get("margin"):
            raise serializers.ValidationError({"margin": [_("Choose a margin from + to +++++.")]})
        return attrs


class LabelSerializer(serializers.ModelSerializer):
    """The expert's own label, in the orientation they saw (left/right) and canonically (signed score)."""

    assignment = serializers.IntegerField(source="assignment_id", read_only=True)
    comparison_set = serializers.IntegerField(source="assignment.comparison.comparison_set_id", read_only=True)
    item = serializers.CharField(source="assignment.comparison.item.uid", read_only=True)
    language = serializers.CharField(source="assignment.comparison.language", read_only=True)
    dimension = serializers.CharField(source="assignment.comparison.dimension.code", read_only=True)
    winner = serializers.SerializerMethodField()
    margin = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField()

    class Meta:
        model = ExpertLabel
        fields = [
            "id",
            "assignment",
            "comparison_set",
            "item",
            "language",
            "dimension",
            "winner",
            "margin",
            "score",
            "shown_order",
            "rationale",
            "seconds_spent",
            "created_at",
            "changed_at",
            "changes",
        ]
        read_only_fields = fields

    def get_winner(self, label: ExpertLabel) -> str:
        return shown_choice(shown_order=label.shown_order, score=label.score)[0]

    def get_margin(self, label: ExpertLabel) -> int:
        return shown_choice(shown_order=label.shown_order, score=label.score)[1]

    def get_changes(self, label: ExpertLabel) -> int:
        return getattr(label, "n_changes", 0)


class LabelAssignmentSerializer(serializers.ModelSerializer):
    """One of my assignments in a queue: which comparison, whether labelled or skipped (no texts)."""

    comparison_set = serializers.IntegerField(source="comparison.comparison_set_id", read_only=True)
    item = serializers.CharField(source="comparison.item.uid", read_only=True)
    language = serializers.CharField(source="comparison.language", read_only=True)
    dimension = serializers.CharField(source="comparison.dimension.code", read_only=True)
    labelled = serializers.SerializerMethodField()

    class Meta:
        model = LabelAssignment
        fields = ["id", "comparison_set", "item", "language", "dimension", "position", "skipped_at", "labelled"]
        read_only_fields = fields

    def get_labelled(self, assignment: LabelAssignment) -> bool:
        return assignment.labelled_at is not None
