"""Services and reads for model responses, comparison sets and expert pairwise labels."""

import itertools
import random
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items.interchange import LineError, read_jsonl
from annotation.items.models import Benchmark, Dimension, Item
from annotation.items.services import ImportFailed
from annotation.labelling.models import (
    Comparison,
    ComparisonSet,
    ExpertLabel,
    ExpertProgress,
    LabelAssignment,
    LabelChange,
    ModelResponse,
)
from annotation.labelling.pairwise import canonical_score
from annotation.queue import services as queue
from core.errors import ServiceError
from core.inputs import NUL, nul_sentence
from llm import collectors
from llm import services as llm_services
from llm.models import Endpoint, Run, RunItem

RESPONSE_FIELDS = {"item", "language", "model", "text"}


@transaction.atomic
def responses_import(*, data: bytes, user: AbstractBaseUser | None) -> dict:
    """Import model responses from JSONL rows ``{"item", "language", "model", "text"}``, all or nothing.

    A response already stored with the same text is left alone; a different text for the same item, language
    and model is an error (responses are evidence and are not silently replaced).
    """
    try:
        with transaction.atomic():
            return _responses_store(data=data, user=user)
    except IntegrityError:
        # Another import stored some of these responses at the same moment (the same file sent twice): read the
        # stored responses again, now committed, and compare with them as if this import had come second.
        return _responses_store(data=data, user=user)


def _responses_store(*, data: bytes, user: AbstractBaseUser | None) -> dict:
    rows, errors = read_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES)
    items = {i.uid: i for i in Item.objects.filter(uid__in=[str(r.get("item")) for _, r in rows])}
    existing = {
        (r.item.uid, r.language, r.model_name): r
        for r in ModelResponse.objects.filter(item__in=items.values()).select_related("item")
    }
    seen: dict[tuple, int] = {}
    new = []
    unchanged = 0
    for line, row in rows:
        problems = _response_shape_errors(line, row)
        if problems:
            errors += problems
            continue
        key = (row["item"], row["language"], row["model"])
        problems = _response_value_errors(line, row, items.get(row["item"]))
        if key in seen:
            message = _("duplicate response (first on line %(line)s)") % {"line": seen[key]}
            problems.append(LineError(line, "model", message))
        seen[key] = line
        old = existing.get(key)
        if not problems and old is not None and old.text != row["text"]:
            message = _("a different text is already stored for this item, language and model")
            problems.append(LineError(line, "text", message))
        errors += problems
        if problems:
            continue
        if old is not None:
            unchanged += 1
            continue
        new.append(
            ModelResponse(
                item=items[row["item"]],
                language=row["language"],
                model_name=row["model"].strip(),
                text=row["text"],
                created_by=user,
            )
        )
    if not rows and not errors:
        errors.append(LineError(0, "file", _("the file holds no records")))
    if errors:
        raise ImportFailed(errors)
    ModelResponse.objects.bulk_create(new)
    return {"created": len(new), "unchanged": unchanged}


def _response_shape_errors(line: int, row: dict) -> list[LineError]:
    """Return the row's unknown and missing fields, and fields that are not text."""
    problems = [LineError(line, name, _("unknown field")) for name in sorted(set(row) - RESPONSE_FIELDS)]
    problems += [LineError(line, name, _("required")) for name in sorted(RESPONSE_FIELDS - set(row))]
    for name in sorted(RESPONSE_FIELDS & set(row)):
        if not isinstance(row[name], str):
            message = _("must be text, got %(type)s") % {"type": type(row[name]).__name__}
            problems.append(LineError(line, name, message))
    return problems


def _response_value_errors(line: int, row: dict, item: Item | None) -> list[LineError]:
    """Return what is wrong with a well-shaped row's values: its item (``item``, None if unknown), language,
    model name and text."""
    uid, lang, model, text = row["item"], row["language"], row["model"], row["text"]
    problems = []
    if item is None:
        problems.append(LineError(line, "item", _("unknown item %(uid)s") % {"uid": repr(uid)}))
    elif item.kind != Item.Kind.OPEN_PROMPT:
        message = _("item %(uid)s is %(kind)s; responses belong to open prompts") % {"uid": uid, "kind": item.kind}
        problems.append(LineError(line, "item", message))
    if lang not in ("en", "zh"):
        problems.append(LineError(line, "language", _("must be en or zh, got %(value)s") % {"value": repr(lang)}))
    if not model.strip() or len(model) > 200:
        problems.append(LineError(line, "model", _("required model name of at most 200 characters")))
    if not text.strip():
        problems.append(LineError(line, "text", _("required, non-empty text")))
    elif len(text) > settings.ITEM_MAX_TEXT_CHARS:
        message = _("text too long: %(n)s characters (limit %(max)s)") % {
            "n": len(text),
            "max": settings.ITEM_MAX_TEXT_CHARS,
        }
        problems.append(LineError(line, "text", message))
    return problems


