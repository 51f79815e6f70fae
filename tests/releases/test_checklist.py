"""The release checklist and its wording, from plain entry facts; no database."""

from django.utils import translation

from annotation.releases.checks import OFFENDERS_SHOWN, EntryFacts, checklist_display, release_checklist
from tests.factories.items import mcq_content

LIMITS = {"duplicate_threshold": 0.9, "max_domain_share": 0.5, "min_valence_share": 0.2}


def entry(uid: str, **changes: object) -> EntryFacts:
    values = {
        "uid": uid,
        "kind": "mcq",
        "status": "accepted",
        "dimension": "hidden_emotion_recognition",
        "dimension_target": None,
        "content": mcq_content(),
        "domain": "family",
        "valences": ["positive", "neutral", "negative"],
        "revision": 1,
        "accepted_revisions": (1,),
    }
    return EntryFacts(**(values | changes))


def distinct_content(n: int) -> dict:
    content = mcq_content()
    content["en"]["context"] = f"Case {n}: " + " ".join(f"word{n}x{k}" for k in range(12))
    content["zh"]["context"] = f"案例{n}：" + "".join(f"词{n}{k}" for k in range(12))
    return content


def checks_by_code(entries: list[EntryFacts], **limits: float) -> dict:
    return {c.code: c for c in release_checklist(entries, **(LIMITS | limits))}


def test_every_check_runs_in_order_and_an_empty_release_fails():
    checks = release_checklist([], **LIMITS)
    assert [c.code for c in checks] == [
        "not_empty",
        "all_accepted",
        "revisions_screened",
        "bilingual_parity",
        "answer_keys",
        "near_duplicates",
        "dimension_targets",
        "domain_balance",
        "valence_balance",
    ]
    by_code = {c.code: c for c in checks}
    assert not by_code["not_empty"].passed and by_code["not_empty"].summary == "0 items"
    assert by_code["domain_balance"].params["variant"] == "none"
    assert by_code["valence_balance"].summary == "valence groups below 20%: no emotions labelled"


def test_items_not_accepted_and_bad_answer_keys_are_named():
    entries = [
        entry("b", content=distinct_content(1)),
        entry("a", status="draft", content=distinct_content(2)),
        entry("c", content=distinct_content(3) | {"zh": distinct_content(3)["zh"] | {"answer": 9}}),
    ]
    checks = checks_by_code(entries, max_domain_share=1.0)
    assert checks["all_accepted"].offenders == ["a"] and checks["all_accepted"].summary == "2 of 3 items accepted"
    assert not checks["answer_keys"].passed and checks["answer_keys"].offenders == ["c"]
    assert checks["answer_keys"].params == {"bad": 1}
    assert checks["bilingual_parity"].passed and checks["bilingual_parity"].params == {"ok": 3, "n": 3}


def test_identical_texts_are_near_duplicates_in_both_languages():
    checks = checks_by_code([entry("x"), entry("y")], max_domain_share=1.0)
    duplicates = checks["near_duplicates"]
    assert not duplicates.passed and duplicates.offenders == ["x", "y"]
    assert [d.split(":")[0] for d in duplicates.details] == ["en", "zh"]
    assert duplicates.params == {"pairs": 2, "threshold": 0.9}


def test_dimension_targets_are_counted_per_language():
    entries = [entry("a", dimension_target=2, content=distinct_content(1))]
    check = checks_by_code(entries, max_domain_share=1.0)["dimension_targets"]
    assert not check.passed and check.params == {"variant": "differ"}
    assert check.details == ["hidden_emotion_recognition [en]: 1 of 2", "hidden_emotion_recognition [zh]: 1 of 2"]
    met = checks_by_code(entries + [entry("b", dimension_target=2, content=distinct_content(2))])["dimension_targets"]
    assert met.passed and met.summary == "per-dimension counts meet their targets"


def test_a_domain_above_its_share_and_a_thin_valence_group_fail():
    entries = [entry(f"i{n}", content=distinct_content(n), valences=["negative"]) for n in range(3)]
    entries.append(entry("z", content=distinct_content(9), domain="work", valences=["positive"]))
    checks = checks_by_code(entries)
    domains = checks["domain_balance"]
    assert not domains.passed and domains.summary == "domains above 50% of items: family"
    assert domains.details == ["family: 3", "work: 1"] and domains.params["variant"] == "too_big"
    valence = checks["valence_balance"]
    assert not valence.passed and valence.params == {"variant": "thin", "share": 20, "groups": "neutral"}
    assert valence.details == ["positive: 1", "neutral: 0", "negative: 3"]
    balanced = checks_by_code(entries, max_domain_share=0.8, min_valence_share=0.0)
    assert balanced["domain_balance"].summary == "2 scenario domains; none above 80% of items"
    assert balanced["valence_balance"].passed


def test_display_words_each_summary_from_its_params_and_keeps_older_records_as_stored():
    entries = [entry(f"u{n:03d}", status="draft", content=distinct_content(n)) for n in range(OFFENDERS_SHOWN + 3)]
    checks = [c.as_dict() for c in release_checklist(entries, **LIMITS)]
    older = {"code": "not_empty", "passed": True, "summary": "as stored", "offenders": []}
    with translation.override("zh-hans"):
        shown = checklist_display(checks + [older])
    accepted = next(c for c in shown if c["code"] == "all_accepted")
    assert len(accepted["offenders"]) == OFFENDERS_SHOWN and accepted["offenders_more"] == 3
    assert accepted["summary"] != checks[1]["summary"] and "53" in accepted["summary"]
    assert shown[-1]["summary"] == "as stored" and shown[-1]["offenders_more"] == 0
    with translation.override("en"):
        english = checklist_display(checks)
    assert [c["summary"] for c in english][:2] == ["53 items", "0 of 53 items accepted"]
