from django.urls import path

from annotation.screening import views

app_name = "screening"

urlpatterns = [
    path("", views.round_list, name="round-list"),
    path("new/", views.round_open, name="round-open"),
    path("<int:pk>/", views.round_detail, name="round-detail"),
    path("<int:pk>/close/", views.round_close, name="round-close"),
    path("<int:pk>/review/", views.review_next, name="review-next"),
    path("<int:pk>/review/<int:assignment>/", views.review, name="review"),
    path("<int:pk>/review/<int:assignment>/autosave/", views.review_autosave, name="review-autosave"),
    path("<int:pk>/review/<int:assignment>/skip/", views.review_skip, name="review-skip"),
    path("<int:pk>/adjudicate/<int:round_item>/", views.adjudicate, name="adjudicate"),
]
