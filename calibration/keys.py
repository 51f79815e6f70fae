"""Independent validation of EiCAP probe keys: a second judge, from another model family than the drafter, answers
every probe blind by letter choice; its agreement with the keys is Cohen's kappa with a bootstrap interval (as
EiCAP reports kappa = 0.976 with Gemini 2.5 Flash as judge).

The judge sees what a model under evaluation sees (``annotation.releases.protocol.letter_messages``: the user turns
with lettered options, earlier turns answered with their keyed reply), never the reply set, the taxonomy or the
principles. Units are probe turns in each language: kappa compares the judge's option with the key over the units
it answered; a reply naming no option is counted apart (``unanswered``) and listed with the disagreements.
The rows live in ``annotation.items`` (``KeyValidation``, ``KeyJudgement``), where the audit page and a release's
dataset card read them.
"""

import math

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items.content import LANGUAGES
from annotation.items.models import Benchmark, Item, ItemRevision, KeyJudgement, KeyValidation, ReplySet
from annotation.releases.protocol import LETTERS, letter_messages, objective_turns
from calibration.agreement import cohen_kappa
from llm import collectors
from llm import services as llm_services
from llm.models import Endpoint, Run, RunItem

PURPOSE = "calibration.key_validation"
N_BOOT = 1000


def validation_probes(*, benchmark: Benchmark) -> QuerySet[Item]:
    """The benchmark's EiCAP probes (items expanded from reply sets) not rejected, at their current revision."""
    return (
        Item.objects.filter(benchmark=benchmark, kind=Item.Kind.MULTI_TURN_CHOICE, metadata__has_key="eicap")
        .exclude(status=Item.Status.REJECTED)
        .select_related("current_revision")
        .order_by("uid")
    )


def drafting_models(*, probes: list[Item]) -> set[str]:
    """The models that drafted the reply sets the probes were expanded from."""
    uids = {(p.metadata.get("eicap") or {}).get("reply_set") for p in probes}
    return set(ReplySet.objects.filter(uid__in=uids, job__isnull=False).values_list("job__endpoint__model", flat=True))


def _prompts(validation: KeyValidation, probes: list[Item]) -> list[dict]:
    prompts = []
    for item in probes:
        revision = item.current_revision
        for lang in LANGUAGES:
            version = revision.content.get(lang)
            if not version:
                continue
            turns = objective_turns(item.kind, version)
            if not turns or any(t.get("answer") is None for t in turns):
                continue
            # The options in their stored order: the key's position was drawn at expansion, per probe and language.
            orders = [list(range(len(t["options"]))) for t in turns]
            for t, spec in enumerate(turns):
                prompts.append(
                    {
                        "ref": {
                            "validation": validation.pk,
                            "item": item.pk,
                            "revision": revision.pk,
                            "language": lang,
                            "turn": t,
                        },
                        "messages": letter_messages(
                            kind=item.kind, version=version, language=lang, turn=t, orders=orders
                        ),
                        "params": {"max_tokens": 16},
                        # Read by the simulator only (an endpoint marked as the simulator): a real judge gets no key.
                        "hints": {"answer": LETTERS[spec["answer"]]},
                    }
                )
    return prompts


