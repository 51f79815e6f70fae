from django.urls import path

from annotation.releases import views

app_name = "releases"

urlpatterns = [
    path("", views.release_list, name="release-list"),
    path("new/", views.release_create, name="release-create"),
    path("add-items/", views.release_add_items, name="release-add-items"),
    path("<slug:slug>/compare/", views.release_compare, name="release-compare"),
    path("<slug:slug>/<str:version>/", views.release_detail, name="release-detail"),
    path("<slug:slug>/<str:version>/edit/", views.release_edit, name="release-edit"),
    path("<slug:slug>/<str:version>/freeze/", views.release_freeze, name="release-freeze"),
    path("<slug:slug>/<str:version>/download.zip", views.release_download, name="release-download"),
]
