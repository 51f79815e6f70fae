"""Independent validation of EiCAP probe keys by a second simulated judge: kappa, interval, disagreements."""

import json
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db.models import F

from annotation.items.models import Benchmark, DraftingJob, KeyJudgement, KeyValidation, ReplySet
from annotation.items.services import drafting, expansion
from calibration import keys
from tests.factories import audit_reply_set, make_reply_set, work_llm_run


@pytest.fixture
def probes(transactional_db, taxonomy, lead):
    for n in (1, 2):
        reply_set = make_reply_set(uid=f"tt-rs-{n}", user=lead, seed=n)
        audit_reply_set(reply_set, lead)
        expansion.reply_set_expand(reply_set=reply_set, user=lead)
    return Benchmark.objects.get(slug="eicap")


def hand_kappa(pairs: list[tuple[int, int]]) -> float:
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in range(4)) / n**2
    return (observed - expected) / (1 - expected)


def test_a_second_judge_answers_every_probe_turn_blind_and_kappa_is_recorded(probes, make_endpoint, researcher):
    judge = make_endpoint("sim-mcq-acc80", name="Gemini-like judge")
    validation = keys.key_validation_start(benchmark=probes, endpoint=judge, user=researcher, seed=3, start=False)
    assert validation.n_probes == 6
    request = validation.llm_run.items.first().request["messages"]
    text = " ".join(m["content"] for m in request)
    # The judge sees the user turn and lettered options only: no principle, no taxonomy, no reply-set wording.
    assert "A. " in text and "principle" not in text.lower() and "Follows" not in text
    work_llm_run(validation.llm_run_id)
    validation.refresh_from_db()
    assert validation.collected
    judgements = list(KeyJudgement.objects.filter(validation=validation))
    assert len(judgements) == 6 * 2 * 2  # probes x languages x turns
    answered = [(j.key, j.chosen) for j in judgements if j.chosen is not None]
    assert validation.n_units == len(answered) and validation.unanswered == len(judgements) - len(answered)
    assert validation.kappa == pytest.approx(hand_kappa(answered))
    assert validation.ci_low <= validation.kappa <= validation.ci_high and validation.n_boot == keys.N_BOOT
    assert validation.agreement == pytest.approx(sum(a == b for a, b in answered) / len(answered))
    assert 0.3 < validation.kappa <= 1
    # A second collection changes nothing.
    assert keys.key_validation_collect(validation=validation).kappa == validation.kappa


def test_the_drafting_model_may_not_validate_its_own_probes(transactional_db, taxonomy, lead, make_endpoint):
    drafter = make_endpoint("sim-drafter", for_drafting=True)
    template = drafting.item_template_save(
        dimension=ReplySet._meta.get_field("dimension").related_model.objects.get(
            benchmark__slug="eicap", code="basic_emotion_labels"
        ),
        kind="reply_set",
        instructions="Everyday disclosures.",
        user=lead,
    )
    job = drafting.drafting_job_start(
        template=template, endpoint=drafter, count=1, languages=["en"], user=lead, start=False
    )
    work_llm_run(job.llm_run_id)
    reply_set = ReplySet.objects.get(job=DraftingJob.objects.get())
    audit_reply_set(reply_set, lead)
    expansion.reply_set_expand(reply_set=reply_set, user=lead)
    benchmark = Benchmark.objects.get(slug="eicap")
    with pytest.raises(ValidationError, match="another model family"):
        keys.key_validation_start(benchmark=benchmark, endpoint=drafter, user=lead, start=False)
    with pytest.raises(ValidationError, match="no probes"):
        keys.key_validation_start(
            benchmark=Benchmark.objects.get(slug="facet"), endpoint=make_endpoint("sim-mcq-acc90"), user=lead
        )


def test_the_command_validates_and_prints_the_figure(probes, make_endpoint, capsys):
    judge = make_endpoint("sim-mcq-acc95", name="other family")
    call_command("eicap_validate", "--endpoint", judge.name, "--wait")
    out = capsys.readouterr().out
    assert "Cohen's kappa" in out and "probe turns" in out


