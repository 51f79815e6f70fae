from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("items/", views.item_list, name="item-list"),
    path("items/new/", views.item_create, name="item-create"),
    path("items/export.jsonl", views.item_export, name="item-export"),
    path("items/import/", views.item_import, name="item-import"),
    path("items/<str:uid>/", views.item_detail, name="item-detail"),
    path("items/<str:uid>/edit/", views.item_edit, name="item-edit"),
    path("items/<str:uid>/history/", views.item_history, name="item-history"),
    path("taxonomy/", views.taxonomy, name="taxonomy"),
    path("schema/item.json", views.item_schema, name="item-schema"),
]
