from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from pixie import history_api
from pixie.health import healthz, livez
from pixie.home import favicon, home

handler404 = "pixie.api.not_found"
# "View site": / leads a person to their workspace's home (pixie.home).
admin.site.site_url = "/"

urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("admin/", admin.site.urls),
    path("api/", include("catalog.api.urls")),
    path("api/", include("egress.urls")),
    path("api/", include("agents.urls")),
    path("api/", include("pixie.installer.urls")),
    path("api/", include("pixie.sharing.urls")),
    path(
        "api/workspaces/<slug:workspace>/history/",
        history_api.WorkspaceHistory.as_view(),
        name="workspace-history",
    ),
    path(
        "api/workspaces/<slug:workspace>/history/<int:pk>/objects/",
        history_api.HistoryEntryObjects.as_view(),
        name="workspace-history-objects",
    ),
    path("api/audit/", history_api.AuditLog.as_view(), name="audit-log"),
    path("api/audit/export.csv", history_api.AuditExportCSV.as_view(), name="audit-csv"),
    path("api/audit/export.jsonl", history_api.AuditExportJSONL.as_view(), name="audit-jsonl"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
]