def test_a_researcher_starts_a_validation_on_the_page_and_reads_it(
    probes, make_endpoint, researcher, expert, login, django_assert_max_num_queries
):
    judge = make_endpoint("sim-mcq-acc70", name="Family B judge")
    client = login(researcher)
    assert client.get("/calibration/key-validation/").status_code == 200
    answer = client.post("/calibration/key-validation/", {"benchmark": probes.pk, "endpoint": judge.pk, "seed": 0})
    assert answer.status_code == 302
    validation = KeyValidation.objects.get()
    work_llm_run(validation.llm_run_id)
    with django_assert_max_num_queries(12):
        body = client.get(answer["Location"]).content.decode()
    assert "Cohen&#x27;s kappa" in body or "Cohen's kappa" in body
    assert "Family B judge" in body
    listed = client.get("/api/calibration/key-validations/").json()
    assert listed["results"][0]["kappa"] == pytest.approx(KeyValidation.objects.get().kappa)
    disagreements = client.get(f"/api/calibration/key-validations/{validation.pk}/disagreements/").json()
    assert len(disagreements) == KeyJudgement.objects.exclude(chosen=F("key")).count()
    client.logout()
    # Experts never reach the validation pages (they name the judge) but review its disagreements blind.
    client = login(expert)
    assert client.get("/calibration/key-validation/").status_code == 403
    assert client.get(f"/calibration/key-validation/{validation.pk}/").status_code == 403
    assert client.get("/api/calibration/key-validations/").status_code == 403
    body = client.get("/reply-sets/disagreements/").content.decode()
    assert "Family B judge" not in body and "sim-mcq-acc70" not in body


def test_the_api_starts_a_validation_and_refuses_the_drafter(probes, make_endpoint, researcher, login):
    client = login(researcher)
    judge = make_endpoint("sim-mcq-acc90")
    answer = client.post("/api/calibration/key-validations/", {"benchmark": "eicap", "endpoint": judge.pk})
    assert answer.status_code == 201 and answer.json()["n_probes"] == 6
    empty = client.post("/api/calibration/key-validations/", {"benchmark": "facet", "endpoint": judge.pk})
    assert empty.status_code == 400 and "no probes" in json.dumps(empty.json())


def test_a_release_of_validated_probes_states_the_figure_in_its_card(probes, make_endpoint, lead, admin_user):
    from annotation.items.models import Item
    from annotation.items.services import item_status_decide
    from annotation.releases.selectors import release_card_text
    from tests.factories import make_frozen_release

    for item in Item.objects.filter(metadata__has_key="eicap"):
        item_status_decide(item=item, status="accepted", user=lead, reason="audited", source="lead_decision")
    unvalidated = make_frozen_release(benchmark="eicap", version="0.9.0", user=admin_user)
    assert "Independent validation of the keys" not in release_card_text(release=unvalidated)
    validation = keys.key_validation_start(
        benchmark=probes, endpoint=make_endpoint("sim-mcq-acc90"), user=lead, start=False
    )
    work_llm_run(validation.llm_run_id)
    validation.refresh_from_db()
    release = make_frozen_release(benchmark="eicap", version="1.0.0", user=admin_user)
    card = release_card_text(release=release)
    assert "### Independent validation of the keys" in card
    assert f"Cohen's kappa between the judge's answers and the keys: {validation.kappa:.3f}" in card
    assert "6 probes of this release were judged (of 6 in the validation)" in card
    assert "sim-mcq-acc90" not in card
    # The card of the release frozen before the validation is kept as written.
    assert "Independent validation of the keys" not in release_card_text(release=unvalidated)


def test_the_demo_builds_a_small_eicap_study(transactional_db, simulator, settings):
    from annotation.items.models import Item, ReplyRevision
    from annotation.releases.selectors import release_card_text
    from annotation.screening.criteria import default_criteria_create
    from annotation.screening.models import Criterion
    from demo.base import demo_seed
    from demo.eicap import demo_eicap
    from llm import services as llm_services

    default_criteria_create(Criterion)
    demo_seed()
    llm_services.simulator_endpoints_register(base_url=simulator.base_url)
    message = demo_eicap()
    assert message.startswith("demo EiCAP study: 5 reply sets")
    assert ReplyRevision.objects.filter(number=2).count() == 1
    probes = Item.objects.filter(benchmark__slug="eicap", metadata__has_key="eicap")
    # 5 sets x 3 preferred replies, one of them rejected: 14 probes, accepted as they were built.
    assert probes.count() == 14 and set(probes.values_list("status", flat=True)) == {"accepted"}
    validation = KeyValidation.objects.get()
    assert validation.collected and validation.kappa is not None and validation.kappa > 0.5
    card = release_card_text(release=Benchmark.objects.get(slug="eicap").releases.get(version="0.1.0"))
    assert "Independent validation of the keys" in card
    assert demo_eicap() == "demo EiCAP study already present"
