"""The validation checklist a release must pass before it is frozen (pure: plain records in, checks out), and its
wording in the reader's language."""

from collections import Counter
from dataclasses import asdict, dataclass, field

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.items.content import LANGUAGES, check_parity, prose_text
from annotation.items.similarity import near_duplicates

ANSWER_CODES = {"missing_answer", "answer_out_of_range"}
CHECK_LABELS = {
    "not_empty": gettext_lazy("Not empty"),
    "all_accepted": gettext_lazy("Every item accepted"),
    "revisions_screened": gettext_lazy("Every pinned revision passed screening"),
    "bilingual_parity": gettext_lazy("Both languages present and in parity"),
    "answer_keys": gettext_lazy("Answer keys valid"),
    "near_duplicates": gettext_lazy("No near-duplicates above the threshold"),
    "dimension_targets": gettext_lazy("Per-dimension counts meet targets"),
    "domain_balance": gettext_lazy("Balance across scenario domains"),
    "valence_balance": gettext_lazy("Balance across valence groups"),
}


@dataclass
class EntryFacts:
    """What the checks need to know about one pinned item."""

    uid: str
    kind: str
    status: str
    dimension: str
    dimension_target: int | None
    content: dict
    domain: str | None
    valences: list[str]
    # The pinned revision's number, and the numbers of the revisions an accepting decision (a screening round's, a
    # lead expert's or a lead's import) accepted: a pinned revision not among them never passed screening.
    revision: int
    accepted_revisions: tuple[int, ...]


@dataclass
class Check:
    code: str
    passed: bool
    summary: str
    offenders: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    # The numbers behind ``summary``, so that pages can word it in the reader's language.
    params: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _all_accepted(entries: list[EntryFacts]) -> Check:
    n = len(entries)
    not_accepted = sorted(e.uid for e in entries if e.status != "accepted")
    return Check(
        "all_accepted",
        not not_accepted,
        f"{n - len(not_accepted)} of {n} items accepted",
        not_accepted,
        params={"ok": n - len(not_accepted), "n": n},
    )


def _revisions_screened(entries: list[EntryFacts]) -> Check:
    """Check that every pinned revision is one an accepting decision accepted, not a later (or earlier) text."""
    n = len(entries)
    unscreened = [e for e in entries if e.revision not in e.accepted_revisions]
    details = [
        f"{e.uid}: revision {e.revision} pinned, "
        + (f"revision {max(e.accepted_revisions)} accepted" if e.accepted_revisions else "never accepted")
        for e in sorted(unscreened, key=lambda e: e.uid)
    ]
    return Check(
        "revisions_screened",
        not unscreened,
        f"{n - len(unscreened)} of {n} pinned revisions passed screening",
        sorted(e.uid for e in unscreened),
        details,
        params={"ok": n - len(unscreened), "n": n},
    )


def _parity_and_answer_keys(entries: list[EntryFacts]) -> tuple[Check, Check]:
    """Check both languages' parity and, apart from open prompts, the answer keys (one parity check finds both)."""
    n = len(entries)
    parity_bad, answer_bad, details = [], [], []
    for e in entries:
        issues = check_parity(e.kind, e.content)
        other = [i for i in issues if i.code not in ANSWER_CODES]
        if other:
            parity_bad.append(e.uid)
            details += [f"{e.uid}: {i.message}" for i in other]
        if e.kind != "open_prompt" and any(i.code in ANSWER_CODES for i in issues):
            answer_bad.append(e.uid)
    parity = Check(
        "bilingual_parity",
        not parity_bad,
        f"{n - len(parity_bad)} of {n} items have both languages in parity",
        sorted(parity_bad),
        details,
        params={"ok": n - len(parity_bad), "n": n},
    )
    answer_keys = Check(
        "answer_keys",
        not answer_bad,
        f"{len(answer_bad)} items with a missing or invalid answer key",
        sorted(answer_bad),
        params={"bad": len(answer_bad)},
    )
    return parity, answer_keys


