"""Contamination checks: TF-IDF nearest-neighbour cosines by blocks against a brute-force computation, the corpus
reader's errors, and the check through its service, worker task, page, API and command."""

import json

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from sklearn.metrics.pairwise import cosine_similarity

from evaluation import contamination, tasks
from evaluation.models import ContaminationCheck
from evaluation.services.contamination import contamination_check_create
from tests.factories import make_frozen_release, make_item, mcq_content
from tests.factories.llm import lose_queued_task, run_queued_tasks

WORDS = [
    "sad", "happy", "friend", "exam", "cancelled", "birthday", "sorry", "angry", "calm", "lonely", "proud", "worried",
    "tired", "glad",
]  # fmt: skip


def texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(n)]


def test_blocked_nearest_neighbours_equal_the_brute_force_maximum():
    queries, corpus = texts(23, 1), texts(37, 2)
    where, best = contamination.nearest_neighbours(queries, corpus, row_block=5, column_block=7)
    vectors = contamination.vectoriser(False).fit_transform(queries + corpus)
    full = cosine_similarity(vectors[:23], vectors[23:])
    assert best == pytest.approx(full.max(axis=1), abs=1e-6)
    assert np.allclose(full[np.arange(23), where], full.max(axis=1), atol=1e-6)


def test_an_exact_copy_has_cosine_one_and_chinese_is_read_by_characters():
    where, best = contamination.nearest_neighbours(
        ["我又考砸了，很难过", "朋友忘了我的生日"], ["朋友忘了我的生日", "今天天气很好"]
    )
    assert where[1] == 0 and best[1] == pytest.approx(1.0)
    assert 0 < best[0] < 1
    assert contamination.is_chinese(["朋友忘了我的生日"]) and not contamination.is_chinese(["a friend forgot"])


def test_the_summary_counts_every_text_in_one_bin_and_lists_the_closest_first():
    corpus = [contamination.CorpusText(f"c{i}", t) for i, t in enumerate(["a b", "c d"])]
    summary = contamination.contamination_summary(
        ["x", "y", "z"], ["a", "b", "c"], corpus, np.array([0, 1, 1]), np.array([0.2, 1.0, 0.05])
    )
    assert summary["mean"] == pytest.approx(1.25 / 3) and summary["above_08"] == 1
    assert sum(b["count"] for b in summary["histogram"]) == 3
    assert summary["histogram"][-1]["count"] == 1 and summary["histogram"][1]["count"] == 1
    assert [p["key"] for p in summary["closest"]] == ["y", "x", "z"] and summary["closest"][0]["corpus_key"] == "c1"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"text": "ok"}\nnot json\n', "line 2: not JSON"),
        (b'{"id": 1}\n', "line 1: no text"),
        (b"[1, 2]\n", "line 1: expected an object"),
        (b"\n\n", "no texts"),
    ],
)
def test_a_corpus_that_cannot_be_read_names_the_line(data, message):
    with pytest.raises(contamination.CorpusError, match=message):
        contamination.corpus_from_jsonl(data)


def test_messages_and_prompts_are_read_as_texts():
    corpus = contamination.corpus_from_jsonl(
        b'{"id": "a", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "there"}]}\n'
        b'{"prompt": "p"}\n'
    )
    assert [(c.key, c.text) for c in corpus] == [("a", "hi\nthere"), ("2", "p")]


def test_an_exported_item_is_read_as_one_text_per_language():
    record = {
        "uid": "x-1",
        "content": {
            "en": {"context": "A hard day.", "turns": [{"user": "I lost my job.", "options": ["Oh no.", "Great!"]}]},
            "zh": {"prompt": "我失业了。"},
            "fr": "not an object",
        },
    }
    corpus = contamination.corpus_from_jsonl(json.dumps(record, ensure_ascii=False).encode() + b"\n")
    assert [(c.key, c.text) for c in corpus] == [
        ("x-1:en", "A hard day.\nI lost my job.\nOh no.\nGreat!"),
        ("x-1:zh", "我失业了。"),
    ]
    with pytest.raises(contamination.CorpusError, match="line 1: the item has no text"):
        contamination.corpus_from_jsonl(b'{"uid": "y", "content": {"en": {}}}\n')


@pytest.fixture
def release(transactional_db, taxonomy, lead):
    for n, name in enumerate(("Mia", "Lena", "Omar")):
        content = mcq_content()
        content["en"]["context"] = f"{name}'s best friend forgot the birthday party and apologised the next day."
        make_item(uid=f"contam-{n}", user=lead, status="accepted", content=content)
    return make_frozen_release(version="0.3.0", user=lead, override_reason="three items")


CORPUS = (
    "\n".join(
        json.dumps(line, ensure_ascii=False)
        for line in [
            {"id": "copy", "text": "Lena's best friend forgot the birthday party and apologised the next day."},
            {"id": "far", "text": "Quarterly revenue grew in the northern region."},
            {"id": "zh", "text": "米娅最好的朋友忘了她的生日，第二天才道歉。"},
        ]
    )
    + "\n"
).encode()


