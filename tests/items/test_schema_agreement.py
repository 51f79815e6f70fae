"""The published item schema and the importer agree on every record: 30 edge cases and the schema's own examples.

The schema verdict comes from ``jsonschema`` on docs/item-schema.json as published (the file, not the app's copy);
the importer's from ``parse_record``, the record check every import runs before looking up taxonomy codes.
"""

import contextlib
import copy
import json

import jsonschema
import jsonschema_rs
import pytest

from annotation.items.interchange import parse_record
from annotation.items.schema import SCHEMA_PATH, integral

SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
MAX_CHARS = 20000


def base(**fields):
    record = {
        "format": "eistudio-item/1",
        "uid": "edge-1",
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": {
            "en": {"context": "", "question": "How does Mia feel?", "options": ["Joy", "Fear"], "answer": 1},
            "zh": {"question": "米娅感觉如何？", "options": ["喜悦", "恐惧"], "answer": 1},
        },
    }
    record.update(fields)
    return record


def en(**fields):
    record = base()
    record["content"]["en"].update(fields)
    return record


def without(record, *path):
    record = copy.deepcopy(record)
    node = record
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return record


TURNS = {"turns": [{"user": "Hi", "options": ["a", "b"], "answer": 0}]}
# (name, record, accepted by both)
CASES = [
    ("plain mcq", base(), True),
    ("crisis level 2.0 is the integer 2", base(crisis_level=2.0), True),
    ("answer 1.0 is the integer 1", en(answer=1.0), True),
    ("revision 3.0", base(revision=3.0), True),
    ("answer null", en(answer=None), True),
    ("one language only", without(base(), "content", "zh"), True),
    ("empty context", en(context=""), True),
    ("whitespace-only question", en(question="   "), False),
    ("whitespace-only option", en(options=["Joy", " \t"]), False),
    ("empty question", en(question=""), False),
    ("difficulty null", base(difficulty=None), False),
    ("status null", base(status=None), False),
    ("revision 0", base(revision=0), False),
    ("revision 'abc'", base(revision="abc"), False),
    ("answer -1", en(answer=-1), False),
    ("answer 12 (no item has 13 options)", en(answer=12), False),
    ("answer 1.5", en(answer=1.5), False),
    ("answer 10**30", en(answer=10**30), False),
    ("answer true", en(answer=True), False),
    ("missing question", without(base(), "content", "en", "question"), False),
    ("missing options", without(base(), "content", "en", "options"), False),
    ("open-prompt shape on an mcq item", base(content={"en": {"prompt": "Talk to me."}}), False),
    ("turns on an mcq item", base(content={"en": TURNS}), False),
    ("a language given as null", base(content={"en": base()["content"]["en"], "zh": None}), False),
    ("unknown language", base(content={"fr": {"question": "Q?", "options": ["a", "b"]}}), False),
    ("crisis level 6", base(crisis_level=6), False),
    ("crisis level '2'", base(crisis_level="2"), False),
    ("one option", en(options=["Joy"]), False),
    ("uid with a space", base(uid="edge 1"), False),
    ("unknown field", base(colour="red"), False),
    ("message over 500 characters", base(message="x" * 501), False),
    ("missing content", without(base(), "content"), False),
    ("unknown kind", base(kind="essay"), False),
    ("multi-turn item", base(kind="multi_turn_choice", content={"en": TURNS}), True),
    (
        "multi-turn answer 0.0",
        base(kind="multi_turn_choice", content={"en": {"turns": [{**TURNS["turns"][0], "answer": 0.0}]}}),
        True,
    ),
    ("open prompt", base(kind="open_prompt", content={"zh": {"prompt": "我很难过。"}}), True),
    ("whitespace-only prompt", base(kind="open_prompt", content={"zh": {"prompt": "\n"}}), False),
    (
        "whitespace-only turn user",
        base(kind="multi_turn_choice", content={"en": {"turns": [{**TURNS["turns"][0], "user": " "}]}}),
        False,
    ),
    ("emotions not a list", base(emotions="joy"), False),
    ("metadata not an object", base(metadata=[]), False),
    ("format of another version", base(format="eistudio-item/2"), False),
]


