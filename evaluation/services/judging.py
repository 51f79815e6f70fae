"""Pairwise judging in an evaluation run: which pairs to judge (round-robin or adaptive) and the judge's LLM runs."""

import itertools
import json

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext as _

from annotation.labelling.pairwise import anonymise
from annotation.releases.selectors import release_entries
from calibration import prompts as judge_prompts
from calibration.agreement.juries import jury_order_scores, jury_verdict
from calibration.juries import jury_members
from calibration.models import Judge
from calibration.services import judge_messages
from evaluation import ratings
from evaluation.models import EvaluationLLMRun, EvaluationRun, ModelUnderTest, OpenResponse, PairVerdict
from evaluation.services.common import EVALUATION_PURPOSE
from llm import services as llm_services
from llm.models import RunItem


def _judge_prompt_map(judge: Judge) -> dict:
    return {p.dimension_id: p for p in judge.prompt_set.prompts.select_related("dimension")}


def _pairs(models: list[ModelUnderTest]) -> list[tuple[ModelUnderTest, ModelUnderTest]]:
    return list(itertools.combinations(sorted(models, key=lambda m: m.code), 2))


def _judging_batch(
    run: EvaluationRun,
    judge: Judge,
    pairs_by_stratum: dict,
    responses: dict,
    entries: dict,
    names: list[str],
    missing: set[str],
) -> list[dict]:
    """Return one judge's prompts for the pairs (both orders); a jury member's refs name the member."""
    prompt_map = _judge_prompt_map(judge)
    member = {"member": judge.pk} if run.judge.is_jury else {}
    batch = []
    for (item_id, lang), pairs in pairs_by_stratum.items():
        entry = entries[item_id]
        prompt = prompt_map.get(entry.item.dimension_id)
        if prompt is None:
            missing.add(entry.item.dimension.code)
            continue
        content = entry.revision.content.get(lang, {})
        for a, b in pairs:
            ra, rb = responses.get((item_id, lang, a.pk)), responses.get((item_id, lang, b.pk))
            if ra is None or rb is None:
                continue
            ta, tb = anonymise(ra.text, names), anonymise(rb.text, names)
            for order, first, second in (("AB", ta, tb), ("BA", tb, ta)):
                batch.append(
                    {
                        "ref": {
                            "kind": "pair",
                            "item": item_id,
                            "language": lang,
                            "model_a": a.pk,
                            "model_b": b.pk,
                            "order": order,
                            **member,
                        },
                        "messages": judge_messages(prompt=prompt, content=content, first=first, second=second),
                    }
                )
    return batch


def start_judging(run: EvaluationRun, pairs_by_stratum: dict, user: AbstractBaseUser | None, start: bool) -> bool:
    """Queue the judge on the given pairs (both orders); return False when there is nothing to judge.

    A jury queues each of its members on the same pairs, one LLM run per member in the same round; the jury's
    verdicts are combined from theirs when the round's last member run is collected (``jury_verdicts_collect``).
    """
    responses = {
        (r.item_id, r.language, r.model_id): r
        for r in OpenResponse.objects.filter(run=run, ok=True).select_related("item__current_revision")
    }
    names = [m.endpoint.model for m in run.models.select_related("endpoint")] + [m.label for m in run.models.all()]
    entries = {e.item_id: e for e in release_entries(run.release)}
    missing: set[str] = set()
    batches = [
        (judge, _judging_batch(run, judge, pairs_by_stratum, responses, entries, names, missing))
        for judge in jury_members(run.judge)
    ]
    if missing:
        run.notes = [
            *run.notes,
            _("No judge prompt for: %(dims)s; those items were not judged.") % {"dims": ", ".join(sorted(missing))},
        ]
        run.save(update_fields=["notes"])
    if not any(batch for _judge, batch in batches):
        return False
    run.adaptive_round += 1
    run.save(update_fields=["adaptive_round"])
    for judge, batch in batches:
        if not batch:
            continue
        suffix = f" · {judge.name}" if run.judge.is_jury else ""
        llm_run = llm_services.run_create(
            endpoint=judge.endpoint,
            prompts=batch,
            parser="calibration.verdict",
            name=f"{run.name} · judging {run.adaptive_round}{suffix}",
            user=user,
            purpose=EVALUATION_PURPOSE,
            start=start,
        )
        EvaluationLLMRun.objects.create(
            run=run, kind=EvaluationLLMRun.Kind.JUDGING, llm_run=llm_run, round=run.adaptive_round
        )
    return True


