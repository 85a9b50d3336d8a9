from django.urls import path

from . import revision_views, views
from . import workspace_views as ws

W = "workspaces/<slug:workspace>"

urlpatterns = [
    path("bundles/", views.BundleList.as_view(), name="bundle-list"),
    path("bundles/<slug:slug>/", views.BundleDetail.as_view(), name="bundle-detail"),
    path("bundles/<slug:slug>/compare/", views.BundleCompare.as_view(), name="bundle-compare"),
    path(
        "bundles/<slug:slug>/versions/<str:version>/",
        views.BundleVersionDetail.as_view(),
        name="bundle-version-detail",
    ),
    path(
        "bundles/<slug:slug>/versions/<str:version>/download",
        views.BundleVersionDownload.as_view(),
        name="bundle-version-download",
    ),
    path(
        "bundles/<slug:slug>/versions/<str:version>/skills/<slug:skill>/files/<path:path>",
        views.BundleSkillFile.as_view(),
        name="bundle-skill-file",
    ),
    path(f"{W}/skills/", ws.SkillList.as_view(), name="skill-list"),
    path(f"{W}/skills/<slug:slug>/", ws.SkillDetail.as_view(), name="skill-detail"),
    path(
        f"{W}/skills/<slug:slug>/files/<path:path>", ws.SkillFile.as_view(), name="skill-file"
    ),
    path(
        f"{W}/skills/<slug:slug>/revisions/",
        revision_views.RevisionList.as_view(),
        name="skill-revision-list",
    ),
    path(
        f"{W}/skills/<slug:slug>/revisions/<int:number>/",
        revision_views.RevisionDetail.as_view(),
        name="skill-revision-detail",
    ),
    path(
        f"{W}/skills/<slug:slug>/revisions/<int:number>/restore/",
        revision_views.RevisionRestore.as_view(),
        name="skill-revision-restore",
    ),
    path(
        f"{W}/skills/<slug:slug>/compare/",
        revision_views.RevisionCompare.as_view(),
        name="skill-compare",
    ),
]
