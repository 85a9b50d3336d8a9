from django.urls import path

from pixie.installer.api import views as api

W = "workspaces/<slug:workspace>"

urlpatterns = [
    path(f"{W}/plans/", api.PlanList.as_view(), name="plan-list"),
    path(f"{W}/plans/<int:pk>/", api.PlanDetail.as_view(), name="plan-detail"),
    path(f"{W}/plans/<int:pk>/approve/", api.PlanApprove.as_view(), name="plan-approve"),
    path(f"{W}/plans/<int:pk>/reject/", api.PlanReject.as_view(), name="plan-reject"),
    path(f"{W}/plans/<int:pk>/take-over/", api.PlanTakeOver.as_view(), name="plan-take-over"),
    path(f"{W}/installations/", api.InstallationList.as_view(), name="installation-list"),
    path(f"{W}/policy/", api.WorkspacePolicy.as_view(), name="workspace-policy"),
    path(
        f"{W}/installations/<slug:bundle>/generations/",
        api.InstallationGenerations.as_view(),
        name="installation-generations",
    ),
]
