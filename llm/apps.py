from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LlmConfig(AppConfig):
    name = "llm"
    verbose_name = _("LLM endpoints and calls")
