"""Releases: a versioned set of items, each pinned to one revision; a frozen release never changes."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class FrozenReleaseError(ValidationError):
    """A frozen release or its pinned revisions were about to change."""


class ReleaseQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        if self.filter(status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot change."))
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self.filter(status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot be deleted."))
        return super().delete()


class Release(models.Model):
    """A versioned set of items of one benchmark, each pinned to one revision; frozen releases never change."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft")
        FROZEN = "frozen", _("frozen")

    benchmark = models.ForeignKey("items.Benchmark", on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(
        _("version"),
        max_length=40,
        validators=[
            RegexValidator(
                r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$",
                _("Use a semantic version such as 1.0.0 or 1.1.0-rc1."),
            )
        ],
    )
    title = models.CharField(_("title"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    licence = models.CharField(_("licence"), max_length=200, blank=True)
    citation = models.TextField(_("citation"), blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.DRAFT)
    filters = models.JSONField(_("built from filter"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    frozen_at = models.DateTimeField(null=True, blank=True)
    validation = models.JSONField(_("validation at freeze"), default=dict, blank=True)
    override_reason = models.TextField(_("override reason"), blank=True)
    content_checksum = models.CharField(_("content checksum"), max_length=64, blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        permissions = [
            ("manage_release", "Can build, freeze and export releases"),
        ]
        ordering = ["benchmark__slug", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "version"], name="release_version_unique_per_benchmark"),
            models.CheckConstraint(condition=Q(status__in=["draft", "frozen"]), name="release_status_valid"),
            models.CheckConstraint(
                condition=Q(status="draft") | (Q(frozen_at__isnull=False) & ~Q(content_checksum="")),
                name="frozen_release_has_time_and_checksum",
            ),
        ]
        verbose_name = _("release")
        verbose_name_plural = _("releases")

    def __str__(self) -> str:
        return f"{self.benchmark.slug} {self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk and Release.objects.filter(pk=self.pk, status=self.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot change."))
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.pk, status=self.Status.FROZEN).exists():
            raise FrozenReleaseError(_("A frozen release cannot be deleted."))
        return super().delete(*args, **kwargs)

    @property
    def is_frozen(self) -> bool:
        return self.status == self.Status.FROZEN


class ReleasePartQuerySet(models.QuerySet):
    """Rows that belong to a release (its pinned items, its files): none of a frozen release's may change."""

    def _refuse_if_frozen(self) -> None:
        if self.filter(release__status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(self.model.frozen_message)

    def update(self, **kwargs: object) -> int:
        self._refuse_if_frozen()
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        self._refuse_if_frozen()
        return super().delete()

    def bulk_create(self, objs: list, *args: object, **kwargs: object) -> list:
        release_ids = {obj.release_id for obj in objs}
        if Release.objects.filter(pk__in=release_ids, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(self.model.frozen_message)
        return super().bulk_create(objs, *args, **kwargs)


class ReleasePart(models.Model):
    """A row of a release that changes only while the release is a draft."""

    frozen_message = _("The items of a frozen release cannot change.")

    objects = ReleasePartQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: object, **kwargs: object) -> None:
        if Release.objects.filter(pk=self.release_id, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(self.frozen_message)
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        if Release.objects.filter(pk=self.release_id, status=Release.Status.FROZEN).exists():
            raise FrozenReleaseError(self.frozen_message)
        return super().delete(*args, **kwargs)


class ReleaseItem(ReleasePart):
    """One item of a release, pinned to the revision the release contains."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="entries")
    item = models.ForeignKey("items.Item", on_delete=models.PROTECT, related_name="release_entries")
    revision = models.ForeignKey("items.ItemRevision", on_delete=models.PROTECT, related_name="release_entries")

    class Meta:
        ordering = ["release", "item__uid"]
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="release_item_unique"),
        ]
        verbose_name = _("release item")
        verbose_name_plural = _("release items")

    def __str__(self) -> str:
        return f"{self.release} · {self.item_id} r{self.revision_id}"

    def clean(self) -> None:
        if self.revision_id and self.item_id and self.revision.item_id != self.item_id:
            raise ValidationError({"revision": _("The pinned revision belongs to another item.")})


class ReleaseFile(ReleasePart):
    """One export file of a frozen release, kept as written at freeze: every later export returns these bytes.

    Written in the freeze transaction, so a draft has none; size and SHA-256 are the manifest recorded at freeze.
    """

    frozen_message = _("The files of a frozen release cannot change.")

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(_("file name"), max_length=100)
    content = models.BinaryField(_("content"))
    size = models.PositiveBigIntegerField(_("bytes"))
    sha256 = models.CharField(_("SHA-256"), max_length=64)

    class Meta:
        ordering = ["release", "name"]
        constraints = [
            models.UniqueConstraint(fields=["release", "name"], name="release_file_name_unique"),
        ]
        verbose_name = _("release file")
        verbose_name_plural = _("release files")

    def __str__(self) -> str:
        return f"{self.release} · {self.name}"


class ReleaseComparison(models.Model):
    """What changed from one release to another, as a worker computed it for the releases' state in ``inputs_key``.

    Two frozen releases never change, so their comparison is computed once; one with a draft again after the
    draft changes (``annotation.releases.comparisons``).
    """

    old = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+")
    new = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+")
    inputs_key = models.CharField(max_length=64)
    computed_at = models.DateTimeField(_("computed at"))
    added = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    revised = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["old", "new"], name="release_comparison_unique")]
        verbose_name = _("release comparison")
        verbose_name_plural = _("release comparisons")

    def __str__(self) -> str:
        return f"{self.old_id} -> {self.new_id}"


class ReleaseChange(models.Model):
    """One added, removed or revised item of a stored comparison, at its place in its list (by uid)."""

    class Kind(models.TextChoices):
        ADDED = "added", _("added")
        REMOVED = "removed", _("removed")
        REVISED = "revised", _("revised")

    comparison = models.ForeignKey(ReleaseComparison, on_delete=models.CASCADE, related_name="changes")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    position = models.PositiveIntegerField()
    uid = models.CharField(max_length=100)
    old_number = models.PositiveIntegerField(null=True, blank=True)
    new_number = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["comparison", "kind", "position"], name="release_change_position_unique"),
            models.CheckConstraint(condition=Q(kind__in=["added", "removed", "revised"]), name="release_change_kind"),
        ]
        # A page of every list is one range of positions.
        indexes = [models.Index(fields=["comparison", "position"], name="release_change_page")]
        verbose_name = _("release change")
        verbose_name_plural = _("release changes")

    def __str__(self) -> str:
        return f"{self.comparison_id} {self.kind} {self.uid}"