def test_a_small_check_runs_at_once_and_finds_the_copied_text(release, researcher):
    check = contamination_check_create(release=release, name="sft", data=CORPUS, user=researcher)
    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.DONE and check.corpus == "" and check.corpus_texts == 3
    en, zh = check.result["languages"]["en"], check.result["languages"]["zh"]
    assert en["n"] == 3 and en["corpus_n"] == 2 and zh["corpus_n"] == 1
    top = en["closest"][0]
    assert (top["key"], top["corpus_key"]) == ("contam-1", "copy") and top["cosine"] > 0.5


def test_a_large_check_is_queued_for_a_worker(release, researcher, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        check = contamination_check_create(release=release, name="big", data=CORPUS, user=researcher, inline=False)
    assert ContaminationCheck.objects.get(pk=check.pk).status == ContaminationCheck.Status.QUEUED
    assert run_queued_tasks("evaluation.tasks.contamination_check_run") == 1
    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.DONE and check.result["languages"]["en"]["max"] > 0.5


def test_the_page_api_and_command(release, researcher, login, tmp_path, capsys, django_assert_max_num_queries):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = login(researcher)
    refused = client.post(
        "/evaluation/contamination/",
        {"release": release.pk, "name": "bad", "corpus": SimpleUploadedFile("c.jsonl", b"oops\n")},
    )
    assert refused.status_code == 400 and "line 1: not JSON" in refused.content.decode()
    response = client.post(
        "/evaluation/contamination/",
        {"release": release.pk, "name": "sft", "corpus": SimpleUploadedFile("c.jsonl", CORPUS)},
    )
    check = ContaminationCheck.objects.get(name="sft")
    assert response.status_code == 302 and response["Location"] == f"/evaluation/contamination/{check.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert "contam-1" in page and 'id="contamination-en"' in page and "Closest pairs" in page
    for _ in range(3):
        contamination_check_create(release=release, name="more", data=CORPUS, user=researcher)
    # The list and a check's page read a fixed number of rows whatever the number of checks (session, user and
    # permissions included).
    with django_assert_max_num_queries(8):
        assert "sft" in client.get("/evaluation/contamination/").content.decode()
    with django_assert_max_num_queries(8):
        client.get(response["Location"])
    api = client.post(
        "/api/evaluation/contamination/",
        {"release": release.pk, "name": "api", "corpus": SimpleUploadedFile("c.jsonl", CORPUS)},
        format="multipart",
    )
    assert api.status_code == 201 and api.json()["status"] == "done"
    assert (
        client.get(f"/api/evaluation/contamination/{api.json()['id']}/").json()["result"]["languages"]["en"]["n"] == 3
    )
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(CORPUS)
    call_command("contamination_check", f"facet:{release.version}", str(path))
    out = capsys.readouterr().out
    assert "en: 3 texts against 2: nearest-neighbour cosine mean" in out and "contam-1  ~  copy" in out
    with pytest.raises(CommandError, match="unknown release"):
        call_command("contamination_check", "facet:9.9.9", str(path))


def test_blocked_embedding_neighbours_equal_the_brute_force_maximum():
    rng = np.random.default_rng(3)
    queries, corpus = rng.standard_normal((23, 16)), rng.standard_normal((37, 16))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    where, best = contamination.dense_nearest_neighbours(
        queries.astype(np.float32), corpus.astype(np.float32), row_block=5, column_block=7
    )
    full = queries @ corpus.T
    assert best == pytest.approx(full.max(axis=1), abs=1e-5)
    assert np.array_equal(where, full.argmax(axis=1))
    with pytest.raises(ValueError, match="16 and 8 dimensions"):
        contamination.dense_nearest_neighbours(queries, corpus[:, :8])
    # A negative cosine (possible with embeddings) is counted in the first bin.
    summary = contamination.contamination_summary(
        ["a"], ["a"], [contamination.CorpusText("b", "b")], np.array([0]), np.array([-0.2])
    )
    assert summary["histogram"][0]["count"] == 1 and summary["mean"] == pytest.approx(-0.2)


@pytest.fixture
def embedder(make_endpoint):
    return make_endpoint("sim-style-concise", name="embedder", embedding_model="sim-embed", embedding_dimensions=128)


def test_the_embedding_cosine_is_reported_beside_tf_idf(release, researcher, embedder, simulator):
    plain = contamination_check_create(release=release, name="plain", data=CORPUS, user=researcher)
    assert "embedding" not in plain.result and "embedding" not in plain.result["languages"]["en"]
    requests = simulator.stats()["requests"]
    assert requests == 0  # without an embedding endpoint nothing is sent
    check = contamination_check_create(
        release=release, name="sft", data=CORPUS, user=researcher, embedding_endpoint=embedder
    )
    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.DONE, check.error
    en = check.result["languages"]["en"]
    assert en["n"] == 3 and en["embedding"]["n"] == 3 and en["embedding"]["corpus_n"] == 2
    top = en["embedding"]["closest"][0]
    assert (top["key"], top["corpus_key"]) == ("contam-1", "copy") and 0.5 < top["cosine"] <= 1.0
    assert len(en["embedding"]["histogram"]) == 20 and sum(b["count"] for b in en["embedding"]["histogram"]) == 3
    assert check.result["languages"]["zh"]["embedding"]["corpus_n"] == 1
    facts = check.result["embedding"]
    assert facts["endpoint"] == "embedder" and facts["model"] == "sim-embed" and facts["dimensions"] == 128
    assert facts["requests"] == 1 and facts["cached"] == 0 and facts["input_tokens"] > 0
    # The same texts again: answered from the calls' cache, nothing sent.
    again = contamination_check_create(
        release=release, name="again", data=CORPUS, user=researcher, embedding_endpoint=embedder
    )
    assert again.result["embedding"]["cached"] == 1 and again.result["embedding"]["requests"] == 0
    assert simulator.stats()["requests"] == 1


def test_a_check_whose_worker_dies_is_marked_failed_by_the_sweep(release, researcher):
    check = contamination_check_create(release=release, name="lost", data=CORPUS, user=researcher, inline=False)
    ContaminationCheck.objects.filter(pk=check.pk).update(status=ContaminationCheck.Status.RUNNING)

    assert lose_queued_task(tasks.contamination_check_run.module_path) == 1

    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.FAILED and check.finished_at and check.result in (None, {})
    assert check.error == "The worker running this check stopped before it finished: run the check again."


def test_a_failing_embedding_endpoint_fails_the_check_with_its_reason(release, researcher, make_endpoint):
    wrong = make_endpoint("sim-style-concise", name="wrong", embedding_model="no-such-model")
    check = contamination_check_create(
        release=release, name="x", data=CORPUS, user=researcher, embedding_endpoint=wrong
    )
    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.FAILED
    assert "The embeddings could not be fetched" in check.error and "does not exist" in check.error
    chat_only = make_endpoint("sim-style-concise", name="chat only")
    with pytest.raises(ValidationError, match="has no embedding model"):
        contamination_check_create(
            release=release, name="x", data=CORPUS, user=researcher, embedding_endpoint=chat_only
        )


def test_the_page_api_and_command_take_an_embedding_endpoint(
    release, researcher, login, tmp_path, capsys, embedder, make_endpoint, django_assert_max_num_queries
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = login(researcher)
    form = client.get("/evaluation/contamination/").content.decode()
    assert "embedder · sim-embed" in form and "none: TF-IDF only" in form
    response = client.post(
        "/evaluation/contamination/",
        {
            "release": release.pk,
            "name": "sft",
            "corpus": SimpleUploadedFile("c.jsonl", CORPUS),
            "embedding_endpoint": embedder.pk,
        },
    )
    assert response.status_code == 302
    with django_assert_max_num_queries(8):
        page = client.get(response["Location"]).content.decode()
    assert 'id="contamination-en-embedding"' in page and 'id="contamination-zh-embedding"' in page
    assert "embedding cosine (sim-embed, 128 dimensions)" in page and "TF-IDF cosine" in page
    assert 'id="contamination-embeddings"' in page and "Embeddings by embedder" in page
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(response["Location"]).content.decode()
    assert "嵌入余弦相似度（sim-embed，128 维）" in chinese and "TF-IDF 余弦相似度" in chinese
    client.cookies["django_language"] = "en"

    chat_only = make_endpoint("sim-style-concise", name="chat only")
    api = client.post(
        "/api/evaluation/contamination/",
        {
            "release": release.pk,
            "name": "api",
            "corpus": SimpleUploadedFile("c.jsonl", CORPUS),
            "embedding_endpoint": chat_only.pk,
        },
        format="multipart",
    )
    assert api.status_code == 400 and "has no embedding model" in api.json()["embedding_endpoint"][0]
    api = client.post(
        "/api/evaluation/contamination/",
        {
            "release": release.pk,
            "name": "api",
            "corpus": SimpleUploadedFile("c.jsonl", CORPUS),
            "embedding_endpoint": embedder.pk,
        },
        format="multipart",
    )
    assert api.status_code == 201 and api.json()["embedding_endpoint"] == embedder.pk
    assert api.json()["result"]["languages"]["en"]["embedding"]["n"] == 3

    path = tmp_path / "corpus.jsonl"
    path.write_bytes(CORPUS)
    call_command("contamination_check", f"facet:{release.version}", str(path), "--embeddings", "embedder")
    out = capsys.readouterr().out
    assert "embeddings (sim-embed, 128 dimensions): nearest-neighbour cosine mean" in out
    assert "contam-1  ~  copy" in out.split("embeddings (")[1]
    with pytest.raises(CommandError, match="has no embedding model; endpoints that embed: embedder"):
        call_command("contamination_check", f"facet:{release.version}", str(path), "--embeddings", "chat only")
    with pytest.raises(CommandError, match="unknown endpoint"):
        call_command("contamination_check", f"facet:{release.version}", str(path), "--embeddings", "nope")
