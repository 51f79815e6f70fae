"""core.forms.form_write: a valid bound form goes to the service; the service's refusal is shown on the form."""

from django import forms
from django.core.exceptions import ValidationError

from core.forms import form_write


class NameForm(forms.Form):
    name = forms.CharField(max_length=10)


def test_a_valid_form_is_written_with_its_cleaned_data():
    written = form_write(NameForm({"name": " Ada "}), lambda data: f"stored {data['name']}")
    assert written == "stored Ada"


def test_an_unbound_or_invalid_form_writes_nothing():
    calls = []
    assert form_write(NameForm(), calls.append) is None
    invalid = NameForm({"name": "x" * 11})
    assert form_write(invalid, calls.append) is None
    assert calls == [] and "name" in invalid.errors


def test_a_refusal_of_the_service_is_an_error_of_the_whole_form():
    def refuse(data: dict) -> None:
        raise ValidationError("That name is taken.")

    form = NameForm({"name": "Ada"})
    assert form_write(form, refuse) is None
    assert form.non_field_errors() == ["That name is taken."]
