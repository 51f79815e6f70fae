from django.urls import path

from calibration import views

app_name = "calibration"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("prompts/", views.prompts, name="prompts"),
    path("judges/new/", views.judge_create, name="judge-create"),
    path("runs/new/", views.run_start, name="run-start"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/report/", views.run_report, name="run-report"),
    path("runs/<int:pk>/select/", views.run_select, name="run-select"),
    path("runs/<int:pk>/report.<str:fmt>", views.run_download, name="run-download"),
    path("runs/<int:pk>/verdicts.<str:fmt>", views.run_verdicts, name="run-verdicts"),
    path("runs/<int:pk>/pairs.<str:fmt>", views.run_pairs, name="run-pairs"),
    path("key-validation/", views.key_validations, name="key-validations"),
    path("key-validation/<int:pk>/", views.key_validation_detail, name="key-validation"),
]
