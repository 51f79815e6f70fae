from django.urls import path

from annotation.items.views import coverage, drafting, imports, items, replysets

app_name = "items"

urlpatterns = [
    path("items/", items.item_list, name="item-list"),
    path("items/new/", items.item_create, name="item-create"),
    path("items/export.jsonl", items.item_export, name="item-export"),
    path("items/import/", items.item_import, name="item-import"),
    path("items/imports/<int:pk>/", imports.import_job, name="item-import-job"),
    path("items/near-duplicates/", coverage.near_duplicate_clusters, name="near-duplicates"),
    path("coverage/", coverage.coverage, name="coverage"),
    path("items/<str:uid>/", items.item_detail, name="item-detail"),
    path("items/<str:uid>/edit/", items.item_edit, name="item-edit"),
    path("items/<str:uid>/history/", items.item_history, name="item-history"),
    path("items/<str:uid>/status/", items.item_status_decide, name="item-status-decide"),
    path("items/<str:uid>/autosave/", items.item_autosave, name="item-autosave"),
    path("taxonomy/", items.taxonomy, name="taxonomy"),
    path("schema/item.json", items.item_schema, name="item-schema"),
    path("drafting/", drafting.overview, name="drafting"),
    path("drafting/jobs/<int:pk>/", drafting.job_detail, name="drafting-job"),
    path("reply-sets/", replysets.reply_set_list, name="replyset-list"),
    path("reply-sets/expand/", replysets.reply_sets_expand, name="replysets-expand"),
    path("reply-sets/disagreements/", replysets.key_disagreements, name="key-disagreements"),
    path("reply-sets/disagreements/<int:pk>/review/", replysets.key_review, name="key-review"),
    path("reply-sets/replies/<int:pk>/audit/", replysets.reply_audit, name="reply-audit"),
    path("reply-sets/<str:uid>/", replysets.reply_set_detail, name="replyset-detail"),
    path("reply-sets/<str:uid>/expand/", replysets.reply_set_expand, name="replyset-expand"),
]
