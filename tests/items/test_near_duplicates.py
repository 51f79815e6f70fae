"""The stored near-duplicate index: written when revisions are saved, read by the item page and the near-duplicates
page, built for existing items by ``manage.py similarity_index``."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items import lsh, neighbours, services, signatures
from annotation.items.content import prose_text
from annotation.items.models import Benchmark, Item, ItemSignature, ItemSignatureBand, SimilarityIndex
from annotation.items.similarity import clusters, near_duplicates, nearest
from annotation.items.views import coverage
from tests.factories import make_item
from tests.factories.llm import run_queued_tasks

pytestmark = pytest.mark.django_db

SCENARIOS = [
    (
        "Noah's team lost the final match after he missed an easy penalty in the last minute.",
        "诺亚在最后一分钟罚丢了一个简单的点球，他的球队输掉了决赛。",
    ),
    (
        "Aisha moved to a new city and her old friends stopped answering her messages.",
        "艾莎搬到了新城市，她的老朋友们不再回复她的消息。",
    ),
    (
        "Liam's grandmother gave him her old watch on the day before she moved abroad.",
        "利亚姆的奶奶在出国前一天把她的旧手表送给了他。",
    ),
    (
        "Chloe found out that her manager had taken credit for her project in front of everyone.",
        "克洛伊发现她的经理当着所有人的面把她的项目功劳据为己有。",
    ),
]


def content(en: str, zh: str | None = None) -> dict:
    result = {
        "en": {"context": en, "question": "What does the person feel?", "options": ["Joy", "Sadness"], "answer": 1}
    }
    if zh is not None:
        result["zh"] = {"context": zh, "question": "这个人有什么感受？", "options": ["喜悦", "悲伤"], "answer": 1}
    return result


def edited(text: str) -> str:
    """Return ``text`` lightly edited: a near-duplicate (well above 0.85)."""
    return text.replace(" the ", " that ", 1).replace("。", "！", 1) + " Indeed."


def make_pair(uid: str, n: int = 0, **kwargs: object) -> tuple[Item, Item]:
    en, zh = SCENARIOS[n % len(SCENARIOS)]
    en, zh = f"{en} ({uid})", f"{zh}（{uid}）"
    return (
        make_item(uid=uid, content=content(en, zh), **kwargs),
        make_item(uid=f"{uid}-copy", content=content(edited(en), zh + "真的。"), **kwargs),
    )


def revise(item: Item, new_content: dict) -> None:
    state = services.ItemState(dimension=item.dimension, content=new_content)
    services.item_revise(item=item, state=state, user=None, message="edit")


# --- writing ------------------------------------------------------------------------------------------------------


def test_saving_a_revision_signs_each_language_of_it(taxonomy):
    item = make_item(uid="sig-1", content=content(*SCENARIOS[0]))
    rows = {s.language: s for s in ItemSignature.objects.filter(item=item)}
    assert set(rows) == {"en", "zh"} and {s.revision_id for s in rows.values()} == {item.current_revision_id}
    assert ItemSignatureBand.objects.filter(signature__item=item).count() == 2 * lsh.BANDS

    revise(item, content(SCENARIOS[1][0]))
    item.refresh_from_db()
    rows = {s.language: s for s in ItemSignature.objects.filter(item=item)}
    assert set(rows) == {"en"} and rows["en"].revision_id == item.current_revision_id
    assert ItemSignatureBand.objects.filter(signature__item=item).count() == lsh.BANDS


def test_the_first_items_choose_the_stop_shingles_and_are_signed_again_with_them(taxonomy, monkeypatch):
    monkeypatch.setattr(lsh, "STOP_MIN_DOCUMENTS", 4)
    items = [make_item(uid=f"stop-{i}", content=content(SCENARIOS[i][0])) for i in range(4)]
    index = SimilarityIndex.objects.get(benchmark__slug="facet", language="en")
    stop = signatures.stop_shingles(index)
    assert index.stop_documents == 4 and len(stop)  # the shared question is in every text
    for item in items:
        text = prose_text(item.current_revision.content["en"])
        stored = ItemSignature.objects.get(item=item, language="en").minhash
        assert bytes(stored) == lsh.signatures([text], stop)[0].tobytes()


# --- the item page ------------------------------------------------------------------------------------------------


def test_the_item_page_lists_near_duplicates_found_through_the_index(taxonomy, researcher, login):
    original, copy = make_pair("near")
    make_pair("other", 1)
    html = login(researcher).get("/items/near/").content.decode()
    assert "Possible near-duplicate" in html and "/items/near-copy/" in html and "/items/other/" not in html

    found = neighbours.item_neighbours(item=Item.objects.get(uid="near"), threshold=0.85).nearest
    assert [(n.language, n.uid, n.warn) for n in found] == [("en", "near-copy", True), ("zh", "near-copy", True)]
    # The scores are the exact TF-IDF cosines the old N x N computation gave.
    for n in found:
        texts = {i.uid: prose_text(i.current_revision.content[n.language]) for i in Item.objects.all()}
        assert n.score == dict(nearest(texts, "near", k=1))["near-copy"]


def test_rejected_items_are_nobody_s_neighbours(taxonomy, lead, researcher, login):
    original, copy = make_pair("rej")
    services.item_status_decide(item=copy, status="rejected", user=lead, reason="duplicate", source="lead_decision")
    client = login(researcher)
    assert "/items/rej-copy/" not in client.get("/items/rej/").content.decode()
    assert 'id="similar"' not in client.get("/items/rej-copy/").content.decode()


def test_an_item_not_indexed_yet_says_so_and_is_found_once_the_index_is_built(taxonomy, researcher, login):
    original, copy = make_pair("late")
    ItemSignature.objects.filter(item=copy).delete()
    client = login(researcher)
    assert "/items/late-copy/" not in client.get("/items/late/").content.decode()
    html = client.get("/items/late-copy/").content.decode()
    assert "The similarity index is still being built for this item" in html and "/items/late/" in html

    call_command("similarity_index", "--benchmark", "facet")

    assert "/items/late-copy/" in client.get("/items/late/").content.decode()
    assert "still being built" not in client.get("/items/late-copy/").content.decode()


def test_weights_are_counted_again_by_the_save_that_makes_a_tenth_of_the_signatures_newer(taxonomy):
    make_pair("w0")
    index = SimilarityIndex.objects.get(benchmark__slug="facet", language="en")
    assert (index.idf_documents, index.idf_signatures) == (2, 2)
    make_pair("w1", 1)
    index.refresh_from_db()
    assert (index.idf_documents, index.idf_signatures) == (4, 4) and not signatures.stale([index])
    # The item page only reads them (two queries), whatever their age: it never counts them.
    SimilarityIndex.objects.filter(pk=index.pk).update(idf_signatures=1, idf_watermark=0)
    item = Item.objects.select_related("current_revision").get(uid="w1")
    neighbours.item_neighbours(item=item, threshold=0.5)  # loads the weights once (kept in memory until recounted)
    with CaptureQueriesContext(connection) as captured:
        found = neighbours.item_neighbours(item=item, threshold=0.5)
    assert len(captured) == 2 and "w1-copy" in {n.uid for n in found.nearest}
    index.refresh_from_db()
    assert index.idf_signatures == 1


# --- the near-duplicates page -------------------------------------------------------------------------------------

COMPUTE = "annotation.items.tasks.near_duplicates_compute"


def computed(client: object, url: str) -> str:
    """Return the page at ``url`` once the worker has stored the clusters its first view queued."""
    client.get(url)
    run_queued_tasks(COMPUTE)
    html = client.get(url).content.decode()
    assert 'id="compute-state"' not in html
    return html



def test_the_near_duplicates_page_lists_clusters_a_page_at_a_time(taxonomy, researcher, login, monkeypatch):
    monkeypatch.setattr(coverage, "CLUSTERS_PER_PAGE", 2)
    for n in range(3):
        make_pair(f"cl{n}", n)
    client = login(researcher)
    html = computed(client, "/items/near-duplicates/?benchmark=facet&lang=zh")
    assert "3 pairs above the threshold" in html and "Page 1 of 2" in html
    last = computed(client, "/items/near-duplicates/?benchmark=facet&lang=zh&threshold=0.85&page=2")
    assert "/items/cl2/" in last and "/items/cl2-copy/" in last and "/items/cl0/" not in last


def test_the_near_duplicates_page_offers_no_threshold_below_what_the_index_finds(taxonomy, researcher, login):
    make_pair("low")
    response = login(researcher).get("/items/near-duplicates/?threshold=0.1")
    assert response.context["threshold"] == lsh.LOWEST_THRESHOLD
    assert login(researcher).get("/items/near-duplicates/?threshold=nan").context["threshold"] == 0.85


def test_the_near_duplicates_page_counts_the_items_not_indexed_yet(taxonomy, researcher, login):
    make_pair("gap")
    ItemSignature.objects.filter(item__uid="gap-copy").delete()
    html = computed(login(researcher), "/items/near-duplicates/?benchmark=facet")
    assert "1 item is not indexed yet" in html and "/items/gap/" not in html


def test_the_report_matches_the_pure_computation_on_the_same_texts(taxonomy):
    for n in range(4):
        make_pair(f"rp{n}", n)
    make_item(uid="rp-lone", content=content("Something else altogether, about a garden.", "完全不同的事情。"))
    bench = Benchmark.objects.get(slug="facet")
    for lang in ("en", "zh"):
        report = neighbours.near_duplicate_report(benchmark=bench, language=lang, threshold=0.8)
        texts = {i.uid: prose_text(i.current_revision.content[lang]) for i in Item.objects.all()}
        pure = near_duplicates(texts, threshold=0.8)
        assert report.pairs == len(pure) == 4
        assert [[uid for uid, _score in group] for group in report.clusters] == clusters(pure)


# --- the command --------------------------------------------------------------------------------------------------


def test_the_command_rebuilds_the_index_from_scratch(taxonomy):
    make_pair("cmd")
    before = set(SimilarityIndex.objects.values_list("pk", flat=True))
    call_command("similarity_index", "--rebuild")
    assert not before & set(SimilarityIndex.objects.values_list("pk", flat=True))
    assert ItemSignature.objects.count() == 4
    assert ItemSignatureBand.objects.count() == 4 * lsh.BANDS
    with pytest.raises(CommandError, match="no benchmark nope"):
        call_command("similarity_index", "--benchmark", "nope")


def test_band_rows_follow_their_signature_without_database_constraints(taxonomy):
    original, _copy = make_pair("bands")
    signatures_of = ItemSignature.objects.filter(item=original)
    before = set(ItemSignatureBand.objects.filter(signature__in=signatures_of).values_list("signature_id", "band"))
    assert before
    revise(original, content("A different story about a lost dog and a neighbour.", "邻居帮忙找狗的故事。"))
    after = set(ItemSignatureBand.objects.filter(signature__in=signatures_of).values_list("signature_id", "band"))
    assert len(after) == len(before)  # re-signed: the old band rows were replaced, not added to
    signatures_of.delete()
    assert not ItemSignatureBand.objects.filter(signature_id__in=[s for s, _band in after]).exists()
