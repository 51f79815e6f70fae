"""The record of every change of an item's workflow status: who decided it, how, and why."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotation.items.models.items import Item


class StatusDecisionQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        raise ValidationError(_("Status decisions are a permanent record and cannot be changed."))


class DecisionSource(models.TextChoices):
    CREATED = "created", _("created")
    SCREENING = "screening", _("screening round")
    LEAD_DECISION = "lead_decision", _("lead decision")
    IMPORT = "import", _("import")
    # A new revision of an accepted item sends it back to draft: its new text has not been screened.
    REVISION = "revision", _("revision after acceptance")


class StatusDecision(models.Model):
    """One change of ``Item.status`` (or an item's first status when it was created); never edited afterwards."""

    Source = DecisionSource

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="status_decisions")
    # Blank only for a created item, which had no status before.
    from_status = models.CharField(_("from"), max_length=20, choices=Item.Status.choices, blank=True)
    to_status = models.CharField(_("to"), max_length=20, choices=Item.Status.choices)
    source = models.CharField(_("source"), max_length=20, choices=DecisionSource.choices)
    reason = models.TextField(_("reason"), blank=True)
    # Structured pointers to what caused the decision: a round and its outcome, an import line.
    reference = models.JSONField(_("reference"), default=dict, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StatusDecisionQuerySet.as_manager()

    class Meta:
        ordering = ["item", "created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(to_status__in=Item.Status.values), name="decision_to_status_valid"),
            models.CheckConstraint(
                condition=Q(from_status__in=[*Item.Status.values, ""]), name="decision_from_status_valid"
            ),
            models.CheckConstraint(condition=Q(source__in=DecisionSource.values), name="decision_source_valid"),
            models.CheckConstraint(
                condition=(Q(source=DecisionSource.CREATED) & Q(from_status=""))
                | (~Q(source=DecisionSource.CREATED) & ~Q(from_status="") & ~Q(from_status=F("to_status"))),
                name="decision_changes_status",
            ),
            models.CheckConstraint(
                condition=Q(source__in=[DecisionSource.CREATED, DecisionSource.SCREENING]) | ~Q(reason=""),
                name="decision_outside_screening_has_reason",
            ),
        ]
        indexes = [models.Index(fields=["item", "created_at"])]
        verbose_name = _("status decision")
        verbose_name_plural = _("status decisions")

    def __str__(self) -> str:
        return f"{self.item_id}: {self.from_status or '-'} -> {self.to_status} ({self.source})"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ValidationError(_("Status decisions are a permanent record and cannot be changed."))
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise ValidationError(_("Status decisions are a permanent record and cannot be deleted."))
