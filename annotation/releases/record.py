"""What a release records when it is frozen, read once from the live rows into plain data.

The export files and the dataset card are written from this data at freeze and kept as bytes
(``ReleaseFile``); nothing read here is read again for a frozen release, so later edits of items, taxonomy or
screening cannot change what was published.
"""

from collections import Counter, defaultdict

from django.utils import translation

from annotation.items.content import LANGUAGES
from annotation.items.interchange import FORMAT
from annotation.items.models import Item, ItemRevision, KeyJudgement, KeyValidation, Scenario
from annotation.releases.card import LOCALES
from annotation.releases.models import Release, ReleaseItem
from annotation.screening.models import Review, RoundItem
from annotation.screening.selectors import round_statistics


def release_meta(release: Release, *, items: int) -> dict:
    """Return the release identity written into the manifest."""
    return {
        "benchmark": release.benchmark.slug,
        "version": release.version,
        "title": release.title,
        "description": release.description,
        "licence": release.licence,
        "citation": release.citation,
        "frozen_at": release.frozen_at.strftime("%Y-%m-%dT%H:%M:%SZ") if release.frozen_at else None,
        "content_checksum": release.content_checksum,
        "items": items,
    }


def export_records(release: Release, entries: list[ReleaseItem]) -> list[dict]:
    """Return one export record per pinned entry: pinned content plus the item's live fields and taxonomy codes."""
    dims = {d.code: d for d in release.benchmark.dimensions.select_related("parent")}
    domains = dict(Scenario.objects.values_list("code", "domain__code"))
    records = []
    for e in entries:
        attrs = e.revision.attributes
        dim = dims.get(attrs.get("dimension"))
        interchange = {
            "format": FORMAT,
            "uid": e.item.uid,
            "benchmark": release.benchmark.slug,
            "dimension": attrs.get("dimension"),
            "kind": e.item.kind,
            "scenario": attrs.get("scenario"),
            "emotions": attrs.get("emotions", []),
            "crisis_level": attrs.get("crisis_level"),
            "difficulty": attrs.get("difficulty", ""),
            "status": e.item.status,
            "origin": e.item.origin,
            "metadata": attrs.get("metadata", {}),
            "revision": e.revision.number,
            "content": e.revision.content,
        }
        records.append(
            {
                "uid": e.item.uid,
                "module": dim.parent.code if dim and dim.parent else None,
                "dimension": attrs.get("dimension"),
                "kind": e.item.kind,
                "scenario": attrs.get("scenario"),
                "domain": domains.get(attrs.get("scenario")),
                "emotions": attrs.get("emotions", []),
                "crisis_level": attrs.get("crisis_level"),
                "difficulty": attrs.get("difficulty", ""),
                "revision": e.revision.number,
                "content": e.revision.content,
                "interchange": interchange,
            }
        )
    return records


def _named(row: object) -> dict:
    return {"code": row.code, "name_en": row.name_en, "name_zh": row.name_zh}


def _dimensions(release: Release, entries: list[ReleaseItem]) -> list[dict]:
    dims = {d.code: d for d in release.benchmark.dimensions.select_related("parent")}
    counts: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        for lang in LANGUAGES:
            if e.revision.content.get(lang):
                counts[e.revision.attributes.get("dimension") or ""][lang] += 1
    result = []
    for code in sorted(counts):
        dim = dims.get(code)
        result.append(
            {
                "code": code,
                "name_en": dim.name_en if dim else "",
                "name_zh": dim.name_zh if dim else "",
                "definition_en": dim.definition_en if dim else "",
                "definition_zh": dim.definition_zh if dim else "",
                "module": _named(dim.parent) if dim and dim.parent else None,
                "counts": {lang: counts[code][lang] for lang in LANGUAGES},
            }
        )
    return result


def _origins(entries: list[ReleaseItem]) -> dict:
    expert, sources, revised, unrevised = 0, Counter(), 0, 0
    for e in entries:
        if e.item.origin == Item.Origin.IMPORTED:
            source = (e.revision.attributes.get("metadata") or {}).get("source")
            sources[source if isinstance(source, str) else ""] += 1
        elif e.item.origin == Item.Origin.LLM_DRAFT:
            if e.revision.number > 1:
                revised += 1
            else:
                unrevised += 1
        else:
            expert += 1
    return {
        "expert": expert,
        "imported": dict(sorted(sources.items())),
        "llm_draft_revised": revised,
        "llm_draft_unrevised": unrevised,
    }


