from django.urls import path

from . import views

urlpatterns = [
    path("sources/", views.SourceList.as_view(), name="source-list"),
    path("sources/<int:pk>/", views.SourceDetail.as_view(), name="source-detail"),
    path("sources/<int:pk>/check/", views.SourceCheck.as_view(), name="source-check"),
    path("sources/<int:pk>/pause/", views.SourcePause.as_view(), name="source-pause"),
    path("sources/<int:pk>/resume/", views.SourceResume.as_view(), name="source-resume"),
    path(
        "sources/<int:pk>/accept-rewrite/",
        views.SourceAcceptRewrite.as_view(),
        name="source-accept-rewrite",
    ),
]
