"""The calibration API under /api/calibration/ (routes registered by calibration.api)."""

from rest_framework import routers

router = routers.DefaultRouter()
# No ".json" twins of every route, as in the other API routers.
router.include_format_suffixes = False
router.root_view_name = "calibration-api-root"

urlpatterns = router.urls