def _near_duplicates(entries: list[EntryFacts], threshold: float) -> Check:
    duplicates = []
    for lang in LANGUAGES:
        texts = {e.uid: prose_text(e.content.get(lang)) for e in entries}
        duplicates += [(lang, d) for d in near_duplicates(texts, threshold=threshold)]
    return Check(
        "near_duplicates",
        not duplicates,
        f"{len(duplicates)} near-duplicate pairs at cosine >= {threshold}",
        sorted({uid for _, d in duplicates for uid in (d.a, d.b)}),
        [f"{lang}: {d.a} ~ {d.b} ({d.score:.2f})" for lang, d in duplicates],
        params={"pairs": len(duplicates), "threshold": threshold},
    )


def _dimension_targets(entries: list[EntryFacts]) -> Check:
    """Check that every dimension with a target has exactly that many items in each language."""
    targets = {e.dimension: e.dimension_target for e in entries if e.dimension_target}
    per_dim_lang = Counter((e.dimension, lang) for e in entries for lang in LANGUAGES if e.content.get(lang))
    details = [
        f"{dim} [{lang}]: {per_dim_lang[(dim, lang)]} of {target}"
        for dim, target in sorted(targets.items())
        for lang in LANGUAGES
        if per_dim_lang[(dim, lang)] != target
    ]
    met = not details
    return Check(
        "dimension_targets",
        met,
        "per-dimension counts meet their targets" if met else "per-dimension counts differ from targets",
        [],
        details,
        params={"variant": "met" if met else "differ"},
    )


def _domain_balance(entries: list[EntryFacts], max_share: float) -> Check:
    """Check that no scenario domain holds more than ``max_share`` of the items (and that some item has one)."""
    n = len(entries)
    domains = Counter(e.domain for e in entries if e.domain)
    too_big = [d for d, c in domains.items() if n and c / n > max_share]
    if not domains:
        variant, summary = "none", "no item has a scenario"
    elif too_big:
        variant, summary = "too_big", f"domains above {max_share:.0%} of items: {', '.join(sorted(too_big))}"
    else:
        variant, summary = "ok", f"{len(domains)} scenario domains; none above {max_share:.0%} of items"
    return Check(
        "domain_balance",
        bool(domains) and not too_big,
        summary,
        [],
        [f"{d}: {c}" for d, c in sorted(domains.items())],
        params={
            "variant": variant,
            "count": len(domains),
            "share": round(max_share * 100),
            "domains": ", ".join(sorted(too_big)),
        },
    )


def _valence_balance(entries: list[EntryFacts], min_share: float) -> Check:
    """Check that each valence group holds at least ``min_share`` of the emotion labels (an item counts once)."""
    groups = ("positive", "neutral", "negative")
    valences = Counter(v for e in entries for v in set(e.valences))
    total = sum(valences.values())
    thin = [v for v in groups if total and valences[v] / total < min_share]
    balanced = bool(total) and not thin
    return Check(
        "valence_balance",
        balanced,
        f"every valence group holds at least {min_share:.0%} of emotion labels"
        if balanced
        else f"valence groups below {min_share:.0%}: {', '.join(thin) or 'no emotions labelled'}",
        [],
        [f"{v}: {valences[v]}" for v in groups],
        params={
            "variant": "none" if not total else "thin" if thin else "ok",
            "share": round(min_share * 100),
            "groups": ", ".join(thin),
        },
    )


def release_checklist(
    entries: list[EntryFacts],
    *,
    duplicate_threshold: float,
    max_domain_share: float,
    min_valence_share: float,
) -> list[Check]:
    """Run every check; each names the offending uids so the page can link to them."""
    n = len(entries)
    return [
        Check("not_empty", n > 0, f"{n} items", params={"n": n}),
        _all_accepted(entries),
        _revisions_screened(entries),
        *_parity_and_answer_keys(entries),
        _near_duplicates(entries, duplicate_threshold),
        _dimension_targets(entries),
        _domain_balance(entries, max_domain_share),
        _valence_balance(entries, min_valence_share),
    ]


