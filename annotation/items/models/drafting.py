"""Item templates written by experts, and LLM drafting jobs that turn them into candidate items."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ItemTemplate(models.Model):
    """Expert instructions for drafting items of one dimension; saving a change makes a new version."""

    dimension = models.ForeignKey("items.Dimension", on_delete=models.PROTECT, related_name="item_templates")
    version = models.PositiveIntegerField(_("version"))
    kind = models.CharField(_("item kind"), max_length=20, default="mcq")
    instructions = models.TextField(_("instructions"))
    constraints = models.TextField(_("constraints"), blank=True)
    scenarios = models.ManyToManyField("items.Scenario", blank=True, related_name="+")
    emotions = models.ManyToManyField("items.EmotionCategory", blank=True, related_name="+")
    seed_items = models.ManyToManyField(
        "items.Item", blank=True, related_name="+", help_text=_("Expert-revised items shown as examples.")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dimension__position", "-version"]
        constraints = [models.UniqueConstraint(fields=["dimension", "version"], name="item_template_version_unique")]
        verbose_name = _("item template")
        verbose_name_plural = _("item templates")

    def __str__(self) -> str:
        return _("%(dimension)s template v%(version)s") % {"dimension": self.dimension.code, "version": self.version}


class DraftingJob(models.Model):
    """Ask an LLM for candidate items from a template; the candidates land as drafts with their provenance."""

    template = models.ForeignKey(ItemTemplate, on_delete=models.PROTECT, related_name="jobs")
    endpoint = models.ForeignKey("llm.Endpoint", on_delete=models.PROTECT, related_name="+")
    count = models.PositiveIntegerField(_("how many"))
    languages = models.JSONField(_("languages"), default=list)
    translate = models.BooleanField(_("draft the other language too (machine-drafted)"), default=False)
    # Reply-set templates only: user turns per dialogue (1, or 2 where turn 2 reframes turn 1), and the
    # researcher's own dialogues, when given, instead of drafted ones (a list of lists of {"en", "zh"} turns).
    turns = models.PositiveSmallIntegerField(_("user turns per dialogue"), default=1)
    given_turns = models.JSONField(_("given user turns"), default=list, blank=True)
    scenarios = models.ManyToManyField("items.Scenario", blank=True, related_name="+")
    emotions = models.ManyToManyField("items.EmotionCategory", blank=True, related_name="+")
    llm_run = models.ForeignKey("llm.Run", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    collected = models.BooleanField(default=False)
    created_uids = models.JSONField(default=list, blank=True)
    failures = models.JSONField(_("malformed drafts"), default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("drafting job")
        verbose_name_plural = _("drafting jobs")

    def __str__(self) -> str:
        return f"{self.template} x{self.count}"
