from django.urls import path

from . import views

urlpatterns = [
    path("bundles/", views.BundleList.as_view(), name="bundle-list"),
    path("bundles/<slug:slug>/", views.BundleDetail.as_view(), name="bundle-detail"),
    path(
        "bundles/<slug:slug>/versions/<str:version>/",
        views.BundleVersionDetail.as_view(),
        name="bundle-version-detail",
    ),
]
