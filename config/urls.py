from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.items import api as item_api
from annotation.items.views import home as home_views
from annotation.labelling import api as labelling_api
from annotation.releases import api as release_api
from annotation.screening import api as screening_api
from calibration import api as calibration_api
from core import views as core_views
from core.auth import LoginView, ThrottledAdminAuthenticationForm, ThrottledObtainAuthToken, TokenThrottle
from evaluation import api as evaluation_api
from llm.api import router as llm_router

admin.site.login_form = ThrottledAdminAuthenticationForm


urlpatterns = [
    path("", home_views.home_page, name="home"),
    path("login/", login_not_required(LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", core_views.set_language, name="set-language"),
    path("favicon.ico", core_views.favicon, name="favicon"),
    path("", include("annotation.items.urls")),
    path("screening/", include("annotation.screening.urls")),
    path("labelling/", include("annotation.labelling.urls")),
    path("releases/", include("annotation.releases.urls")),
    path("llm/", include("llm.urls")),
    path("calibration/", include("calibration.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("admin/", admin.site.urls),
    path("api/llm/", include(llm_router.urls)),
    path("api/screening/", include(screening_api.router.urls)),
    path("api/labelling/", include(labelling_api.router.urls)),
    path("api/calibration/", include(calibration_api.router.urls)),
    path("api/evaluation/", include(evaluation_api.router.urls)),
    path("api/releases/", include(release_api.router.urls)),
    path("api/", include(item_api.router.urls)),
    path("api/token/", ThrottledObtainAuthToken.as_view(throttle_classes=[TokenThrottle]), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

handler403 = core_views.forbidden
handler404 = core_views.not_found
handler500 = core_views.server_error
