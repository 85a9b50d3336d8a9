"""A person's notifications, as pages: which they receive (in the home, by email), and
marking a workspace's read. The list itself is in the workspace home (pixie.dashboard).

Pages of WorkspaceAdmin: the admin's index, list and forms of notifications are not
offered (the rows are written by pixie.core.notifications.service, never by hand).
"""

from django.contrib import messages
from django.shortcuts import redirect

from pixie.core.models import Notification
from pixie.core.notifications.service import (
    notification_choices,
    notification_choices_set,
    notifications_mark_read,
)
from pixie.core.web.whole_numbers import whole_number


class NotificationPages:
    """Pages of WorkspaceAdmin (a WorkspacePages)."""

    def notification_urls(self):
        return [
            self.page_path(
                "notifications/choices/", self.choices_view, "pixie_notification_choices"
            ),
            self.page_path(
                "<int:workspace_id>/notifications/read/",
                self.read_view,
                "pixie_notification_read",
                post_only=True,
            ),
        ]

    def choices_view(self, request):
        """Every kind, with a box for the home and one for email; saved whole."""
        if request.method == "POST":
            notification_choices_set(
                user=request.user,
                choices={
                    kind: {
                        "in_home": request.POST.get(f"{kind}-in_home") == "on",
                        "by_email": request.POST.get(f"{kind}-by_email") == "on",
                    }
                    for kind in Notification.Kind.values
                },
            )
            messages.success(request, "Your notification choices are saved.")
            return redirect("admin:pixie_notification_choices")
        chosen = notification_choices(user=request.user)
        rows = [
            {"kind": kind, "label": label, **chosen[kind]}
            for kind, label in Notification.Kind.choices
        ]
        return self.render_page(
            request,
            "admin/pixie/notification/choices.html",
            "Your notifications",
            rows=rows,
            email=request.user.email,
            back=_workspace_id(request.GET.get("workspace", "")),
        )

    def read_view(self, request, workspace_id):
        """Mark the person's notifications in the workspace read; back to its home."""
        workspace = self.page_object(request, workspace_id)  # 404 for anyone not a member
        marked = notifications_mark_read(user=request.user, workspace=workspace)
        if marked:
            messages.success(request, f"{marked} notification{'s' if marked != 1 else ''} read.")
        return redirect("admin:pixie_workspace_dashboard", workspace.pk)


def _workspace_id(value: str) -> int | None:
    """The home the page was opened from, for a link back (an id, nothing else)."""
    return whole_number(value, digits=11)