def jury_verdicts_collect(run: EvaluationRun, link: EvaluationLLMRun) -> None:
    """Mark a jury member's run collected; once the round's member runs all are, store the jury's verdicts."""
    link.collected = True
    link.save(update_fields=["collected"])
    round_links = EvaluationLLMRun.objects.filter(run=run, kind=EvaluationLLMRun.Kind.JUDGING, round=link.round)
    if round_links.filter(collected=False).exists():
        return
    members = jury_members(run.judge)
    models = {m.pk: m for m in run.models.all()}
    items = {e.item_id: e.item for e in release_entries(run.release)}
    scores: dict[tuple, dict[int, dict[str, int | None]]] = {}
    for ri in RunItem.objects.filter(run__in=round_links.values("llm_run")):
        ref = ri.ref
        parsed = ri.status == RunItem.Status.DONE and isinstance(ri.result, dict)
        key = (ref["item"], ref["language"], ref["model_a"], ref["model_b"])
        scores.setdefault(key, {}).setdefault(ref.get("member"), {})[ref["order"]] = (
            judge_prompts.canonical_from_result(ri.result, ref["order"]) if parsed else None
        )
    verdicts = []
    for (item_id, language, model_a, model_b), by_member in scores.items():
        member_orders = [(by_member.get(m.pk, {}).get("AB"), by_member.get(m.pk, {}).get("BA")) for m in members]
        verdict = jury_verdict(member_orders, rule=run.combine_rule, method=run.judge.aggregation)
        raw = json.dumps({m.name: list(o) for m, o in zip(members, member_orders, strict=True)})
        for order, score in zip(("AB", "BA"), jury_order_scores(verdict, run.combine_rule), strict=True):
            verdicts.append(
                PairVerdict(
                    run=run,
                    item=items[item_id],
                    language=language,
                    model_a=models[model_a],
                    model_b=models[model_b],
                    order=order,
                    round=link.round,
                    parsed=score is not None,
                    score=score,
                    raw=raw,
                )
            )
    PairVerdict.objects.bulk_create(verdicts)


def round_robin(run: EvaluationRun) -> dict:
    models = list(run.models.all())
    strata = {}
    for entry in release_entries(run.release):
        if entry.item.kind != "open_prompt":
            continue
        for lang in run.languages:
            if entry.revision.content.get(lang):
                strata[(entry.item_id, lang)] = _pairs(models)
    return strata


def adaptive_next(run: EvaluationRun) -> dict:
    """Choose the next round's pairs per item and language, jointly for the items of each dimension and language.

    The ratings of a dimension and language (TrueSkill from its verdicts so far) are shared by its items, so the
    round's pairs are chosen as one batch (``ratings.pairs_adaptive_batch``): pairs whose order is most in doubt,
    spread over the items that have not judged them yet, ``adaptive_pairs_per_round`` per item. Under the rule
    "auto" (``ratings.pairs_auto_batch``) a dimension and language whose models are few enough first judges every
    pair once, spread over its items, in one round.
    """
    models = {m.code: m for m in run.models.all()}
    # Every stored verdict counts as judged (its pair is not asked again there: one verdict per pair, item, language
    # and order), but only the parsed ones rate the models.
    judged = list(PairVerdict.objects.filter(run=run).select_related("model_a", "model_b", "item"))
    groups: dict[tuple, list[int]] = {}
    for entry in release_entries(run.release):
        if entry.item.kind != "open_prompt":
            continue
        for lang in run.languages:
            if entry.revision.content.get(lang):
                groups.setdefault((entry.item.dimension_id, lang), []).append(entry.item_id)
    strata = {}
    for (dimension_id, lang), item_ids in groups.items():
        same_dimension = [
            (v.model_a.code, v.model_b.code, v.score)
            for v in judged
            if v.parsed and v.item.dimension_id == dimension_id and v.language == lang
        ]
        current = ratings.rate_verdicts(same_dimension, models=sorted(models), seed=run.seed, n_passes=3)
        done: dict[int, set[tuple[str, str]]] = {item_id: set() for item_id in item_ids}
        for v in judged:
            if v.language == lang and v.item_id in done:
                done[v.item_id].add((v.model_a.code, v.model_b.code))
        choose = ratings.pairs_auto_batch if run.pairing == EvaluationRun.Pairing.AUTO else ratings.pairs_adaptive_batch
        batch = choose(
            {r.model: (r.mu, r.sigma) for r in current.ratings},
            strata=done,
            pairs_per_stratum=run.adaptive_pairs_per_round,
            seed=run.seed + run.adaptive_round,
        )
        for item_id, choices in batch.items():
            pairs = []
            for choice in choices:
                a, b = sorted((choice.model_a, choice.model_b))
                pairs.append((models[a], models[b]))
            strata[(item_id, lang)] = pairs
    return strata
