"""How a page hands a posted form to a service: a refusal of the service is shown on the form, as the form's own
errors are."""

from collections.abc import Callable

from django import forms
from django.core.exceptions import ValidationError


def form_write[T](form: forms.Form, write: Callable[[dict], T]) -> T | None:
    """Return ``write(form.cleaned_data)`` when ``form`` is bound and valid; None when it is not, or when ``write``
    refuses with a ``ValidationError``, which is then added to the form as an error of the whole form (the page
    shows it with the form, status 400)."""
    if not form.is_bound or not form.is_valid():
        return None
    try:
        return write(form.cleaned_data)
    except ValidationError as exc:
        form.add_error(None, exc)
        return None
