from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import routers

from annotation import api, release_api, views
from annotation.auth import LoginView, ThrottledAdminAuthenticationForm, ThrottledObtainAuthToken

router = routers.DefaultRouter()
router.register("items", api.ItemViewSet, basename="item")
router.register("revisions", api.RevisionViewSet, basename="revision")
router.register("benchmarks", api.BenchmarkViewSet, basename="benchmark")
router.register("dimensions", api.DimensionViewSet, basename="dimension")
router.register("emotions", api.EmotionViewSet, basename="emotion")
router.register("scenario-domains", api.ScenarioDomainViewSet, basename="scenario-domain")
router.register("scenarios", api.ScenarioViewSet, basename="scenario")
router.register("crisis-levels", api.CrisisLevelViewSet, basename="crisis-level")
router.register("releases", release_api.ReleaseViewSet, basename="release")

admin.site.login_form = ThrottledAdminAuthenticationForm


urlpatterns = [
    path("", views.home, name="home"),
    path("login/", login_not_required(LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", views.set_language, name="set-language"),
    path("", include("annotation.urls")),
    path("llm/", include("llm.urls")),
    path("calibration/", include("calibration.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("admin/", admin.site.urls),
    path("api/llm/", include("llm.api_urls")),
    path("api/", include(router.urls)),
    path("api/token/", ThrottledObtainAuthToken.as_view(throttle_classes=[api.TokenThrottle]), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
