"""The page an invitation link opens (pixie.core.people.invitations): join with the login you are
signed in with, or make one of your own. Reached without signing in, so links that are
not valid are counted by address and refused past PIXIE_INVITATION_MISSES_PER_ADDRESS.
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import login
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django_ratelimit.core import get_usage

from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.people.invitations import (
    NOT_VALID,
    invitation_accept,
    invitation_accept_new,
    invitation_by_secret,
)
from pixie.sharing.guard import client_address

log = logging.getLogger(__name__)


_NEW_PASSWORD = forms.PasswordInput(attrs={"autocomplete": "new-password"})
PAUSED = (
    "Too many invitation links that are not valid were opened from this address. Try "
    "again in a quarter of an hour."
)


class NewLoginForm(forms.Form):
    username = forms.CharField(
        max_length=150, help_text="Letters, digits and @/./+/-/_; you sign in with it."
    )
    password1 = forms.CharField(label="Password", strip=False, widget=_NEW_PASSWORD)
    password2 = forms.CharField(label="Password again", strip=False, widget=_NEW_PASSWORD)

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        return data


def _missed(request, *, count: bool) -> bool:
    """Whether this address has opened too many links that are not valid (counting this
    one when ``count``)."""
    rate = settings.PIXIE_INVITATION_MISSES_PER_ADDRESS
    address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    if not rate or not address:
        return False
    try:
        usage = get_usage(
            None, group="invitation-address", key=lambda _group, _request: address,
            rate=rate, increment=count,
        )  # fmt: skip
    except Exception:  # the cache is down: refuse rather than open up
        log.exception("invitation misses could not be counted")
        return True
    return bool(usage) and usage["count"] > usage["limit"] - (0 if count else 1)


def _page(request, status=200, **context):
    context = {
        **admin.site.each_context(request),
        "title": "Invitation",
        **context,
    }
    response = TemplateResponse(request, "admin/pixie/invitation.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@never_cache
def invitation_accept_view(request, secret: str):
    if _missed(request, count=False):
        return _page(request, status=429, refusal=PAUSED)
    invitation = invitation_by_secret(secret)
    if invitation is None:
        _missed(request, count=True)
        return _page(request, status=404, refusal=NOT_VALID)
    form = NewLoginForm()
    if request.method == "POST":
        try:
            if request.POST.get("action") == "join" and request.user.is_authenticated:
                invitation_accept(secret=secret, user=request.user)
                user = request.user
            elif request.POST.get("action") == "new" and not request.user.is_authenticated:
                form = NewLoginForm(request.POST)
                if not form.is_valid():
                    raise _Invalid
                membership = invitation_accept_new(
                    secret=secret, username=form.cleaned_data["username"],
                    password=form.cleaned_data["password1"],
                )  # fmt: skip
                user = membership.user
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            else:
                raise _Invalid
        except _Invalid:
            pass
        except ValidationFailed as exc:  # the new login's username or password
            for problem in exc.problems:
                name, _, text = problem.partition(": ")
                field = {"username": "username", "password": "password1"}.get(name)
                form.add_error(field, text if field else problem)
        except PixieError as exc:
            if exc.code == "invitation_not_valid":
                return _page(request, status=404, refusal=NOT_VALID)
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Welcome to {invitation.workspace.name}, {user.username}.")
            return redirect("admin:pixie_workspace_dashboard", invitation.workspace_id)
    return _page(
        request,
        invitation=invitation,
        form=form,
        login_url=f"{reverse('admin:login')}?{urlencode({'next': request.path})}",
    )


class _Invalid(Exception):
    """The form's own fields refused the input, or the action does not fit who asks."""
