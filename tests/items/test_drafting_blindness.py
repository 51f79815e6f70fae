"""Drafting keeps labels blind: experts draft only with endpoints marked for drafting, never with a model that
answers in an open comparison set, and see no endpoint or model name on the drafting pages."""

import re

import pytest
from django.core.exceptions import ValidationError

from annotation.items.blinding import drafting_endpoints, drafting_refusal
from annotation.items.models import Dimension, DraftingJob
from annotation.items.services import drafting
from annotation.labelling import services as labelling
from annotation.labelling.models import ComparisonSet
from tests.factories import make_item, make_labelled_comparison_set


@pytest.fixture
def template(db, taxonomy, lead):
    return drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        kind="mcq",
        instructions="Write a short scenario where the feeling is implied, not named.",
        user=lead,
    )


@pytest.fixture
def endpoints(make_endpoint):
    """A drafting endpoint, an endpoint not marked for drafting, and a marked one whose model answers in a set."""
    return {
        "drafter": make_endpoint("sim-drafter", name="Secret drafter name", for_drafting=True),
        "unmarked": make_endpoint("sim-style-list", name="Unmarked responder"),
        "answering": make_endpoint("sim-style-concise", name="Answering responder", for_drafting=True),
    }


def open_set_with(model: str, experts: list, user: object) -> ComparisonSet:
    for uid, text in (("bl-open-1", "My dog died."), ("bl-open-2", "I lost my job.")):
        content = {"en": {"prompt": text}, "zh": {"prompt": "我很难过。"}}
        make_item(uid=uid, kind="open_prompt", dimension="emotion_matching", content=content, status="accepted")
    rows = [
        {"item": uid, "language": "en", "model": name, "text": f"{name} says: that must be hard ({uid})."}
        for uid in ("bl-open-1", "bl-open-2")
        for name in (model, "other-model")
    ]
    return make_labelled_comparison_set(experts=experts, responses=rows, user=user, languages=("en",), name="open")


def test_only_marked_endpoints_whose_model_answers_in_no_open_set_are_offered(
    endpoints, template, expert, lead, researcher
):
    assert list(drafting_endpoints()) == [endpoints["drafter"], endpoints["answering"]]
    comparison_set = open_set_with("sim-style-concise", [expert], researcher)
    assert list(drafting_endpoints()) == [endpoints["drafter"]]
    assert "not marked for drafting" in drafting_refusal(endpoints["unmarked"])
    assert "open comparison set" in drafting_refusal(endpoints["answering"])
    for name in ("unmarked", "answering"):
        with pytest.raises(ValidationError) as refused:
            drafting.drafting_job_start(
                template=template, endpoint=endpoints[name], count=1, languages=["en"], user=lead, start=False
            )
        assert "endpoint" in refused.value.message_dict
    assert not DraftingJob.objects.exists(), "nothing half-written"
    # Once the set is closed its labels are final: the model may draft again.
    labelling.comparison_set_close(comparison_set=comparison_set, user=researcher)
    assert drafting_refusal(endpoints["answering"]) == ""
    assert endpoints["answering"] in drafting_endpoints()


def test_an_endpoint_marked_for_drafting_does_not_generate_responses(endpoints, researcher, taxonomy):
    from annotation.items.models import Benchmark

    with pytest.raises(ValidationError, match="marked for drafting"):
        labelling.responses_generate(
            benchmark=Benchmark.objects.get(slug="facet"), endpoint=endpoints["drafter"], user=researcher, start=False
        )


@pytest.mark.parametrize("role", ["expert", "lead"])
def test_labelling_roles_see_pseudonyms_and_no_endpoint_or_model_name(
    request, role, endpoints, template, login, django_assert_max_num_queries
):
    user = request.getfixturevalue(role)
    client = login(user)
    with django_assert_max_num_queries(12):
        page = client.get("/drafting/")
    body = page.content.decode()
    drafter = endpoints["drafter"]
    assert f"Drafting model {drafter.pk}" in body
    for endpoint in endpoints.values():
        assert endpoint.name not in body and endpoint.model not in body
    offered = re.search(r'<select name="j-endpoint".*?</select>', body, re.S).group(0)
    assert re.findall(r'value="(\d+)"', offered) == [str(drafter.pk), str(endpoints["answering"].pk)]
    answer = client.post(
        "/drafting/",
        {"form": "job", "j-template": template.pk, "j-endpoint": drafter.pk, "j-count": 1, "j-languages": ["en"]},
    )
    job = DraftingJob.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/drafting/jobs/{job.pk}/"
    body = client.get(answer["Location"]).content.decode()
    assert f"Drafting model {drafter.pk}" in body
    assert drafter.name not in body and drafter.model not in body


def test_posting_an_endpoint_that_is_not_offered_is_refused_on_the_page(endpoints, template, lead, login):
    client = login(lead)
    answer = client.post(
        "/drafting/",
        {
            "form": "job",
            "j-template": template.pk,
            "j-endpoint": endpoints["unmarked"].pk,
            "j-count": 1,
            "j-languages": ["en"],
        },
    )
    assert answer.status_code == 400
    assert "Select a valid choice" in answer.content.decode()
    assert not DraftingJob.objects.exists()


def test_researchers_and_admins_who_may_see_endpoints_see_their_names(endpoints, admin_user, login):
    body = login(admin_user).get("/drafting/").content.decode()
    assert endpoints["drafter"].name in body


def test_the_page_says_when_no_endpoint_is_marked(db, taxonomy, lead, login, make_endpoint):
    make_endpoint("sim-style-list")
    body = login(lead).get("/drafting/").content.decode()
    assert 'id="no-drafting-endpoint"' in body
