"""Users with roles."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

PASSWORD = "test-pass-2026"


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
