"""What / and /favicon.ico answer: the way in for a person, and the tab's icon.

The admin's "View site" leads here. A person of one workspace lands on its home (the
dashboard); anyone else on the admin index, which lists their workspaces.
"""

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponsePermanentRedirect, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_GET

from pixie.core.models import Membership


def home_url(user) -> str:
    """The user's workspace home if they belong to exactly one workspace, else the admin
    index (where each of theirs is listed)."""
    workspaces = list(
        Membership.objects.filter(user=user).values_list("workspace_id", flat=True)[:2]
    )
    if len(workspaces) == 1:
        return reverse("admin:pixie_workspace_dashboard", args=[workspaces[0]])
    return reverse("admin:index")


@require_GET
def home(request):
    if not (request.user.is_authenticated and request.user.is_active):
        return redirect_to_login("/", reverse("admin:login"))
    return HttpResponseRedirect(home_url(request.user))


@require_GET
def favicon(request):
    # Browsers ask for /favicon.ico whatever a page links; the page links the SVG.
    return HttpResponsePermanentRedirect(static("pixie/favicon.svg"))
