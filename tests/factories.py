"""Factories for tests: users with roles, and items made through the services (so revisions exist)."""

import itertools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from items import services
from items.models import Benchmark, Dimension

PASSWORD = "test-pass-2026"
_uids = itertools.count(1)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def role(self, create: bool, extracted: str | None, **kwargs: object) -> None:
        if extracted:
            self.groups.add(Group.objects.get(name=extracted))
            if extracted == "admin":
                self.is_staff = True
        self.save()


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
) -> object:
    bench = Benchmark.objects.get(slug=benchmark)
    dim = Dimension.objects.get(benchmark=bench, code=dimension)
    if content is None:
        content = (
            mcq_content()
            if kind == "mcq"
            else {"en": {"prompt": "I failed my exam again."}, "zh": {"prompt": "我又考砸了。"}}
        )
    return services.item_create(
        benchmark=bench,
        uid=uid or f"test-item-{next(_uids)}",
        kind=kind,
        state=services.ItemState(dimension=dim, content=content),
        user=user,
        message="created in a test",
        status=status,
    )
