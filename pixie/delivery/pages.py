"""Delivery's page of a workspace (mixed into WorkspaceAdmin, like its other pages): the
tokens that carry its approved skills to agent clients, what each serves and leaves out,
and which clients run what. Members and auditors read it; its owners make, rotate and
revoke tokens. ``?agent=<id>`` narrows it to one agent (the agent's page links there)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_variables

from agents.models import Agent
from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.people.members import site_url_for
from pixie.core.web.whole_numbers import whole_number

from .marketplace import TOKEN_VARIABLE, managed_settings, workspace_marketplace
from .models import DeliveryToken
from .selectors import ONE_CLIENT, delivery_overview
from .tokens import delivery_token_create, delivery_token_revoke, delivery_token_rotate

WHOLE_WORKSPACE = ""
AGENTS_OFFERED = 200


def delivery_url(site_url: str, secret: str) -> str:
    return f"{site_url}/deliver/{secret}/"


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=80,
        help_text="Who or what uses it: a team, a machine, a CI job (e.g. Support laptops).",
    )
    delivers = forms.ChoiceField(
        label="Delivers",
        required=False,
        help_text="One agent's skills as that agent runs them (pins and overrides kept), or "
        "every advertised skill of the workspace at its latest revision.",
    )

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        agents = Agent.objects.filter(workspace=workspace).order_by("name")[:AGENTS_OFFERED]
        self.fields["delivers"].choices = [
            (WHOLE_WORKSPACE, f"Every advertised skill of {workspace.name}"),
            *((str(agent.pk), f"Agent {agent.name}") for agent in agents),
        ]


class DeliveryPages:
    """Pages of WorkspaceAdmin (a WorkspacePages)."""

    def delivery_urls(self):
        return [
            self.page_path(
                "<int:workspace_id>/delivery/", self.delivery_view, "pixie_workspace_delivery"
            )
        ]

    def delivery_view(self, request, workspace_id):
        workspace = self.page_object(request, workspace_id)
        agent = None
        asked = whole_number(request.GET.get("agent"))
        if asked is not None:
            agent = Agent.objects.filter(workspace=workspace, pk=asked).first()
        is_owner = self.is_owner(request, workspace)
        form = TokenForm(workspace=workspace, initial={"delivers": str(agent.pk) if agent else ""})
        shown = {"made": None, "url": "", "secret": "", "confirm_revoke": None}
        if request.method == "POST" and not is_owner:
            messages.error(request, self.owner_refusal(request, workspace))
        elif request.method == "POST":
            making = request.POST.get("action") == "make"
            if making:  # what the owner typed stays in the form, whatever is refused
                form = TokenForm(request.POST, workspace=workspace)
            try:
                self._delivery_action(request, workspace, shown, form)
            except PixieError as exc:
                self.report(request, exc, form if making else None)
            else:
                if shown["made"]:
                    form = TokenForm(workspace=workspace, initial=form.initial)
                elif not shown["confirm_revoke"] and not (making and form.errors):
                    return redirect(request.get_full_path())
        overview = delivery_overview(workspace, agent=agent)
        claude = None if agent else _claude_code(request, workspace, overview)
        here = reverse("admin:pixie_workspace_delivery", args=[workspace.pk])
        response = self.render_page(
            request,
            "admin/pixie/workspace/delivery.html",
            f"Delivery of {agent.name if agent else workspace.name}",
            workspace=workspace,
            original=workspace,
            agent=agent,
            here=here,
            is_owner=is_owner,
            refusal=self.owner_refusal(request, workspace),
            overview=overview,
            form=form,
            one_client=ONE_CLIENT,
            client_days=settings.PIXIE_DELIVERY_CLIENT_DAYS,
            claude=claude,
            **shown,
        )
        response["Cache-Control"] = "no-store"  # a token's URL may be on it, once
        return response

    @method_decorator(sensitive_variables("secret", "shown"))
    def _delivery_action(self, request, workspace, shown, form) -> None:
        """Make, rotate or revoke (after its confirmation), filling ``shown`` with what the
        page shows once; a refusal raises."""
        posted, actor = request.POST, request.user
        action = posted.get("action", "")
        if action == "make":
            if not form.is_valid():  # its fields say what is wrong
                return
            agent = None
            if form.cleaned_data["delivers"]:
                agent = Agent.objects.filter(
                    workspace=workspace, pk=whole_number(form.cleaned_data["delivers"])
                ).first()
                if agent is None:
                    raise ValidationFailed("delivers: no such agent in this workspace")
            token, secret = delivery_token_create(
                workspace=workspace, actor=actor, name=form.cleaned_data["name"], agent=agent
            )
            shown.update(made=token, url=delivery_url(site_url_for(request), secret), secret=secret)
            return
        token = DeliveryToken.objects.filter(
            workspace=workspace, revoked_at=None, pk=whole_number(posted.get("token"))
        ).first()
        if token is None:
            raise ValidationFailed("That delivery token is not this workspace's, or is revoked")
        if action == "rotate":
            token, secret = delivery_token_rotate(token=token, actor=actor)
            shown.update(made=token, url=delivery_url(site_url_for(request), secret), secret=secret)
            return
        if action == "revoke" and posted.get("confirmed") != "yes":
            shown["confirm_revoke"] = token
            return
        if action == "revoke":
            delivery_token_revoke(token=token, actor=actor)
            messages.success(
                request,
                f"Revoked the delivery token {token.name!r}: its URL answers 404 from the next "
                "request, and its clients keep what they have.",
            )
            return
        raise ValidationFailed(f"Unknown action {action[:20]!r}")


def _claude_code(request, workspace, overview) -> dict:
    """What the page's Claude Code part shows: the plugins, and the managed-settings snippet
    made for the workspace token ``?claude=<id>`` picks (the first, if none is picked)."""
    tokens = [token for token in overview.tokens if token.agent_id is None]
    picked = whole_number(request.GET.get("claude"))
    token = next((t for t in tokens if t.pk == picked), tokens[0] if tokens else None)
    marketplace = workspace_marketplace(workspace.pk)
    site = site_url_for(request)
    strict = request.GET.get("strict") == "1"
    return {
        "tokens": tokens,
        "token": token,
        "strict": strict,
        "plugins": marketplace.plugins,
        "name": marketplace.name,
        "variable": TOKEN_VARIABLE,
        "url": f"{site}/claude/marketplace.json",
        "https": site.startswith("https://"),
        "snippet": managed_settings(workspace, site, marketplace.plugins, strict=strict),
    }
