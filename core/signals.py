"""Revoke a user's API tokens when their password changes, whatever changed it.

A password changes in the admin, through ``set_password`` and ``save`` anywhere (a command, a script, a future
page) or by writing a new hash; so this listens to the user model's saves rather than to one view. Upgrading a
hash to a newer hasher on sign-in also writes a new hash, and replaces the tokens too (rare: after a hashing change).
"""

from django.contrib.auth.base_user import AbstractBaseUser

from core import services

_CHANGED = "_core_password_changed"


def note_password_change(
    sender: type[AbstractBaseUser], instance: AbstractBaseUser, raw: bool = False, **kwargs: object
) -> None:
    """Before a user is saved, note whether the stored password hash is about to change (``pre_save``)."""
    update_fields = kwargs.get("update_fields")
    if raw or instance._state.adding or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    setattr(instance, _CHANGED, stored is not None and stored != instance.password)


def revoke_tokens_after_password_change(
    sender: type[AbstractBaseUser], instance: AbstractBaseUser, **kwargs: object
) -> None:
    """After the save, revoke the user's API tokens if the password changed (``post_save``)."""
    if getattr(instance, _CHANGED, False):
        setattr(instance, _CHANGED, False)
        services.api_tokens_revoke(user=instance)
