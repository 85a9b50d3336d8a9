"""What every custom admin page shares: one render, one way to report a refusal."""

from django.contrib import messages
from django.template.response import TemplateResponse

from .errors import PixieError


def report(request, exc: PixieError) -> None:
    """A service's refusal as error messages on the next page, one per problem it names."""
    for problem in getattr(exc, "problems", [exc.message]):
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
