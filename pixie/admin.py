from django.contrib import admin
from django.contrib.auth import get_user_model

from .admin_scoping import SharedChoicesInline, WorkspaceScopedAdmin
from .models import Membership, Workspace


class MembershipInline(SharedChoicesInline):
    model = Membership
    extra = 0
    shared_choices = {"user": lambda: get_user_model().objects.order_by("username")}

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "workspace")


@admin.register(Workspace)
class WorkspaceAdmin(WorkspaceScopedAdmin):
    workspace_field = "id"
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


# Contacts, the inbox and the share review pages.
from . import admin_sharing  # noqa: E402, F401
