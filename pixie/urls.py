from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, reverse_lazy
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from pixie.core.audit import api as history_api
from pixie.core.people import api as people_api
from pixie.health import healthz, livez
from pixie.home import favicon, home
from pixie.invitation_page import invitation_accept_view

handler404 = "pixie.core.web.api.not_found"
# "View site": / leads a person to their workspace's home (pixie.home).
admin.site.site_url = "/"

urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("admin/", admin.site.urls),
    # What agent clients read: the skills CLI's discovery index, one base URL per token.
    path("", include("pixie.delivery.urls")),
    # The one-time link an owner gives a person whose login they made (pixie.core.people.members).
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(success_url=reverse_lazy("password-set-done")),
        name="password-set",
    ),
    path(
        "accounts/set-password/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password-set-done",
    ),
    # An owner's invitation to join a workspace, opened by the person
    # (pixie.core.people.invitations).
    path(
        "accounts/invitation/<str:secret>/", invitation_accept_view, name="invitation-accept"
    ),
    path("api/", include("catalog.api.urls")),
    path("api/", include("egress.api.urls")),
    path("api/", include("agents.api.urls")),
    path("api/", include("pixie.installer.api.urls")),
    path("api/", include("pixie.sharing.api.urls")),
    path("api/", include("pixie.delivery.api.urls")),
    path("api/", include("pixie.sources.api.urls")),
    path("api/", include("pixie.core.notifications.api")),
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
    path(
        "api/workspaces/<slug:workspace>/members/",
        people_api.MemberList.as_view(),
        name="member-list",
    ),
    path(
        "api/workspaces/<slug:workspace>/members/<str:username>/",
        people_api.MemberDetail.as_view(),
        name="member-detail",
    ),
    path(
        "api/workspaces/<slug:workspace>/invitations/",
        people_api.WorkspaceInvitations.as_view(),
        name="invitation-list",
    ),
    path(
        "api/workspaces/<slug:workspace>/invitations/<int:pk>/",
        people_api.WorkspaceInvitation.as_view(),
        name="invitation-detail",
    ),
    path(
        "api/workspaces/<slug:workspace>/tokens/",
        people_api.WorkspaceTokens.as_view(),
        name="workspace-token-list",
    ),
    path(
        "api/workspaces/<slug:workspace>/tokens/<int:pk>/",
        people_api.WorkspaceToken.as_view(),
        name="workspace-token-detail",
    ),
    path("api/tokens/", people_api.MyTokens.as_view(), name="token-list"),
    path("api/tokens/<int:pk>/", people_api.MyToken.as_view(), name="token-detail"),
    path("api/audit/", history_api.AuditLog.as_view(), name="audit-log"),
    path("api/audit/export.csv", history_api.AuditExportCSV.as_view(), name="audit-csv"),
    path("api/audit/export.jsonl", history_api.AuditExportJSONL.as_view(), name="audit-jsonl"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
]
