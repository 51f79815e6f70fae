from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("new/", views.run_create, name="run-create"),
    path("contamination/", views.contamination_list, name="contamination-list"),
    path("contamination/<int:pk>/", views.contamination_detail, name="contamination"),
    path("<int:pk>/", views.run_detail, name="run"),
    path("<int:pk>/drill/", views.drill, name="drill"),
    path("<int:pk>/files/<str:name>", views.run_download, name="download"),
    path("<int:pk>/budget/", views.run_budget, name="budget"),
    path("<int:pk>/verdicts.<str:fmt>", views.run_verdicts, name="verdicts"),
    path("<int:pk>/pairs.<str:fmt>", views.run_pairs, name="pairs"),
    path("<int:pk>/answers.<str:fmt>", views.run_answers, name="answers"),
    path("<int:pk>/<str:action>/", views.run_action, name="action"),
]
