"""Attention checks: comparisons of a set with a known answer, marked by its builder (experts are not told)."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.labelling.models import Comparison, ComparisonSet

GOLD_WINNERS = {"A": 1, "B": -1, "TIE": 0}


@transaction.atomic
def attention_checks_set(
    *, comparison_set: ComparisonSet, answers: dict[int, str], user: AbstractBaseUser | None
) -> int:
    """Mark comparisons of an open set as attention checks with their known answer (``A``, ``B`` or ``tie``, in the
    comparison's canonical order), or clear one with an empty answer; return how many changed.

    Experts are not told which comparisons are checks: nothing they see changes. Every id must be a comparison of
    the set and every answer one of the three; otherwise nothing is saved and each problem is named.
    """
    if not comparison_set.is_open:
        raise ValidationError(_("This comparison set is closed: its attention checks can no longer change."))
    errors = []
    known = set(Comparison.objects.filter(comparison_set=comparison_set, pk__in=answers).values_list("pk", flat=True))
    for pk, answer in answers.items():
        if pk not in known:
            errors.append(_("Comparison %(id)s is not in this set.") % {"id": pk})
        elif answer and answer.strip().upper() not in GOLD_WINNERS:
            errors.append(
                _("Comparison %(id)s: the known answer must be A, B or tie, not %(answer)s.")
                % {"id": pk, "answer": answer}
            )
    if errors:
        raise ValidationError(errors)
    changed = 0
    for pk, answer in answers.items():
        gold = GOLD_WINNERS[answer.strip().upper()] if answer else None
        rows = Comparison.objects.filter(pk=pk)
        rows = rows.filter(gold_winner__isnull=False) if gold is None else rows.exclude(gold_winner=gold)
        changed += rows.update(gold_winner=gold)
    return changed
