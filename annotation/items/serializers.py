"""API representations of items, revisions and taxonomy."""

from django.urls import reverse
from rest_framework import serializers

from annotation.items.content import KINDS
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemImportJob,
    ItemRevision,
    KeyJudgement,
    Reply,
    ReplyRevision,
    ReplySet,
    ReplyTurn,
    Scenario,
    ScenarioDomain,
    StatusDecision,
)
from annotation.items.services.imports import IMPORT_FORMATS


class RevisionSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    author = serializers.CharField(source="author.username", default=None, read_only=True)

    class Meta:
        model = ItemRevision
        fields = [
            "id",
            "item",
            "number",
            "content",
            "attributes",
            "content_hash",
            "parity_issues",
            "message",
            "author",
            "created_at",
        ]
        read_only_fields = fields


class ItemSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.slug", read_only=True)
    dimension = serializers.CharField(source="dimension.code", read_only=True)
    scenario = serializers.CharField(source="scenario.code", default=None, read_only=True)
    crisis_level = serializers.IntegerField(source="crisis_level.level", default=None, read_only=True)
    emotions = serializers.SerializerMethodField()
    revision = serializers.IntegerField(source="current_revision.number", default=None, read_only=True)
    content = serializers.JSONField(source="current_revision.content", default=None, read_only=True)
    parity_issues = serializers.JSONField(source="current_revision.parity_issues", default=list, read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)
    updated_by = serializers.CharField(source="updated_by.username", default=None, read_only=True)

    class Meta:
        model = Item
        fields = [
            "uid",
            "benchmark",
            "dimension",
            "kind",
            "scenario",
            "emotions",
            "crisis_level",
            "difficulty",
            "status",
            "origin",
            "metadata",
            "revision",
            "content",
            "parity_ok",
            "parity_issues",
            "created_by",
            "created_at",
            "updated_by",
            "updated_at",
        ]
        read_only_fields = fields

    def get_emotions(self, item: Item) -> list[str]:
        return sorted(e.code for e in item.emotions.all())


class ItemWriteSerializer(serializers.Serializer):
    """Input for creating or revising an item; taxonomy is given by codes."""

    uid = serializers.SlugField(max_length=100, required=False)
    benchmark = serializers.SlugField(required=False)
    dimension = serializers.CharField()
    kind = serializers.ChoiceField(choices=KINDS, required=False)
    scenario = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    emotions = serializers.ListField(child=serializers.CharField(), required=False)
    crisis_level = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=5)
    difficulty = serializers.ChoiceField(choices=["", "easy", "medium", "hard"], required=False)
    status = serializers.ChoiceField(
        choices=Item.Status.choices,
        required=False,
        help_text="On create: draft (the default), or, for a lead expert or admin, the status decided, with "
        "status_reason. On revise: the item's current status or nothing; statuses change with POST .../status/.",
    )
    status_reason = serializers.CharField(required=False, allow_blank=True)
    metadata = serializers.DictField(required=False)
    content = serializers.DictField()
    message = serializers.CharField(required=False, allow_blank=True, max_length=500)
    base_revision = serializers.IntegerField(required=False, min_value=1)


class StatusDecisionSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    decided_by = serializers.CharField(source="decided_by.username", default=None, read_only=True)

    class Meta:
        model = StatusDecision
        fields = ["item", "from_status", "to_status", "source", "reason", "reference", "decided_by", "created_at"]
        read_only_fields = fields


class StatusDecideSerializer(serializers.Serializer):
    """Input for a lead expert's or admin's status decision."""

    status = serializers.ChoiceField(choices=Item.Status.choices)
    reason = serializers.CharField()


class BenchmarkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Benchmark
        fields = ["slug", "name_en", "name_zh", "description_en", "description_zh"]


class DimensionSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.slug")
    parent = serializers.CharField(source="parent.code", default=None)

    class Meta:
        model = Dimension
        fields = [
            "benchmark",
            "code",
            "parent",
            "level",
            "name_en",
            "name_zh",
            "subjective",
            "provisional",
            "target_items",
            "definition_en",
            "definition_zh",
        ]


class EmotionSerializer(serializers.ModelSerializer):
    class Meta:
        model = EmotionCategory
        fields = ["code", "name_en", "name_zh", "valence"]


class ScenarioSerializer(serializers.ModelSerializer):
    domain = serializers.CharField(source="domain.code")

    class Meta:
        model = Scenario
        fields = ["code", "domain", "name_en", "name_zh"]


class ScenarioDomainSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScenarioDomain
        fields = ["code", "name_en", "name_zh"]


class CrisisLevelSerializer(serializers.ModelSerializer):
    class Meta:
        model = CrisisLevel
        fields = ["level", "name_en", "name_zh", "definition_en", "definition_zh"]


class ItemImportUploadSerializer(serializers.Serializer):
    """A JSONL file to import in the background (multipart), as the import page takes it."""

    file = serializers.FileField(help_text="one item per line (interchange format) or EmoBench's own file")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS, default="eistudio")
    benchmark = serializers.CharField(required=False, allow_blank=True, max_length=50)
    dry_run = serializers.BooleanField(default=False, help_text="check and report, write nothing")


class ImportLineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField(help_text="0 for the file as a whole")
    field = serializers.CharField()
    message = serializers.CharField()


class ItemImportJobSerializer(serializers.ModelSerializer):
    """Where an import job stands and, once finished, what it imported or every line's error (nothing written)."""

    created_by = serializers.CharField(source="created_by.username", read_only=True)
    percent = serializers.IntegerField(read_only=True, help_text="how far the current stage has got, 0 to 100")
    finished = serializers.BooleanField(read_only=True)
    errors = ImportLineErrorSerializer(many=True, read_only=True)
    flagged = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()), read_only=True, help_text="uid -> parity issues"
    )
    source_faults = serializers.ListField(child=serializers.CharField(), read_only=True)
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = ItemImportJob
        fields = [
            "id",
            "status",
            "finished",
            "stage",
            "processed",
            "total",
            "percent",
            "filename",
            "format",
            "benchmark",
            "dry_run",
            "size",
            "sha256",
            "created",
            "revised",
            "unchanged",
            "flagged_count",
            "flagged",
            "source_faults",
            "error_count",
            "errors",
            "failure",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "status_url",
        ]
        read_only_fields = fields

    def get_status_url(self, job: ItemImportJob) -> str:
        path = reverse("item-import-detail", args=[job.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class ReplyRevisionSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", default=None, read_only=True)

    class Meta:
        model = ReplyRevision
        fields = ["number", "content", "message", "author", "created_at"]
        read_only_fields = fields


class ReplySerializer(serializers.ModelSerializer):
    content = serializers.JSONField(source="current_revision.content", read_only=True)
    revision = serializers.IntegerField(source="current_revision.number", read_only=True)
    audited_by = serializers.CharField(source="audited_by.username", default=None, read_only=True)
    revisions = ReplyRevisionSerializer(many=True, read_only=True)

    class Meta:
        model = Reply
        fields = ["id", "role", "position", "audit", "content", "revision", "audited_by", "audited_at", "revisions"]
        read_only_fields = fields


class ReplyTurnSerializer(serializers.ModelSerializer):
    replies = ReplySerializer(many=True, read_only=True)

    class Meta:
        model = ReplyTurn
        fields = ["number", "user", "replies"]
        read_only_fields = fields


class ReplySetSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.slug", read_only=True)
    dimension = serializers.CharField(source="dimension.code", read_only=True)
    turns = ReplyTurnSerializer(many=True, read_only=True)

    class Meta:
        model = ReplySet
        fields = ["uid", "benchmark", "dimension", "context", "created_at", "expanded_at", "turns"]
        read_only_fields = fields


class ReplyAuditSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject", "edit"])
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    content = serializers.JSONField(required=False, help_text='For an edit: {"en": {"text": ..., "principle": ...}}.')
    base_revision = serializers.IntegerField(required=False, allow_null=True, default=None)


class ExpandSerializer(serializers.Serializer):
    seed = serializers.IntegerField(required=False, default=None, allow_null=True, min_value=0)
    accept = serializers.BooleanField(required=False, default=False)


class KeyJudgementSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    revision = serializers.IntegerField(source="revision.number", read_only=True)
    reviewed_by = serializers.CharField(source="reviewed_by.username", default=None, read_only=True)

    class Meta:
        model = KeyJudgement
        fields = ["id", "item", "revision", "language", "turn", "key", "chosen", "review", "note", "reviewed_by"]
        read_only_fields = fields


class KeyReviewSerializer(serializers.Serializer):
    review = serializers.ChoiceField(choices=["key_stands", "key_wrong"])
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