FAST = jsonschema_rs.validator_for(SCHEMA)


def verdicts(record):
    schema_ok = VALIDATOR.is_valid(record)
    # The importer's fast path (jsonschema-rs) gives the same verdict as jsonschema, where it can read the record.
    with contextlib.suppress(ValueError, OverflowError):
        assert FAST.is_valid(record) == schema_ok
    parsed = parse_record(1, record, max_chars=MAX_CHARS)
    return schema_ok, not isinstance(parsed, list), parsed


@pytest.mark.parametrize(("name", "record", "accepted"), CASES, ids=[c[0] for c in CASES])
def test_the_schema_and_the_importer_agree(name, record, accepted):
    schema_ok, importer_ok, parsed = verdicts(record)
    assert schema_ok == importer_ok == accepted, (name, schema_ok, importer_ok, parsed)
    if not accepted:
        # The importer names a field for every refusal, never just "invalid".
        assert parsed and all(e.field and e.message for e in parsed)


def test_there_are_at_least_30_edge_cases():
    assert len(CASES) >= 30
    assert sum(1 for *_, ok in CASES if not ok) >= 20


@pytest.mark.parametrize("index", range(len(SCHEMA["examples"])))
def test_the_schema_examples_are_valid_for_both(index):
    example = SCHEMA["examples"][index]
    schema_ok, importer_ok, parsed = verdicts(example)
    assert schema_ok and importer_ok, parsed
    assert parsed.uid == example["uid"] and parsed.content == example["content"]


def test_integral_numbers_are_stored_as_integers():
    parsed = parse_record(
        1,
        base(crisis_level=2.0, content={"en": {"question": "Q?", "options": ["a", "b"], "answer": 1.0}}),
        max_chars=MAX_CHARS,
    )
    assert parsed.crisis_level == 2 and type(parsed.crisis_level) is int
    assert type(parsed.content["en"]["answer"]) is int
    assert integral({"x": 3.5, "y": [1.0]}) == {"x": 3.5, "y": [1]}


def test_the_refusals_name_the_field_in_the_importer_wording():
    def errors(record):
        return [str(e) for e in parse_record(4, record, max_chars=MAX_CHARS)]

    assert errors(en(question="  ")) == ["line 4: content.en.question: must not be empty or only white space"]
    assert errors(en(options=["Joy", " "])) == ["line 4: content.en.options[1]: must not be empty or only white space"]
    assert errors(base(difficulty=None)) == ["line 4: difficulty: must be one of '', easy, medium, hard, got None"]
    assert errors(base(revision=0)) == ["line 4: revision: must be a revision number (an integer from 1), got 0"]
    assert errors(without(base(), "content", "en", "question")) == ["line 4: content.en.question: required field"]
    assert sorted(errors(base(content={"en": {"prompt": "Talk to me."}}))) == [
        "line 4: content.en.options: required field",
        "line 4: content.en.prompt: unknown field",
        "line 4: content.en.question: required field",
    ]
    assert errors(base(content={"fr": {}})) == ["line 4: content.fr: unknown language; expected en or zh"]


def test_a_lower_instance_limit_is_applied_through_the_schema_and_served(client, settings, db):
    settings.ITEM_MAX_TEXT_CHARS = 50
    record = en(context="x" * 51)
    assert [str(e) for e in parse_record(1, record, max_chars=50)] == [
        "line 1: content.en.context: text too long: 51 characters (limit 50)"
    ]
    assert VALIDATOR.is_valid(record), "the published schema states the default limit, 20,000"
    from tests.factories import UserFactory

    client.force_login(UserFactory())
    served = client.get("/schema/item.json").json()
    assert served["allOf"][0]["then"]["properties"]["content"]["properties"]["en"]["properties"]["context"] == {
        "type": "string",
        "maxLength": 50,
    }