def _revisions(entries: list[ReleaseItem]) -> dict:
    pinned = {e.item_id: e.revision.number for e in entries}
    # Only the history up to each pinned revision: later edits are not part of what the release contains.
    history = [
        (item_id, author_id)
        for item_id, number, author_id in ItemRevision.objects.filter(item_id__in=list(pinned)).values_list(
            "item_id", "number", "author_id"
        )
        if number <= pinned[item_id]
    ]
    per_item = Counter(Counter(item_id for item_id, _ in history).values())
    return {
        "total": len(history),
        "authors": len({author for _, author in history if author is not None}),
        "unattributed": sum(1 for _, author in history if author is None),
        "per_item": [[revisions, items] for revisions, items in sorted(per_item.items())],
    }


def _rounds(entries: list[ReleaseItem], languages: list[str]) -> tuple[list[dict], int]:
    pinned = {e.item_id: e.revision_id for e in entries}
    round_items = list(
        RoundItem.objects.filter(item_id__in=list(pinned)).select_related("round").order_by("round__number", "pk")
    )
    decisions = Counter(
        Review.objects.filter(assignment__round_item__in=round_items, status=Review.Status.SUBMITTED).values_list(
            "assignment__round_item__round_id", "decision"
        )
    )
    by_round: dict[int, list[RoundItem]] = defaultdict(list)
    for ri in round_items:
        by_round[ri.round_id].append(ri)
    rounds = []
    for ris in sorted(by_round.values(), key=lambda group: group[0].round.number):
        round = ris[0].round
        alpha = round_statistics(round=round).alpha
        notes = {}
        if alpha is None:
            # The reason agreement is undefined, in each language of the card.
            for lang in languages:
                with translation.override(LOCALES[lang]):
                    notes[lang] = round_statistics(round=round).alpha_note
        rounds.append(
            {
                "number": round.number,
                "title": round.title,
                "open": round.is_open,
                "criteria": [_named(c) for c in round.criteria.order_by("position", "code")],
                "reviewers": round.reviewers.count(),
                "reviewers_per_item": round.reviewers_per_item,
                "round_items": round.round_items.count(),
                "items": len(ris),
                "earlier_revision": sum(1 for ri in ris if ri.revision_id != pinned[ri.item_id]),
                "decisions": {d: n for (round_id, d), n in sorted(decisions.items()) if round_id == round.pk},
                "outcomes": dict(sorted(Counter(ri.outcome for ri in ris).items())),
                "adjudicated": dict(sorted(Counter(ri.outcome for ri in ris if ri.adjudicated_at).items())),
                "alpha": alpha,
                "alpha_note": notes,
            }
        )
    return rounds, len(set(pinned) - {ri.item_id for ri in round_items})


def _key_validation(entries: list[ReleaseItem]) -> dict | None:
    """The newest collected EiCAP key validation that judged pinned revisions, or None (the card then says nothing).

    The judge is not named: dataset cards are read by experts too.
    """
    pinned = [e.revision_id for e in entries]
    judged = KeyJudgement.objects.filter(revision_id__in=pinned, validation__collected=True)
    newest = judged.order_by("-validation__collected_at", "-validation_id").values_list("validation_id", flat=True)
    validation_id = newest.first()
    if validation_id is None:
        return None
    validation = KeyValidation.objects.get(pk=validation_id)
    return {
        "kappa": validation.kappa,
        "ci_low": validation.ci_low,
        "ci_high": validation.ci_high,
        "agreement": validation.agreement,
        "n_units": validation.n_units,
        "n_probes": validation.n_probes,
        "unanswered": validation.unanswered,
        "n_boot": validation.n_boot,
        "pinned": judged.filter(validation_id=validation_id).values("item_id").distinct().count(),
        "undefined_reason": validation.undefined_reason,
    }


def card_facts(release: Release, entries: list[ReleaseItem], *, checks: list[dict]) -> dict:
    """Return what the dataset card states about the pinned items, read from the record as it stands now."""
    languages = [lang for lang in LANGUAGES if any(e.revision.content.get(lang) for e in entries)]
    rounds, unscreened = _rounds(entries, languages)
    return {
        "languages": languages,
        "dimensions": _dimensions(release, entries),
        "origins": _origins(entries),
        "revisions": _revisions(entries),
        "rounds": rounds,
        "unscreened": unscreened,
        "checks": checks,
        "frozen": release.is_frozen,
        "frozen_by": release.frozen_by.get_username() if release.frozen_by else None,
        "override_reason": release.override_reason,
        "key_validation": _key_validation(entries),
    }
