"""An agent's pages for its owners: manage skills, preview the prompt, read the menu."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from catalog.models import CatalogReview, WorkspaceSkill
from pixie.errors import PixieError
from pixie.models import Membership
from pixie.permissions import role_in

from . import selectors, services
from .models import Agent, AgentSkill
from .promote import assembly_promote

MENU_LIMIT = 200  # skills listed in the attach menu; a bigger workspace types the slug


class PromoteForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="The bundle's slug, e.g. collections-kit.")
    name = forms.CharField(max_length=80)
    version = forms.CharField(max_length=64, initial="1.0.0")
    description = forms.CharField(max_length=400, required=False)


def agent_page_urls(model_admin):
    site = model_admin.admin_site

    def agent_for(request, agent_id) -> tuple[Agent, str | None]:
        agent = get_object_or_404(Agent.objects.select_related("workspace"), pk=agent_id)
        role = role_in(user=request.user, workspace=agent.workspace)
        if role is None and not request.user.is_superuser:
            raise Http404("No such agent.")
        return agent, role

    def render(request, agent, template, **context):
        context = {
            **site.each_context(request),
            "agent": agent,
            "opts": model_admin.model._meta,
            **context,
        }
        return TemplateResponse(request, f"admin/agents/agent/{template}", context)

    def skills_view(request, agent_id):
        agent, role = agent_for(request, agent_id)
        attachments = list(
            AgentSkill.objects.filter(agent=agent)
            .select_related("skill__head", "pinned_revision", "override")
            .order_by("position", "id")
        )
        attached = {a.skill_id for a in attachments}
        available = list(
            WorkspaceSkill.objects.filter(workspace=agent.workspace, archived_at__isnull=True)
            .exclude(pk__in=attached)
            .order_by("slug")
            .only("id", "slug")[: MENU_LIMIT + 1]
        )
        # A workspace of 10,000 skills would make a 10,000-option menu (half a megabyte):
        # past MENU_LIMIT the owner types the slug instead.
        if len(available) > MENU_LIMIT:
            available = None
        return render(
            request,
            agent,
            "skills.html",
            title=f"Skills of {agent.name}",
            attachments=attachments,
            available=available,
            is_owner=role == Membership.Role.OWNER,
        )

    @require_POST
    def change_view(request, agent_id):
        """One form post per change: attach, detach, move, toggle, pin, override."""
        agent, _role = agent_for(request, agent_id)
        action = request.POST.get("action", "")
        try:
            _apply(request, agent, action)
        except PixieError as exc:
            for problem in getattr(exc, "problems", [exc.message]):
                model_admin.message_user(request, problem, messages.ERROR)
        return HttpResponseRedirect(reverse("admin:agents_agent_skills", args=[agent.pk]))

    def prompt_view(request, agent_id):
        agent, _role = agent_for(request, agent_id)
        return render(
            request,
            agent,
            "prompt.html",
            title=f"Composed prompt of {agent.name}",
            prompt=selectors.composed_prompt(agent),
        )

    def menu_view(request, agent_id):
        agent, _role = agent_for(request, agent_id)
        return render(
            request,
            agent,
            "menu.html",
            title=f"Planner's menu of {agent.name}",
            menu=selectors.planner_menu(agent),
        )

    def promote_view(request, agent_id):
        agent, role = agent_for(request, agent_id)
        if role != Membership.Role.OWNER:
            raise Http404("Only an owner can promote an agent's skills.")
        form = PromoteForm(request.POST or None, initial={"slug": f"{agent.slug}-kit"})
        if request.method == "POST" and form.is_valid():
            try:
                published = assembly_promote(agent=agent, actor=request.user, **form.cleaned_data)
            except PixieError as exc:
                for problem in getattr(exc, "problems", [exc.message]):
                    form.add_error(None, problem)
            else:
                model_admin.message_user(
                    request,
                    f"Published {published} from the skills of {agent.name}. "
                    + _review_note(published)
                    + " Install it on another agent with an ordinary install plan.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:catalog_plan_ask"))
        return render(
            request, agent, "promote.html", title=f"Promote the skills of {agent.name}", form=form
        )

    view = site.admin_view
    return [
        path("<int:agent_id>/promote/", view(promote_view), name="agents_agent_promote"),
        path("<int:agent_id>/skills/", view(skills_view), name="agents_agent_skills"),
        path("<int:agent_id>/skills/change/", view(change_view), name="agents_agent_skills_change"),
        path("<int:agent_id>/prompt/", view(prompt_view), name="agents_agent_prompt"),
        path("<int:agent_id>/menu/", view(menu_view), name="agents_agent_menu"),
    ]


def _review_note(bundle_version) -> str:
    if bundle_version.catalog_review == CatalogReview.APPROVED:
        return "It is in the catalog every workspace sees."
    held = "".join(f" Held because {flag}." for flag in bundle_version.catalog_review_flags)
    publisher = bundle_version.bundle.publisher.name
    return f"Only {publisher} sees it until an operator approves it for the catalog.{held}"


def _apply(request, agent: Agent, action: str) -> None:
    actor = request.user
    if action == "attach":
        skills = WorkspaceSkill.objects.filter(workspace=agent.workspace)
        typed = request.POST.get("skill_slug", "").strip().removeprefix("@")
        if typed:
            skill = skills.filter(slug=typed).first()
        else:
            skill = skills.filter(pk=request.POST.get("skill") or 0).first()
        if skill is None:
            raise PixieError("Choose a skill of this workspace to attach")
        services.agent_skill_attach(
            agent=agent, skill=skill, actor=actor, pinned=request.POST.get("pinned") == "on"
        )
        return
    attachment = (
        AgentSkill.objects.select_related("agent__workspace", "skill__head")
        .filter(agent=agent, pk=request.POST.get("attachment") or 0)
        .first()
    )
    if attachment is None:
        raise PixieError("That skill is not attached to this agent any more")
    if action in ("up", "down"):
        services.agent_skill_move(attachment=attachment, direction=action, actor=actor)
    elif action == "toggle":
        services.agent_skill_update(
            attachment=attachment, enabled=not attachment.enabled, actor=actor
        )
    elif action == "pin":
        services.agent_skill_update(attachment=attachment, pin=True, actor=actor)
    elif action == "follow":
        services.agent_skill_update(attachment=attachment, pin=False, actor=actor)
    elif action == "override":
        body = request.POST.get("body", "").replace("\r\n", "\n")
        services.agent_skill_override(attachment=attachment, body=body or None, actor=actor)
    elif action == "detach":
        services.agent_skill_detach(attachment=attachment, actor=actor)
    else:
        raise PixieError(f"Unknown action {action!r}")
