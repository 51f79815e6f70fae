"""Items made through the item services, so that every item has its first revision."""

import itertools

from annotation.items import services
from annotation.items.models import Benchmark, Dimension, Item, StatusDecision

_uids = itertools.count(1)


def mcq_content(*, en_answer: int = 1, zh_answer: int = 1) -> dict:
    return {
        "en": {
            "context": "Mia's best friend forgot her birthday and apologised the next day.",
            "question": "What does Mia most likely feel?",
            "options": ["Joy", "Disappointment", "Fear", "Pride"],
            "answer": en_answer,
        },
        "zh": {
            "context": "米娅最好的朋友忘了她的生日，第二天才道歉。",
            "question": "米娅最可能有什么感受？",
            "options": ["喜悦", "失望", "恐惧", "自豪"],
            "answer": zh_answer,
        },
    }


def make_item(
    *,
    uid: str | None = None,
    benchmark: str = "facet",
    dimension: str = "hidden_emotion_recognition",
    kind: str = "mcq",
    content: dict | None = None,
    user: object = None,
    status: str = "draft",
) -> Item:
    bench = Benchmark.objects.get(slug=benchmark)
    dim = Dimension.objects.get(benchmark=bench, code=dimension)
    if content is None:
        content = (
            mcq_content()
            if kind == "mcq"
            else {"en": {"prompt": "I failed my exam again."}, "zh": {"prompt": "我又考砸了。"}}
        )
    item = services.item_create(
        benchmark=bench,
        uid=uid or f"test-item-{next(_uids)}",
        kind=kind,
        state=services.ItemState(dimension=dim, content=content),
        user=user,
        message="created in a test",
    )
    if status != Item.Status.DRAFT:
        # As if imported with that status: only a lead expert or admin (or no user: the command line) may.
        services.item_status_decide(
            item=item, status=status, user=user, reason="set up in a test", source=StatusDecision.Source.IMPORT
        )
    return item