@transaction.atomic
def comparison_set_build(
    *,
    name: str,
    benchmark: Benchmark,
    experts: list[AbstractBaseUser],
    user: AbstractBaseUser | None,
    seed: int = 0,
    per_stratum: int | None = None,
    experts_per_comparison: int | None = None,
    dimensions: list[Dimension] | None = None,
    languages: tuple[str, ...] = ("en", "zh"),
    description: str = "",
) -> ComparisonSet:
    """Build a comparison set by stratified sampling and assign it to experts.

    Candidates are every pair of responses to an open prompt of a subjective dimension, per language. From each
    (dimension, language) stratum ``per_stratum`` comparisons are drawn with the seed (all when None). Which
    response is A is drawn with the seed too. Each comparison goes to ``experts_per_comparison`` experts in
    balanced rotation (all experts when None), and each expert sees its own seeded left/right order.
    """
    experts = sorted(set(experts), key=lambda u: u.get_username())
    dims = dimensions or list(Dimension.objects.filter(benchmark=benchmark, subjective=True))
    errors = _set_refusals(
        name=name,
        experts=experts,
        user=user,
        per_stratum=per_stratum,
        experts_per_comparison=experts_per_comparison,
        dims=dims,
    )
    if errors:
        raise ValidationError(errors)
    rng = random.Random(seed)
    strata = _candidate_pairs(benchmark=benchmark, dims=dims, languages=languages)
    if not strata:
        raise ValidationError(_("No open prompt has two or more responses in the chosen languages yet."))
    comparison_set = ComparisonSet(
        name=name,
        benchmark=benchmark,
        description=description,
        seed=seed,
        per_stratum=per_stratum,
        experts_per_comparison=experts_per_comparison,
        created_by=user,
    )
    _set_save(comparison_set, experts=experts)
    chosen = _comparisons_draw(comparison_set=comparison_set, strata=strata, per_stratum=per_stratum, rng=rng)
    Comparison.objects.bulk_create(chosen)
    _set_assign(comparison_set, experts=experts, per_comparison=experts_per_comparison or len(experts), rng=rng)
    comparison_set.size = len(chosen)
    comparison_set.save(update_fields=["size"])
    return comparison_set


def _set_save(comparison_set: ComparisonSet, *, experts: list[AbstractBaseUser]) -> None:
    """Store a new comparison set and its experts, refused if its name was taken meanwhile."""
    comparison_set.full_clean()
    try:
        # A set of the same name built at the same moment passed the check before too; the database decides.
        with transaction.atomic():
            comparison_set.save()
    except IntegrityError as exc:
        message = _("A comparison set named %(name)s already exists.") % {"name": comparison_set.name}
        raise ValidationError(message) from exc
    comparison_set.experts.set(experts)


def _set_assign(
    comparison_set: ComparisonSet, *, experts: list[AbstractBaseUser], per_comparison: int, rng: random.Random
) -> None:
    """Give each comparison to ``per_comparison`` experts in balanced rotation, each with its seeded left/right
    order."""
    given, load = queue.assignments_spread(
        units=comparison_set.comparisons.order_by("id"), workers=experts, per_unit=per_comparison
    )
    LabelAssignment.objects.bulk_create(
        LabelAssignment(
            comparison=comparison,
            comparison_set=comparison_set,
            expert=expert,
            shown_order=rng.choice(["AB", "BA"]),
            position=position,
        )
        for comparison, expert, position in given
    )
    queue.progress_start(model=LabelAssignment, owner=comparison_set, load=load)


