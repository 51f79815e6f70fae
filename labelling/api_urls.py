"""The labelling API under /api/labelling/ (routes registered by labelling.api)."""

from rest_framework import routers

router = routers.DefaultRouter()
# No ".json" twins of every route, as in the other API routers.
router.include_format_suffixes = False
router.root_view_name = "labelling-api-root"

urlpatterns = router.urls
