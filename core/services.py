"""Writes on what every app shares: the user's profile and API tokens."""

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from core.models import UserProfile
from core.tokens import token_expired


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


@transaction.atomic
def api_token_issue(*, user: AbstractBaseUser) -> Token:
    """Return the user's API token, replacing it with a new one if it has expired."""
    token = Token.objects.select_for_update().filter(user=user).first()
    if token is not None and not token_expired(token):
        return token
    if token is not None:
        token.delete()
    return Token.objects.create(user=user)


@transaction.atomic
def api_tokens_revoke(*, user: AbstractBaseUser) -> int:
    """Delete the user's API tokens (their password changed); return how many there were."""
    deleted, _by_model = Token.objects.filter(user=user).delete()
    return deleted
