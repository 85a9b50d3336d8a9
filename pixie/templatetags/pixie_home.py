"""The admin index's first module: the reader's workspaces, each a link to its home."""

from django import template

from pixie.core.models import Membership

register = template.Library()


@register.inclusion_tag("admin/pixie/includes/your_workspaces.html", takes_context=True)
def your_workspaces(context):
    user = context["request"].user
    memberships = (
        Membership.objects.filter(user=user).select_related("workspace").order_by("workspace__name")
    )
    return {"memberships": list(memberships)}
