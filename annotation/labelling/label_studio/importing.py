"""Store the pairwise annotations of a Label Studio export as expert labels of an open comparison set, all or
nothing.

Annotators become accounts by an explicit mapping (Label Studio user id or email to a username or email) or else by
their email; each must be one of the set's experts, who label it blind. A task must be a comparison of the set (as
exported by ``annotation.labelling.label_studio.format``, item and language unchanged); an expert labels a
comparison once, in the file and in the app. Any error refuses the whole file, each naming the task's line and
field. A label is stored as the annotator saw it (the task's shown order), timed by Label Studio's ``lead_time``;
an expert not yet assigned the comparison is assigned it, and the set's progress is counted again.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from annotation.items.interchange import LineError
from annotation.items.services import ImportFailed
from annotation.labelling.label_studio.format import Annotation, read_export
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment
from annotation.labelling.pairwise import canonical_score
from annotation.labelling.services import comparison_set_recount
from core.errors import ServiceError


class SetClosed(ServiceError):
    """A closed set's labels are final: nothing is imported into it."""

    status_code = 409
    code = "set_closed"


def mapping_parse(text: str) -> dict[str, str]:
    """Read an annotator mapping, one ``label-studio-id-or-email = username-or-email`` a line; raise ValueError."""
    mapping = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, sep, target = line.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise ValueError(
                _("mapping line %(line)s: expected 'Label Studio id or email = username or email'") % {"line": n}
            )
        mapping[source.strip().lower()] = target.strip()
    return mapping


class _Accounts:
    """The set's experts, found by username or email, and the accounts outside the set the file names."""

    def __init__(self, comparison_set: ComparisonSet, mapping: dict[str, str], annotations: list[Annotation]):
        self.experts = list(comparison_set.experts.all())
        self.by_name = {u.get_username().lower(): u for u in self.experts}
        self.by_email: dict[str, list[AbstractBaseUser]] = {}
        for user in self.experts:
            if user.email:
                self.by_email.setdefault(user.email.lower(), []).append(user)
        self.mapping = {key.lower(): value for key, value in mapping.items()}
        wanted = {a.annotator_email.lower() for a in annotations if a.annotator_email} | {
            value.lower() for value in self.mapping.values()
        }
        model = get_user_model()
        others = model.objects.exclude(pk__in=[u.pk for u in self.experts])
        self.outside = {u.get_username().lower() for u in others.filter(**{f"{model.USERNAME_FIELD}__in": wanted})}
        self.outside |= {email.lower() for email in others.filter(email__in=wanted).values_list("email", flat=True)}

    def find(self, annotation: Annotation) -> tuple[AbstractBaseUser | None, str]:
        """Return the expert an annotation's annotator is, or None and why not."""
        keys = [key.lower() for key in (annotation.annotator_id, annotation.annotator_email) if key]
        target = next((self.mapping[key] for key in keys if key in self.mapping), None)
        shown = annotation.annotator_email or annotation.annotator_id
        if target is None:
            if not annotation.annotator_email:
                return None, _("annotator %(who)s has no email in the export: map their id to an account") % {
                    "who": shown
                }
            target = annotation.annotator_email
        key = target.lower()
        found = [self.by_name[key]] if key in self.by_name else self.by_email.get(key, [])
        if len(found) == 1:
            return found[0], ""
        if len(found) > 1:
            return None, _("%(who)s is the email of more than one expert of the set: map it to a username") % {
                "who": target
            }
        if key in self.outside:
            return None, _("the account %(who)s is not one of the set's experts") % {"who": target}
        return None, _("no account for annotator %(who)s: map them to one of the set's experts") % {"who": shown}


