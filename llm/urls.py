from django.urls import path

app_name = "llm"

urlpatterns: list[path] = []