def _set_refusals(
    *,
    name: str,
    experts: list[AbstractBaseUser],
    user: AbstractBaseUser | None,
    per_stratum: int | None,
    experts_per_comparison: int | None,
    dims: list[Dimension],
) -> list[str]:
    """Return why a comparison set cannot be built as asked (empty when it can)."""
    errors = []
    if ComparisonSet.objects.filter(name=name).exists():
        errors.append(_("A comparison set named %(name)s already exists.") % {"name": name})
    if not experts:
        errors.append(_("Choose at least one expert."))
    # Blinding: labels come only from those who may label, and never from whoever built the set and saw its models.
    not_labellers = [u.get_username() for u in experts if not u.has_perm("labelling.label_comparisons")]
    if not_labellers:
        errors.append(
            _("Only experts and lead experts label comparisons, so these users cannot be assigned: %(names)s.")
            % {"names": ", ".join(not_labellers)}
        )
    if user is not None and any(u.pk == user.pk for u in experts):
        errors.append(
            _("%(name)s builds this set and sees its model names, so cannot also label it.")
            % {"name": user.get_username()}
        )
    if experts_per_comparison is not None and not 1 <= experts_per_comparison <= max(len(experts), 1):
        errors.append(_("Experts per comparison must be between 1 and the number of experts."))
    if per_stratum is not None and per_stratum < 1:
        errors.append(_("Comparisons per stratum must be at least 1."))
    if not dims:
        errors.append(_("This benchmark has no subjective dimensions."))
    return errors


def _candidate_pairs(
    *, benchmark: Benchmark, dims: list[Dimension], languages: tuple[str, ...]
) -> dict[tuple[int, str], list[tuple[ModelResponse, ModelResponse]]]:
    """Return every pair of responses to one open prompt, by (dimension id, language) stratum."""
    responses: dict[tuple[int, str], list[ModelResponse]] = {}
    for r in (
        ModelResponse.objects.filter(item__benchmark=benchmark, item__dimension__in=dims, language__in=languages)
        .select_related("item")
        .order_by("item__uid", "language", "model_name")
    ):
        responses.setdefault((r.item_id, r.language), []).append(r)
    strata: dict[tuple[int, str], list[tuple[ModelResponse, ModelResponse]]] = {}
    for (_item_id, lang), group in responses.items():
        dim_id = group[0].item.dimension_id
        for a, b in itertools.combinations(group, 2):
            strata.setdefault((dim_id, lang), []).append((a, b))
    return strata


def _comparisons_draw(
    *, comparison_set: ComparisonSet, strata: dict, per_stratum: int | None, rng: random.Random
) -> list[Comparison]:
    """Draw ``per_stratum`` pairs of each stratum (all when None) and which response of each is A, in seeded order."""
    chosen = []
    for key in sorted(strata):
        pairs = strata[key]
        picked = pairs if per_stratum is None or per_stratum >= len(pairs) else rng.sample(pairs, per_stratum)
        for a, b in picked:
            if rng.random() < 0.5:
                a, b = b, a
            chosen.append(
                Comparison(
                    comparison_set=comparison_set,
                    item_id=a.item_id,
                    language=a.language,
                    dimension_id=key[0],
                    response_a=a,
                    response_b=b,
                )
            )
    rng.shuffle(chosen)
    return chosen


@transaction.atomic
def comparison_set_recount(*, comparison_set: ComparisonSet) -> list[ExpertProgress]:
    """Rebuild a set's stored counts (its size, each assignment's labelling time, each expert's progress) from its
    comparisons, assignments and labels; for data written without the services (bulk loads, repairs)."""
    comparison_set.size = Comparison.objects.filter(comparison_set=comparison_set).count()
    comparison_set.save(update_fields=["size"])
    return queue.progress_recount(
        owner=comparison_set,
        assignments=LabelAssignment.objects.filter(comparison__comparison_set=comparison_set),
        done_at=Subquery(ExpertLabel.objects.filter(assignment=OuterRef("pk")).values("created_at")[:1]),
        counts={"changed": Count("label", filter=Q(label__changed_at__isnull=False))},
    )


class LabelConflict(ServiceError):
    """The expert already labelled the comparison with another verdict; labels are evidence and are not replaced."""

    status_code = 409
    code = "label_conflict"


def _assignment(comparison: Comparison, expert: AbstractBaseUser) -> LabelAssignment:
    """Lock the expert's assignment of the comparison, in an open set (the queue's locking rule): simultaneous
    submissions of one assignment take turns, each seeing the label stored before it."""
    return queue.assignment_lock(
        assignments=LabelAssignment.objects.filter(comparison=comparison, expert=expert),
        not_assigned=_("This comparison is not assigned to you."),
        closed=_("This comparison set is closed; its labels can no longer change."),
    )


