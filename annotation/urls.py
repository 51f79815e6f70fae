from django.urls import path

from annotation import coverage_views, drafting_views, labelling_views, release_views, screening_views, views

app_name = "annotation"

urlpatterns = [
    path("items/", views.item_list, name="item-list"),
    path("items/new/", views.item_create, name="item-create"),
    path("items/export.jsonl", views.item_export, name="item-export"),
    path("items/import/", views.item_import, name="item-import"),
    path("items/near-duplicates/", coverage_views.near_duplicate_clusters, name="near-duplicates"),
    path("coverage/", coverage_views.coverage, name="coverage"),
    path("items/<str:uid>/", views.item_detail, name="item-detail"),
    path("items/<str:uid>/edit/", views.item_edit, name="item-edit"),
    path("items/<str:uid>/history/", views.item_history, name="item-history"),
    path("items/<str:uid>/autosave/", views.item_autosave, name="item-autosave"),
    path("taxonomy/", views.taxonomy, name="taxonomy"),
    path("schema/item.json", views.item_schema, name="item-schema"),
    path("screening/", screening_views.round_list, name="round-list"),
    path("screening/new/", screening_views.round_open, name="round-open"),
    path("screening/<int:pk>/", screening_views.round_detail, name="round-detail"),
    path("screening/<int:pk>/close/", screening_views.round_close, name="round-close"),
    path("screening/<int:pk>/review/", screening_views.review_next, name="review-next"),
    path("screening/<int:pk>/review/<int:assignment>/", screening_views.review, name="review"),
    path(
        "screening/<int:pk>/review/<int:assignment>/autosave/", screening_views.review_autosave, name="review-autosave"
    ),
    path("screening/<int:pk>/adjudicate/<int:round_item>/", screening_views.adjudicate, name="adjudicate"),
    path("drafting/", drafting_views.overview, name="drafting"),
    path("drafting/jobs/<int:pk>/", drafting_views.job_detail, name="drafting-job"),
    path("labelling/", labelling_views.set_list, name="labelling-list"),
    path("labelling/new/", labelling_views.set_create, name="labelling-create"),
    path("labelling/responses/import/", labelling_views.responses_import, name="responses-import"),
    path("labelling/<int:pk>/next/", labelling_views.label_next, name="label-next"),
    path("labelling/<int:pk>/<int:assignment>/", labelling_views.label, name="label"),
    path("releases/", release_views.release_list, name="release-list"),
    path("releases/new/", release_views.release_create, name="release-create"),
    path("releases/<slug:slug>/compare/", release_views.release_compare, name="release-compare"),
    path("releases/<slug:slug>/<str:version>/", release_views.release_detail, name="release-detail"),
    path("releases/<slug:slug>/<str:version>/edit/", release_views.release_edit, name="release-edit"),
    path("releases/<slug:slug>/<str:version>/freeze/", release_views.release_freeze, name="release-freeze"),
    path("releases/<slug:slug>/<str:version>/download.zip", release_views.release_download, name="release-download"),
]
