"""The screening API under /api/screening/ (routes registered by screening.api)."""

from rest_framework import routers

router = routers.DefaultRouter()
# No ".json" twins of every route, as in the other API routers.
router.include_format_suffixes = False
router.root_view_name = "screening-api-root"

urlpatterns = router.urls