@transaction.atomic
def key_validation_start(
    *,
    benchmark: Benchmark,
    endpoint: Endpoint,
    user: AbstractBaseUser | None,
    seed: int = 0,
    start: bool = True,
) -> KeyValidation:
    """Ask ``endpoint`` to answer every probe of ``benchmark`` blind; the collector computes the agreement."""
    if not endpoint.is_active:
        raise ValidationError({"endpoint": _("This endpoint is not active.")})
    probes = list(validation_probes(benchmark=benchmark))
    if not probes:
        raise ValidationError(
            _("Benchmark %(benchmark)s has no probes expanded from reply sets to validate.") % {"benchmark": benchmark}
        )
    drafters = drafting_models(probes=probes)
    if endpoint.model in drafters:
        raise ValidationError(
            {
                "endpoint": _(
                    "The model %(model)s drafted these probes: the independent judge must come from another model "
                    "family."
                )
                % {"model": endpoint.model}
            }
        )
    validation = KeyValidation(benchmark=benchmark, endpoint=endpoint, seed=seed, created_by=user)
    validation.full_clean()
    validation.save()
    validation.n_probes = len(probes)
    validation.llm_run = llm_services.run_create(
        endpoint=endpoint,
        prompts=_prompts(validation, probes),
        parser="mcq_letter",
        name=f"Key validation {validation.pk} · {benchmark.slug}",
        user=user,
        purpose=PURPOSE,
        start=start,
    )
    validation.save(update_fields=["n_probes", "llm_run"])
    return validation


@collectors.register(PURPOSE)
def _collect(run: Run) -> None:
    key_validation_collect(validation=KeyValidation.objects.get(llm_run=run))


@transaction.atomic
def key_validation_collect(*, validation: KeyValidation) -> KeyValidation:
    """Record the judge's answer to every probe turn and the agreement with the keys; a second call changes nothing."""
    validation = KeyValidation.objects.select_for_update().get(pk=validation.pk)
    if validation.collected:
        return validation
    run = Run.objects.get(pk=validation.llm_run_id)
    if run.status not in Run.FINISHED:
        raise ValidationError(_("The validation run is still working."))
    judgements, size = _judgements(validation, run)
    KeyJudgement.objects.bulk_create(judgements)
    keys = [float(j.key) for j in judgements]
    chosen = [float(j.chosen) if j.chosen is not None else math.nan for j in judgements]
    validation.n_units = sum(1 for j in judgements if j.chosen is not None)
    validation.unanswered = len(judgements) - validation.n_units
    validation.agreement = sum(1 for j in judgements if j.agrees) / validation.n_units if validation.n_units else None
    if judgements:
        estimate = cohen_kappa(
            keys, chosen, labels=[float(n) for n in range(size)], seed=validation.seed, n_boot=N_BOOT
        )
        validation.kappa, validation.ci_low, validation.ci_high = estimate.value, estimate.ci_low, estimate.ci_high
        validation.undefined_reason = estimate.undefined_reason or ""
        validation.n_boot = estimate.n_boot
    else:
        validation.undefined_reason = run.error or _("the judge answered no probe")
    validation.collected, validation.collected_at = True, timezone.now()
    validation.save()
    return validation


def _judgements(validation: KeyValidation, run: Run) -> tuple[list[KeyJudgement], int]:
    """The judge's answer to each probe turn of the run against its key, and the most options a turn had (>= 4)."""
    run_items = list(RunItem.objects.filter(run=run).order_by("position"))
    revisions = ItemRevision.objects.in_bulk({ri.ref["revision"] for ri in run_items})
    judgements, size = [], 4
    for ri in run_items:
        ref = ri.ref
        # The revision the judge read (the probe may have been revised since the run started).
        revision = revisions[ref["revision"]]
        spec = objective_turns(Item.Kind.MULTI_TURN_CHOICE, revision.content[ref["language"]])[ref["turn"]]
        size = max(size, len(spec["options"]))
        judgements.append(
            KeyJudgement(
                validation=validation,
                item_id=ref["item"],
                revision=revision,
                language=ref["language"],
                turn=ref["turn"],
                key=spec["answer"],
                chosen=_chosen(ri, n_options=len(spec["options"])),
            )
        )
    return judgements, size


def _chosen(run_item: RunItem, *, n_options: int) -> int | None:
    """The option the judge's letter names, or None (no reply, or a letter past the options)."""
    if run_item.status != RunItem.Status.DONE or not isinstance(run_item.result, dict):
        return None
    letter = run_item.result.get("letter")
    if letter in LETTERS and LETTERS.index(letter) < n_options:
        return LETTERS.index(letter)
    return None