def _verdict(assignment: LabelAssignment, *, winner: str, margin: int | None, rationale: str) -> int:
    """Return the canonical score of what the expert chose on screen; raise ValidationError naming the field."""
    try:
        score = canonical_score(shown_order=assignment.shown_order, winner=winner, margin=margin)
    except ValueError as exc:
        messages = {
            "tie": ("margin", _("A tie has no margin.")),
            "margin": ("margin", _("Choose a margin from + to +++++.")),
            "winner": ("winner", _("Choose the better response or a tie.")),
        }
        key = "tie" if "tie has" in str(exc) else "margin" if "margin" in str(exc) else "winner"
        field, message = messages[key]
        raise ValidationError({field: message}) from exc
    if NUL in rationale:
        raise ValidationError({"rationale": nul_sentence(_("rationale"))})
    return score


def _seconds_since(moment: datetime | None) -> int | None:
    return max(0, int((timezone.now() - moment).total_seconds())) if moment else None


@transaction.atomic
def label_submit(
    *,
    comparison: Comparison,
    expert: AbstractBaseUser,
    winner: str,
    margin: int | None,
    rationale: str = "",
) -> ExpertLabel:
    """Record an expert's verdict as seen on screen, stored in canonical orientation with the order shown.

    Submitting the stored verdict again (a double click, a retried request) returns the stored label; a different
    verdict raises ``LabelConflict``: a second submission never silently replaces a label (``label_change`` does,
    on purpose, and records the change).
    """
    assignment = _assignment(comparison, expert)
    score = _verdict(assignment, winner=winner, margin=margin, rationale=rationale)
    stored = ExpertLabel.objects.filter(assignment=assignment).first()
    if stored is not None:
        if stored.score == score and stored.rationale == rationale.strip():
            return stored
        raise LabelConflict(_("You already labelled this comparison."))
    label = ExpertLabel(
        assignment=assignment,
        score=score,
        shown_order=assignment.shown_order,
        rationale=rationale.strip(),
        seconds_spent=_seconds_since(assignment.first_viewed_at),
    )
    label.full_clean()
    label.save()
    queue.assignment_finish(assignment=assignment, at=label.created_at)
    return label


@transaction.atomic
def label_change(
    *,
    comparison: Comparison,
    expert: AbstractBaseUser,
    winner: str,
    margin: int | None,
    rationale: str = "",
) -> ExpertLabel:
    """Change the expert's own label while the set is open, recording the old and new verdict and the time taken.

    The time of a change runs from when the expert last opened the labelled comparison. The same verdict again
    changes nothing and records nothing.
    """
    assignment = _assignment(comparison, expert)
    score = _verdict(assignment, winner=winner, margin=margin, rationale=rationale)
    label = ExpertLabel.objects.filter(assignment=assignment).first()
    if label is None:
        raise ValidationError(_("You have not labelled this comparison yet; there is nothing to change."))
    if label.score == score and label.rationale == rationale.strip():
        return label
    change = LabelChange(
        label=label,
        old_score=label.score,
        new_score=score,
        old_rationale=label.rationale,
        new_rationale=rationale.strip(),
        changed_by=expert,
        seconds_spent=queue.change_seconds(assignment=assignment),
    )
    change.full_clean()
    change.save()
    if label.changed_at is None:
        queue.progress_add(assignment=assignment, changed=1)
    label.score, label.rationale, label.changed_at = score, rationale.strip(), timezone.now()
    label.full_clean()
    label.save(update_fields=["score", "rationale", "changed_at"])
    # A further change is timed from this one.
    queue.change_restart(assignment=assignment, at=label.changed_at)
    return label


@transaction.atomic
def label_skip(*, comparison: Comparison, expert: AbstractBaseUser) -> LabelAssignment:
    """Put a comparison aside: it moves to the end of the expert's queue in the set and stays assigned to them."""
    assignment = _assignment(comparison, expert)
    if ExpertLabel.objects.filter(assignment=assignment).exists():
        raise ValidationError(_("You already labelled this comparison; there is nothing to skip."))
    return queue.assignment_skip(assignment=assignment)


@transaction.atomic
def comparison_set_close(*, comparison_set: ComparisonSet, user: AbstractBaseUser) -> ComparisonSet:
    """Close a set: its labels are final, and experts can no longer label, change or skip in it."""
    comparison_set = ComparisonSet.objects.select_for_update().get(pk=comparison_set.pk)
    if not comparison_set.is_open:
        raise ValidationError(_("This comparison set is already closed."))
    comparison_set.closed_at, comparison_set.closed_by = timezone.now(), user
    comparison_set.save(update_fields=["closed_at", "closed_by"])
    return comparison_set


