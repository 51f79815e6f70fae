from django.urls import path

from llm import views

app_name = "llm"

urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("runs/new/", views.run_create, name="run-create"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/progress/", views.run_progress, name="run-progress"),
    path("runs/<int:pk>/export.jsonl", views.run_export, name="run-export"),
    path("runs/<int:pk>/budget/", views.run_budget, name="run-budget"),
    path("runs/<int:pk>/<str:action>/", views.run_action, name="run-action"),
    path("calls/<int:pk>/", views.call_detail, name="call-detail"),
    path("endpoints/", views.endpoint_list, name="endpoint-list"),
    path("endpoints/new/", views.endpoint_edit, name="endpoint-create"),
    path("endpoints/<int:pk>/edit/", views.endpoint_edit, name="endpoint-edit"),
    path("endpoints/<int:pk>/test/", views.endpoint_test, name="endpoint-test"),
]
