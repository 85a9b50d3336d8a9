from django.urls import path

from egress.api import views as api

W = "workspaces/<slug:workspace>"

urlpatterns = [
    path(f"{W}/egress-rules/", api.EgressRuleList.as_view(), name="egress-rule-list"),
    path(f"{W}/credentials/", api.CredentialList.as_view(), name="credential-list"),
    path(
        f"{W}/credentials/<str:name>/confirm/",
        api.CredentialConfirm.as_view(),
        name="credential-confirm",
    ),
]