def assignment_mark_viewed(*, assignment: LabelAssignment) -> None:
    """Note when the expert first opened the comparison, and when they reopen a labelled one, to time their work."""
    now = timezone.now()
    if assignment.first_viewed_at is None:
        LabelAssignment.objects.filter(pk=assignment.pk, first_viewed_at=None).update(first_viewed_at=now)
        assignment.refresh_from_db(fields=["first_viewed_at"])
    if hasattr(assignment, "label"):
        queue.change_restart(assignment=assignment, at=now)


RESPONSES_PURPOSE = "labelling.responses"


@transaction.atomic
def responses_generate(
    *,
    benchmark: Benchmark,
    endpoint: Endpoint,
    languages: tuple[str, ...] = ("en", "zh"),
    user: AbstractBaseUser | None,
    start: bool = True,
) -> Run:
    """Ask an endpoint to answer every open prompt of a benchmark, through a background LLM run."""
    if endpoint.for_drafting:
        raise ValidationError(
            _(
                "This endpoint is marked for drafting items: experts have read its writing and would recognise its "
                "responses. Generate responses with another endpoint."
            )
        )
    items = Item.objects.filter(benchmark=benchmark, kind=Item.Kind.OPEN_PROMPT).select_related("current_revision")
    prompts = []
    for item in items.order_by("uid"):
        content = item.current_revision.content if item.current_revision else {}
        for lang in languages:
            version = content.get(lang)
            if version and version.get("prompt"):
                text = (f"{version['context']}\n\n" if version.get("context") else "") + version["prompt"]
                prompts.append(
                    {
                        "key": f"{item.uid} · {lang}",
                        "ref": {"item": item.pk, "language": lang},
                        "messages": [{"role": "user", "content": text}],
                    }
                )
    if not prompts:
        raise ValidationError(_("This benchmark has no open prompts in the chosen languages."))
    return llm_services.run_create(
        endpoint=endpoint,
        prompts=prompts,
        parser="text",
        name=f"Responses · {benchmark.slug} · {endpoint.name}",
        user=user,
        purpose=RESPONSES_PURPOSE,
        start=start,
    )


@collectors.register(RESPONSES_PURPOSE)
def _collect(run: Run) -> None:
    responses_collect(run=run, user=run.created_by)


@transaction.atomic
def responses_collect(*, run: Run, user: AbstractBaseUser | None = None) -> dict:
    """Store the replies of a finished response run as model responses (named by the endpoint's model).

    Called by the responses collector when the run finishes; responses already stored are not stored twice.
    """
    run.refresh_from_db(fields=["status"])
    if run.status not in Run.FINISHED:
        raise ValidationError(_("The run is still working."))
    model = run.endpoint.model
    existing = set(ModelResponse.objects.filter(model_name=model).values_list("item_id", "language"))
    run_items = list(RunItem.objects.filter(run=run).select_related("call"))
    items = Item.objects.filter(kind=Item.Kind.OPEN_PROMPT).in_bulk({ri.ref.get("item") for ri in run_items})
    new, missing = [], 0
    for ri in run_items:
        item_id, lang = ri.ref.get("item"), ri.ref.get("language")
        if (item_id, lang) in existing or item_id not in items:
            continue
        if ri.status != RunItem.Status.DONE or not ri.call or not ri.call.response_text.strip():
            missing += 1
            continue
        new.append(
            ModelResponse(
                item=items[item_id],
                language=lang,
                model_name=model,
                text=ri.call.response_text,
                source=ModelResponse.Source.GENERATED,
                created_by=user,
            )
        )
    ModelResponse.objects.bulk_create(new)
    return {"created": len(new), "missing": missing}


# Orders a set can serve its comparisons in: its queue's stratified random order, or an order registered with
# annotation.labelling.serving ("active": calibration.allocation).
ORDERS = ("random", "active")


@transaction.atomic
def comparison_set_order_set(*, comparison_set: ComparisonSet, order: str) -> ComparisonSet:
    """Set the order in which the set's comparisons are served; only before anything is labelled or served."""
    if order not in ORDERS:
        raise ValidationError(_("Unknown serving order %(order)s.") % {"order": order})
    locked = ComparisonSet.objects.select_for_update().get(pk=comparison_set.pk)
    if locked.order == order:
        return locked
    labelled = LabelAssignment.objects.filter(comparison_set=locked, labelled_at__isnull=False)
    if labelled.exists() or locked.served.exists():
        raise ValidationError(_("The serving order is fixed once the first comparison is served or labelled."))
    locked.order = order
    locked.full_clean()
    locked.save(update_fields=["order"])
    comparison_set.order = order
    return locked
