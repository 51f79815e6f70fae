"""API representations of releases."""

from rest_framework import serializers

from annotation.releases.models import Release


class ReleaseSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.slug", read_only=True)
    items = serializers.IntegerField(source="entries.count", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)
    frozen_by = serializers.CharField(source="frozen_by.username", default=None, read_only=True)

    class Meta:
        model = Release
        fields = [
            "id",
            "benchmark",
            "version",
            "title",
            "description",
            "licence",
            "citation",
            "status",
            "filters",
            "items",
            "created_by",
            "created_at",
            "frozen_by",
            "frozen_at",
            "validation",
            "override_reason",
            "content_checksum",
        ]
        read_only_fields = fields


class ReleaseCreateSerializer(serializers.Serializer):
    benchmark = serializers.SlugField()
    version = serializers.CharField(max_length=40)
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    licence = serializers.CharField(required=False, allow_blank=True, default="")
    citation = serializers.CharField(required=False, allow_blank=True, default="")
    filters = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False)


class ReleaseFreezeSerializer(serializers.Serializer):
    override_reason = serializers.CharField(required=False, allow_blank=True, default="")


class ReleaseItemsSerializer(serializers.Serializer):
    add = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    remove = serializers.ListField(child=serializers.CharField(), required=False, default=list)
