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


def release_checklist(
    entries: list[EntryFacts],
    *,
    duplicate_threshold: float,
    max_domain_share: float,
    min_valence_share: float,
) -> list[Check]:
    """Run every check; each names the offending uids so the page can link to them."""
    checks: list[Check] = []
    n = len(entries)
    checks.append(Check("not_empty", n > 0, f"{n} items", params={"n": n}))

    not_accepted = sorted(e.uid for e in entries if e.status != "accepted")
    checks.append(
        Check(
            "all_accepted",
            not not_accepted,
            f"{n - len(not_accepted)} of {n} items accepted",
            not_accepted,
            params={"ok": n - len(not_accepted), "n": n},
        )
    )

    parity_bad, answer_bad, details = [], [], []
    for e in entries:
        issues = check_parity(e.kind, e.content)
        other = [i for i in issues if i.code not in ANSWER_CODES]
        if other:
            parity_bad.append(e.uid)
            details += [f"{e.uid}: {i.message}" for i in other]
        if e.kind != "open_prompt" and any(i.code in ANSWER_CODES for i in issues):
            answer_bad.append(e.uid)
    checks.append(
        Check(
            "bilingual_parity",
            not parity_bad,
            f"{n - len(parity_bad)} of {n} items have both languages in parity",
            sorted(parity_bad),
            details,
            params={"ok": n - len(parity_bad), "n": n},
        )
    )
    checks.append(
        Check(
            "answer_keys",
            not answer_bad,
            f"{len(answer_bad)} items with a missing or invalid answer key",
            sorted(answer_bad),
            params={"bad": len(answer_bad)},
        )
    )

    duplicates = []
    for lang in LANGUAGES:
        texts = {e.uid: prose_text(e.content.get(lang)) for e in entries}
        duplicates += [(lang, d) for d in near_duplicates(texts, threshold=duplicate_threshold)]
    dup_uids = sorted({uid for _, d in duplicates for uid in (d.a, d.b)})
    checks.append(
        Check(
            "near_duplicates",
            not duplicates,
            f"{len(duplicates)} near-duplicate pairs at cosine >= {duplicate_threshold}",
            dup_uids,
            [f"{lang}: {d.a} ~ {d.b} ({d.score:.2f})" for lang, d in duplicates],
            params={"pairs": len(duplicates), "threshold": duplicate_threshold},
        )
    )

    targets = {e.dimension: e.dimension_target for e in entries if e.dimension_target}
    per_dim_lang = Counter((e.dimension, lang) for e in entries for lang in LANGUAGES if e.content.get(lang))
    target_details, target_ok = [], True
    for dim, target in sorted(targets.items()):
        for lang in LANGUAGES:
            have = per_dim_lang[(dim, lang)]
            if have != target:
                target_ok = False
                target_details.append(f"{dim} [{lang}]: {have} of {target}")
    checks.append(
        Check(
            "dimension_targets",
            target_ok,
            "per-dimension counts meet their targets" if target_ok else "per-dimension counts differ from targets",
            [],
            target_details,
            params={"variant": "met" if target_ok else "differ"},
        )
    )

    domains = Counter(e.domain for e in entries if e.domain)
    domain_details = [f"{d}: {c}" for d, c in sorted(domains.items())]
    too_big = [d for d, c in domains.items() if n and c / n > max_domain_share]
    checks.append(
        Check(
            "domain_balance",
            bool(domains) and not too_big,
            "no item has a scenario"
            if not domains
            else f"domains above {max_domain_share:.0%} of items: {', '.join(sorted(too_big))}"
            if too_big
            else f"{len(domains)} scenario domains; none above {max_domain_share:.0%} of items",
            [],
            domain_details,
            params={
                "variant": "none" if not domains else "too_big" if too_big else "ok",
                "count": len(domains),
                "share": round(max_domain_share * 100),
                "domains": ", ".join(sorted(too_big)),
            },
        )
    )

    valences = Counter(v for e in entries for v in set(e.valences))
    total_v = sum(valences.values())
    thin = [v for v in ("positive", "neutral", "negative") if total_v and valences[v] / total_v < min_valence_share]
    checks.append(
        Check(
            "valence_balance",
            bool(total_v) and not thin,
            f"every valence group holds at least {min_valence_share:.0%} of emotion labels"
            if total_v and not thin
            else f"valence groups below {min_valence_share:.0%}: {', '.join(thin) or 'no emotions labelled'}",
            [],
            [f"{v}: {valences[v]}" for v in ("positive", "neutral", "negative")],
            params={
                "variant": "none" if not total_v else "thin" if thin else "ok",
                "share": round(min_valence_share * 100),
                "groups": ", ".join(thin),
            },
        )
    )
    return checks


# Offending items linked on a page, per check; the rest are counted (the record keeps them all).
OFFENDERS_SHOWN = 50


def checklist_display(checks: list[dict]) -> list[dict]:
    """Return checks with their summary worded in the UI language (stored checks keep English summaries), and the
    first ``OFFENDERS_SHOWN`` offenders of each with the number of the others (``offenders_more``)."""
    result = []
    for check in checks:
        p = check.get("params") or {}
        code, variant = check["code"], p.get("variant")
        text = check["summary"]
        if code == "not_empty" and "n" in p:
            text = ngettext("%(n)s item", "%(n)s items", p["n"]) % p
        elif code == "all_accepted" and "n" in p:
            text = ngettext("%(ok)s of %(n)s item accepted", "%(ok)s of %(n)s items accepted", p["n"]) % p
        elif code == "bilingual_parity" and "n" in p:
            text = (
                ngettext(
                    "%(ok)s of %(n)s item has both languages in parity",
                    "%(ok)s of %(n)s items have both languages in parity",
                    p["n"],
                )
                % p
            )
        elif code == "answer_keys" and "bad" in p:
            text = (
                ngettext(
                    "%(bad)s item with a missing or invalid answer key",
                    "%(bad)s items with a missing or invalid answer key",
                    p["bad"],
                )
                % p
            )
        elif code == "near_duplicates" and "pairs" in p:
            text = (
                ngettext(
                    "%(pairs)s near-duplicate pair at cosine >= %(threshold)s",
                    "%(pairs)s near-duplicate pairs at cosine >= %(threshold)s",
                    p["pairs"],
                )
                % p
            )
        elif code == "dimension_targets" and variant:
            met = variant == "met"
            text = (
                _("per-dimension counts meet their targets") if met else _("per-dimension counts differ from targets")
            )
        elif code == "domain_balance" and variant == "none":
            text = _("no item has a scenario")
        elif code == "domain_balance" and variant == "too_big":
            text = _("domains above %(share)s%% of items: %(domains)s") % p
        elif code == "domain_balance" and variant == "ok":
            text = (
                ngettext(
                    "%(count)s scenario domain; none above %(share)s%% of items",
                    "%(count)s scenario domains; none above %(share)s%% of items",
                    p["count"],
                )
                % p
            )
        elif code == "valence_balance" and variant == "ok":
            text = _("every valence group holds at least %(share)s%% of emotion labels") % p
        elif code == "valence_balance" and variant == "thin":
            text = _("valence groups below %(share)s%%: %(groups)s") % p
        elif code == "valence_balance" and variant == "none":
            text = _("no emotions labelled")
        offenders = check.get("offenders") or []
        result.append(
            {
                **check,
                "summary": text,
                "offenders": offenders[:OFFENDERS_SHOWN],
                "offenders_more": max(0, len(offenders) - OFFENDERS_SHOWN),
            }
        )
    return result
