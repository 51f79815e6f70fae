"""Raw labels and preference pairs out of a closed comparison set: page, API and command, in CSV, JSONL and Parquet.

A closed set's labels are one row per expert label, experts named E01, E02, ... in account order; an open set's are
never exported (409 with the reason); only set builders (researchers, admins) get them, never experts.
"""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from annotation.labelling import exports
from annotation.labelling import services as comparisons
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment
from annotation.labelling.pairwise import shown_choice
from tests.factories import make_labelled_comparison_set

FORMATS = ("csv", "jsonl", "parquet")


def _rule(assignment: LabelAssignment) -> int:
    """Experts x0 and x1 agree A wins by 2 on even comparisons; x2 disagrees on every third; ties on odd ones."""
    expert = assignment.expert.username
    c = assignment.comparison
    if c.pk % 2:
        return 0
    if expert == "x2" and c.pk % 3 == 0:
        return -1
    return 2


@pytest.fixture
def experts(make_user):
    return [make_user("expert", username=f"x{i}") for i in range(3)]


@pytest.fixture
def closed_set(prompts, experts, researcher):
    cs = make_labelled_comparison_set(experts=experts, name="exported", user=researcher, seed=1, rule=_rule)
    return comparisons.comparison_set_close(comparison_set=cs, user=researcher)


def _read(fmt: str, content: bytes) -> list[dict]:
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(content.decode())))
    if fmt == "jsonl":
        return [json.loads(line) for line in content.decode().splitlines()]
    return pq.read_table(io.BytesIO(content)).to_pylist()


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("fmt", FORMATS)
def test_closed_set_labels_download_as_one_row_per_label_with_pseudonyms(closed_set, experts, researcher, login, fmt):
    response = login(researcher).get(f"/labelling/{closed_set.pk}/labels.{fmt}")
    assert response.status_code == 200 and response.streaming
    body = _body(response)
    rows = _read(fmt, body)
    labels = ExpertLabel.objects.filter(assignment__comparison_set=closed_set).select_related(
        "assignment__comparison__response_a", "assignment__expert"
    )
    assert len(rows) == labels.count() > 0
    pseudonym = {"x0": "E01", "x1": "E02", "x2": "E03"}
    by_key = {(int(r["comparison"]), r["rater"]): r for r in rows}
    for label in labels:
        row = by_key[(label.assignment.comparison_id, pseudonym[label.assignment.expert.username])]
        assert int(row["value"]) == label.score
        assert row["model_a"] == label.assignment.comparison.response_a.model_name
        assert row["order"] == label.shown_order and row["shown_left"] == label.shown_order[0]
        assert row["winner"] == ("tie" if label.score == 0 else "A" if label.score > 0 else "B")
        assert int(row["margin"]) == abs(label.score)
        assert int(row["changes"]) == 0
    assert not any("x0" in json.dumps(row, default=str) for row in rows)
    if fmt == "parquet":
        schema = pq.read_table(io.BytesIO(body)).schema
        assert str(schema.field("value").type) == "int64" and str(schema.field("rater").type) == "string"


def test_a_change_is_counted_and_pseudonyms_are_stable_across_exports(prompts, experts, researcher, login):
    cs = make_labelled_comparison_set(experts=experts, name="changed", user=researcher, seed=1, rule=_rule)
    assignment = LabelAssignment.objects.filter(comparison_set=cs, expert=experts[1]).select_related("label").first()
    winner, margin = shown_choice(shown_order=assignment.shown_order, score=-3)
    comparisons.label_change(comparison=assignment.comparison, expert=experts[1], winner=winner, margin=margin)
    cs = comparisons.comparison_set_close(comparison_set=cs, user=researcher)
    first = list(exports.label_rows(comparison_set=cs))
    assert first == list(exports.label_rows(comparison_set=cs))
    (changed,) = [r for r in first if r["changes"]]
    assert changed["rater"] == "E02" and changed["value"] == -3 and changed["comparison"] == assignment.comparison_id


def test_an_open_sets_labels_are_never_exported(prompts, experts, researcher, login, tmp_path):
    cs = make_labelled_comparison_set(experts=experts, name="still-open", user=researcher, seed=1, rule=_rule)
    client = login(researcher)
    for url in (f"/labelling/{cs.pk}/labels.csv", f"/labelling/{cs.pk}/pairs.jsonl"):
        response = client.get(url)
        assert response.status_code == 409
        assert "still open" in response.content.decode()
    for url in (f"/api/labelling/sets/{cs.pk}/labels/csv/", f"/api/labelling/sets/{cs.pk}/pairs/csv/"):
        response = client.get(url)
        assert response.status_code == 409 and "still open" in response.json()["detail"]
    with pytest.raises(CommandError, match="still open"):
        call_command("export_labels", str(cs.pk), "--out", str(tmp_path / "x.csv"))
    assert not (tmp_path / "x.csv").exists()
    page = client.get(f"/labelling/{cs.pk}/data/").content.decode()
    assert "exported once it is closed" in page and f"/labelling/{cs.pk}/labels.csv" not in page