# Offending items linked on a page, per check; the rest are counted (the record keeps them all).
OFFENDERS_SHOWN = 50


def _word_not_empty(p: dict) -> str | None:
    return ngettext("%(n)s item", "%(n)s items", p["n"]) % p if "n" in p else None


def _word_all_accepted(p: dict) -> str | None:
    if "n" not in p:
        return None
    return ngettext("%(ok)s of %(n)s item accepted", "%(ok)s of %(n)s items accepted", p["n"]) % p


def _word_revisions_screened(p: dict) -> str | None:
    if "n" not in p:
        return None
    return (
        ngettext(
            "%(ok)s of %(n)s pinned revision passed screening",
            "%(ok)s of %(n)s pinned revisions passed screening",
            p["n"],
        )
        % p
    )


def _word_bilingual_parity(p: dict) -> str | None:
    if "n" not in p:
        return None
    return (
        ngettext(
            "%(ok)s of %(n)s item has both languages in parity",
            "%(ok)s of %(n)s items have both languages in parity",
            p["n"],
        )
        % p
    )


def _word_answer_keys(p: dict) -> str | None:
    if "bad" not in p:
        return None
    return (
        ngettext(
            "%(bad)s item with a missing or invalid answer key",
            "%(bad)s items with a missing or invalid answer key",
            p["bad"],
        )
        % p
    )


def _word_near_duplicates(p: dict) -> str | None:
    if "pairs" not in p:
        return None
    return (
        ngettext(
            "%(pairs)s near-duplicate pair at cosine >= %(threshold)s",
            "%(pairs)s near-duplicate pairs at cosine >= %(threshold)s",
            p["pairs"],
        )
        % p
    )


def _word_dimension_targets(p: dict) -> str | None:
    if not p.get("variant"):
        return None
    if p["variant"] == "met":
        return _("per-dimension counts meet their targets")
    return _("per-dimension counts differ from targets")


def _word_domain_balance(p: dict) -> str | None:
    variant = p.get("variant")
    if variant == "none":
        return _("no item has a scenario")
    if variant == "too_big":
        return _("domains above %(share)s%% of items: %(domains)s") % p
    if variant == "ok":
        return (
            ngettext(
                "%(count)s scenario domain; none above %(share)s%% of items",
                "%(count)s scenario domains; none above %(share)s%% of items",
                p["count"],
            )
            % p
        )
    return None


def _word_valence_balance(p: dict) -> str | None:
    variant = p.get("variant")
    if variant == "ok":
        return _("every valence group holds at least %(share)s%% of emotion labels") % p
    if variant == "thin":
        return _("valence groups below %(share)s%%: %(groups)s") % p
    if variant == "none":
        return _("no emotions labelled")
    return None


# Each check's summary in the UI language, from its params; None (params of an older record) keeps the English.
SUMMARY_WORDING = {
    "not_empty": _word_not_empty,
    "all_accepted": _word_all_accepted,
    "revisions_screened": _word_revisions_screened,
    "bilingual_parity": _word_bilingual_parity,
    "answer_keys": _word_answer_keys,
    "near_duplicates": _word_near_duplicates,
    "dimension_targets": _word_dimension_targets,
    "domain_balance": _word_domain_balance,
    "valence_balance": _word_valence_balance,
}


def checklist_display(checks: list[dict]) -> list[dict]:
    """Return checks with their summary worded in the UI language (stored checks keep English summaries), and the
    first ``OFFENDERS_SHOWN`` offenders of each with the number of the others (``offenders_more``)."""
    result = []
    for check in checks:
        word = SUMMARY_WORDING.get(check["code"])
        text = word(check.get("params") or {}) if word else None
        offenders = check.get("offenders") or []
        result.append(
            {
                **check,
                "summary": check["summary"] if text is None else text,
                "offenders": offenders[:OFFENDERS_SHOWN],
                "offenders_more": max(0, len(offenders) - OFFENDERS_SHOWN),
            }
        )
    return result
