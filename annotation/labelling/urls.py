from django.urls import path

from annotation.labelling import views

app_name = "labelling"

urlpatterns = [
    path("", views.set_list, name="set-list"),
    path("new/", views.set_create, name="set-create"),
    path("responses/import/", views.responses_import, name="responses-import"),
    path("<int:pk>/next/", views.label_next, name="label-next"),
    path("<int:pk>/close/", views.set_close, name="set-close"),
    path("<int:pk>/data/", views.set_data, name="set-data"),
    path("<int:pk>/labels.<str:fmt>", views.set_labels, name="set-labels"),
    path("<int:pk>/pairs.<str:fmt>", views.set_pairs, name="set-pairs"),
    path("<int:pk>/label-studio/<str:name>", views.set_label_studio, name="set-label-studio"),
    path("<int:pk>/<int:assignment>/", views.label, name="label"),
    path("<int:pk>/<int:assignment>/skip/", views.label_skip, name="label-skip"),
]
