"""Writes on what every app shares: the user's profile."""

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.models import UserProfile


@transaction.atomic
def user_set_language(*, user: AbstractBaseUser, language: str) -> UserProfile:
    """Remember the interface language a user chose."""
    if language not in dict(settings.LANGUAGES):
        raise ValidationError({"language": _("Unsupported language %(lang)s.") % {"lang": language}})
    profile, _created = UserProfile.objects.get_or_create(user=user)
    profile.language = language
    profile.full_clean()
    profile.save()
    return profile
