"""Response imports and labels refuse JSON nested too deep and text holding a NUL character, naming the line and
field, and write nothing (on PostgreSQL a NUL would otherwise fail in the database: a 500)."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.items.models import Benchmark
from annotation.items.services import ImportFailed
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment, ModelResponse

pytestmark = pytest.mark.django_db

GOOD = json.dumps({"item": "op-0", "language": "en", "model": "m-delta", "text": "m-delta answers."})
NUL = json.dumps({"item": "op-0", "language": "zh", "model": "m-delta", "text": "m-delta\u0000 answers."})
DEEP = '{"item": "op-0", "text": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (NUL, "line 2: text: contains a NUL character (\\u0000), which cannot be stored"),
        (DEEP, "line 2: line: JSON nested more than 64 levels deep (at character 89)"),
    ],
    ids=["nul", "deep"],
)
def test_response_import_refuses_a_nul_or_deep_line_and_writes_nothing(prompts, lead, bad_line, expected):
    with pytest.raises(ImportFailed) as exc:
        comparisons.responses_import(data=f"{GOOD}\n{bad_line}\n".encode(), user=lead)

    assert [str(e) for e in exc.value.errors] == [expected]
    assert ModelResponse.objects.count() == 12


def test_response_import_page_refuses_a_nul_with_a_400_naming_line_and_field(prompts, admin_user, login):
    upload = SimpleUploadedFile("responses.jsonl", f"{GOOD}\n{NUL}\n".encode())

    response = login(admin_user).post("/labelling/responses/import/", {"file": upload})

    assert response.status_code == 400
    assert "line 2: text: contains a NUL character" in response.content.decode()
    assert ModelResponse.objects.count() == 12


def test_a_rationale_holding_a_nul_is_refused_by_the_service_naming_the_field(prompts, make_user):
    expert = make_user("expert", username="e0")
    cs = comparisons.comparison_set_build(
        name="nul", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=None
    )
    assignment = LabelAssignment.objects.filter(comparison__comparison_set=cs).first()

    with pytest.raises(ValidationError, match="The field rationale contains a NUL character"):
        comparisons.label_submit(
            comparison=assignment.comparison, expert=expert, winner="left", margin=1, rationale="warm\x00er"
        )
    assert not ExpertLabel.objects.exists()
