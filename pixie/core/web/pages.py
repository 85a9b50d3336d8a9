"""The one way to write a custom admin page.

A custom page is a method of its ModelAdmin (mix in ``AdminPages``, or ``WorkspacePages``
for a workspace's objects), mounted with ``page_path`` in ``get_urls``. It renders with
``render_page`` and shows a service's refusal with ``report``.

The rule for a workspace's pages: members and operators read, only a workspace's owners
act. ``page_object`` fetches through the admin's ``get_queryset``, so whoever may open an
object's change page may open its other pages, and anyone else meets a 404, as for the
rest of a workspace's data. A page that acts shows a reader ``owner_refusal`` in place of
its form; a post from a reader is refused by the service, and ``report`` says why.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path
from django.views.decorators.http import require_POST

from pixie.core.errors import PixieError
from pixie.core.models import Membership
from pixie.core.people.permissions import may_act, role_in


def report(request, exc: PixieError, form=None) -> None:
    """A service's refusal, one line a problem: on the form when there is one, else as
    error messages on the next page."""
    for problem in getattr(exc, "problems", [exc.message]):
        if form is not None:
            form.add_error(None, problem)
        else:
            messages.error(request, problem)


def page(model_admin, request, template: str, title: str, **context) -> TemplateResponse:
    """A custom page of ``model_admin``: the admin's own context, then the page's."""
    return TemplateResponse(
        request,
        template,
        {
            **model_admin.admin_site.each_context(request),
            "opts": model_admin.model._meta,
            "title": title,
            # An operator of no workspace may open these pages but not the list behind them.
            "has_view_permission": model_admin.has_view_permission(request),
            **context,
        },
    )


class AdminPages:
    """Custom pages of a ModelAdmin: mounted, rendered and refused one way."""

    def page_path(self, route: str, view, name: str, *, post_only: bool = False):
        view = require_POST(view) if post_only else view
        return path(route, self.admin_site.admin_view(view), name=name)

    def render_page(self, request, template: str, title: str, **context) -> TemplateResponse:
        return page(self, request, template, title, **context)

    def report(self, request, exc: PixieError, form=None) -> None:
        report(request, exc, form)


class WorkspacePages(AdminPages):
    """Custom pages of a workspace's objects; mixed into a WorkspaceScopedAdmin, whose
    ``get_queryset`` and ``workspace_of`` say what the user may see and whose it is."""

    def page_object(self, request, object_id, queryset=None):
        """The object if the user may read it, else 404 (never a hint that it exists)."""
        queryset = self.get_queryset(request) if queryset is None else queryset
        if self.workspace_field != "id":  # the role check reads it
            queryset = queryset.select_related(self.workspace_field)
        try:
            found = queryset.filter(pk=object_id).first()
        except (ValueError, ValidationError):  # not an id at all
            found = None
        if found is None:
            raise Http404(f"No such {self.model._meta.verbose_name}.")
        return found

    def workspace_role(self, request, obj) -> str | None:
        """The user's role in the object's workspace (None for a superuser of another);
        one query a workspace, kept for the request."""
        workspace = self.workspace_of(obj)
        roles = request.__dict__.setdefault("_pixie_roles", {})
        if workspace.pk not in roles:
            roles[workspace.pk] = role_in(user=request.user, workspace=workspace)
        return roles[workspace.pk]

    def is_owner(self, request, obj) -> bool:
        return self.workspace_role(request, obj) == Membership.Role.OWNER

    def owner_refusal(self, request, obj) -> str:
        """Why this user may not act on the object ("" for its workspace's owners): the
        answer of pixie.core.people.permissions.may_act, as the API gives it."""
        if may_act(role=self.workspace_role(request, obj), method="POST"):
            return ""
        return f"Only an owner of {self.workspace_of(obj).name} can do this."
