from django.urls import path

from . import views

W = "workspaces/<slug:workspace>/delivery"

urlpatterns = [
    path(f"{W}/tokens/", views.DeliveryTokens.as_view(), name="delivery-token-list"),
    path(
        f"{W}/tokens/<int:pk>/", views.DeliveryTokenDetail.as_view(), name="delivery-token-detail"
    ),
    path(
        f"{W}/tokens/<int:pk>/rotate/",
        views.DeliveryTokenRotate.as_view(),
        name="delivery-token-rotate",
    ),
    path(f"{W}/clients/", views.DeliveryClients.as_view(), name="delivery-client-list"),
]
