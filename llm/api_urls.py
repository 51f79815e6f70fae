from rest_framework import routers

from llm import api

router = routers.DefaultRouter()
router.register("endpoints", api.EndpointViewSet, basename="llm-endpoint")
router.register("runs", api.RunViewSet, basename="llm-run")
router.register("calls", api.CallViewSet, basename="llm-call")

urlpatterns = router.urls