def test_experts_and_lead_experts_get_no_labels_pairs_or_label_studio_files(closed_set, experts, lead, login):
    pk = closed_set.pk
    urls = [
        f"/labelling/{pk}/data/",
        f"/labelling/{pk}/labels.csv",
        f"/labelling/{pk}/pairs.csv",
        f"/labelling/{pk}/label-studio/tasks.json",
        f"/api/labelling/sets/{pk}/labels/csv/",
        f"/api/labelling/sets/{pk}/pairs/jsonl/",
        f"/api/labelling/sets/{pk}/label-studio/tasks/",
        f"/api/labelling/sets/{pk}/label-studio/config/",
    ]
    for user in (experts[0], lead):
        client = login(user)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 403, url
            assert "m-alpha" not in response.content.decode()


def test_preference_pairs_leave_out_ties_and_disagreements_and_count_them(closed_set, researcher, login):
    counts = exports.label_preference_counts(comparison_set=closed_set)
    expected = {"pair": 0, "tie": 0, "inconsistent": 0, "unparsed": 0}
    for c in closed_set.comparisons.all():
        expected["tie" if c.pk % 2 else "inconsistent" if c.pk % 3 == 0 else "pair"] += 1
    assert counts == expected and counts["pair"] and counts["tie"] and counts["inconsistent"]
    response = login(researcher).get(f"/labelling/{closed_set.pk}/pairs.jsonl")
    rows = _read("jsonl", _body(response))
    assert len(rows) == counts["pair"] == int(response["X-Preference-Pairs"])
    assert int(response["X-Left-Out-Ties"]) == counts["tie"]
    assert int(response["X-Left-Out-Inconsistent"]) == counts["inconsistent"]
    for row in rows:
        comparison = closed_set.comparisons.select_related("response_a", "response_b").get(pk=row["comparison"])
        # A wins on every even comparison the experts agree on.
        assert row["chosen"] == comparison.response_a.text and row["rejected"] == comparison.response_b.text
        assert row["chosen_model"] == comparison.response_a.model_name
        prompt = {"en": "I failed my exam again.", "zh": "我又考砸了。"}[row["language"]]
        assert row["prompt"] == prompt and row["n_chosen"] == row["n_labels"] == 3


def test_the_command_writes_each_format_and_the_api_streams_the_same_rows(closed_set, researcher, login, tmp_path):
    client = login(researcher)
    for fmt in FORMATS:
        out = tmp_path / f"labels.{fmt}"
        call_command("export_labels", closed_set.name, "--format", fmt, "--out", str(out))
        api = client.get(f"/api/labelling/sets/{closed_set.pk}/labels/{fmt}/")
        assert api.status_code == 200
        assert _read(fmt, out.read_bytes()) == _read(fmt, _body(api))
    out = tmp_path / "en.csv"
    call_command("export_labels", str(closed_set.pk), "--language", "en", "--out", str(out))
    assert {row["language"] for row in _read("csv", out.read_bytes())} == {"en"}
    with pytest.raises(CommandError, match="no comparison set"):
        call_command("export_labels", "nope", "--out", str(tmp_path / "n.csv"))


def test_the_labels_download_reads_in_a_fixed_number_of_queries(
    prompts, experts, researcher, login, django_assert_max_num_queries
):
    cs = make_labelled_comparison_set(experts=experts, name="big", user=researcher, seed=2, rule=_rule)
    cs = comparisons.comparison_set_close(comparison_set=cs, user=researcher)
    client = login(researcher)
    for fmt in FORMATS:
        with django_assert_max_num_queries(12):
            body = _body(client.get(f"/labelling/{cs.pk}/labels.{fmt}"))
        assert len(_read(fmt, body)) == ExpertLabel.objects.filter(assignment__comparison_set=cs).count()
        with django_assert_max_num_queries(12):
            _body(client.get(f"/labelling/{cs.pk}/pairs.{fmt}"))


def test_unknown_format_or_language_is_a_404_not_a_file(closed_set, researcher, login):
    client = login(researcher)
    assert client.get(f"/labelling/{closed_set.pk}/labels.xlsx").status_code == 404
    assert client.get(f"/labelling/{closed_set.pk}/labels.csv?language=fr").status_code == 404
    assert client.get(f"/api/labelling/sets/{closed_set.pk}/labels/xlsx/").status_code == 404
    assert client.get(f"/api/labelling/sets/{closed_set.pk}/labels/csv/?language=fr").status_code == 400
    assert ComparisonSet.objects.filter(pk=closed_set.pk).exists()
