"""URL configuration: the patient search page at /, admin, the API under /api/v1 (OpenAPI docs at
/api/v1/docs), Prometheus /metrics."""

from django.contrib import admin
from django.urls import include, path

from core.observability import metrics_export
from zolsearch.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("metrics", metrics_export, name="metrics"),
    path("", include("zolsearch.web.urls")),
]