def _checked(
    comparison_set: ComparisonSet, annotations: list[Annotation], accounts: _Accounts, errors: list[LineError]
) -> list[tuple[Annotation, AbstractBaseUser, Comparison]]:
    comparisons = {
        c.pk: c
        for c in Comparison.objects.filter(
            comparison_set=comparison_set, pk__in={a.comparison for a in annotations}
        ).select_related("item")
    }
    labelled = set(
        ExpertLabel.objects.filter(
            assignment__comparison_set=comparison_set, assignment__comparison__in=list(comparisons)
        ).values_list("assignment__comparison_id", "assignment__expert_id")
    )
    seen: dict[tuple[int, int], int] = {}
    accepted = []
    for annotation in annotations:
        line = annotation.line
        comparison = comparisons.get(annotation.comparison)
        if comparison is None:
            message = _("comparison %(id)s is not in the set %(set)s") % {
                "id": annotation.comparison,
                "set": comparison_set.name,
            }
            errors.append(LineError(line, "data.comparison", message))
            continue
        if (annotation.item, annotation.language) != (comparison.item.uid, comparison.language):
            message = _("the task says %(item)s [%(language)s] but comparison %(id)s is %(real)s [%(real_language)s]")
            values = {"item": annotation.item, "language": annotation.language, "id": comparison.pk}
            values |= {"real": comparison.item.uid, "real_language": comparison.language}
            errors.append(LineError(line, "data.item", message % values))
            continue
        expert, why = accounts.find(annotation)
        if expert is None:
            errors.append(LineError(line, "completed_by", why))
            continue
        key = (comparison.pk, expert.pk)
        if key in labelled:
            message = _("%(who)s already labelled comparison %(id)s in the app") % {
                "who": expert.get_username(),
                "id": comparison.pk,
            }
            errors.append(LineError(line, "completed_by", message))
        elif key in seen:
            message = _("%(who)s labels comparison %(id)s twice (also on line %(other)s)") % {
                "who": expert.get_username(),
                "id": comparison.pk,
                "other": seen[key],
            }
            errors.append(LineError(line, "completed_by", message))
        else:
            seen[key] = line
            accepted.append((annotation, expert, comparison))
    return accepted


@transaction.atomic
def label_studio_import(
    *,
    comparison_set: ComparisonSet,
    data: bytes,
    user: AbstractBaseUser | None,
    mapping: dict[str, str] | None = None,
) -> dict:
    """Store the annotations of a Label Studio JSON export as expert labels of the open set, all or nothing.

    Raise ``SetClosed`` for a closed set and ``ImportFailed`` (every error with its line and field) for a bad file;
    return the counts of tasks, labels stored, assignments added and annotations cancelled in Label Studio.
    """
    comparison_set = ComparisonSet.objects.select_for_update().get(pk=comparison_set.pk)
    if not comparison_set.is_open:
        raise SetClosed(
            _("%(name)s is closed: its labels are final, so no annotations are imported into it.")
            % {"name": comparison_set.name}
        )
    read = read_export(data, max_depth=settings.JSON_MAX_DEPTH)
    errors = read.errors
    accounts = _Accounts(comparison_set, mapping or {}, read.annotations)
    accepted = _checked(comparison_set, read.annotations, accounts, errors)
    if errors:
        raise ImportFailed(sorted(errors, key=lambda e: e.line))
    if not accepted:
        raise ImportFailed([LineError(1, "annotations", _("the file holds no annotations to import"))])
    existing, created = _assignments_for(comparison_set, accepted)
    labels = [
        ExpertLabel(
            assignment=existing[(comparison.pk, expert.pk)],
            score=canonical_score(
                shown_order=annotation.shown_order, winner=annotation.winner, margin=annotation.margin
            ),
            shown_order=annotation.shown_order,
            seconds_spent=annotation.seconds,
        )
        for annotation, expert, comparison in accepted
    ]
    ExpertLabel.objects.bulk_create(labels)
    comparison_set_recount(comparison_set=comparison_set)
    return {
        "tasks": read.tasks,
        "labels": len(labels),
        "assignments_added": len(created),
        "cancelled": read.cancelled,
        "experts": sorted({expert.get_username() for _a, expert, _c in accepted}),
        "imported_by": user.get_username() if user is not None else None,
    }


def _assignments_for(comparison_set: ComparisonSet, accepted: list) -> tuple[dict, list[LabelAssignment]]:
    """Return the assignment of each accepted annotation by (comparison, expert), adding those the set lacks at the
    end of their experts' queues (in the annotation's left/right order); and the assignments added."""
    existing = {
        (a.comparison_id, a.expert_id): a
        for a in LabelAssignment.objects.filter(
            comparison_set=comparison_set, comparison__in=[c for _a, _e, c in accepted]
        )
    }
    ends = dict(
        LabelAssignment.objects.filter(comparison_set=comparison_set)
        .values("expert")
        .annotate(end=Max("position"))
        .values_list("expert", "end")
    )
    created = []
    for annotation, expert, comparison in accepted:
        if (comparison.pk, expert.pk) not in existing:
            ends[expert.pk] = ends.get(expert.pk, 0) + 1
            assignment = LabelAssignment(
                comparison=comparison,
                comparison_set=comparison_set,
                expert=expert,
                shown_order=annotation.shown_order,
                position=ends[expert.pk],
            )
            existing[(comparison.pk, expert.pk)] = assignment
            created.append(assignment)
    LabelAssignment.objects.bulk_create(created)
    return existing, created
