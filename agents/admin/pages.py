"""An agent's pages for its owners: manage skills, preview the prompt, read the menu."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from agents import selectors, services
from agents.models import Agent, AgentSkill
from agents.promote import assembly_promote
from agents.prompt_history import first_turn_at, moment, prompt_compare
from catalog.models import CatalogReview, WorkspaceSkill
from catalog.validators import NAME_MAX
from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.models import Workspace
from pixie.core.web.admin_scoping import owned_workspace_ids
from pixie.core.web.pages import WorkspacePages

MENU_LIMIT = 200  # skills listed in the attach menu; a bigger workspace types the slug


class PromoteForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="The bundle's slug, e.g. collections-kit.")
    name = forms.CharField(max_length=80)
    version = forms.CharField(max_length=64, initial="1.0.0")
    description = forms.CharField(max_length=400, required=False)


class AgentForm(forms.Form):
    """An agent's name and system prompt (its slug is given once, when it is made)."""

    name = forms.CharField(max_length=NAME_MAX, help_text="How people and pages name it.")
    system_prompt = forms.CharField(
        required=False,
        max_length=services.PROMPT_MAX,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="What it is told before its skills, in every prompt it runs.",
    )


class NewAgentForm(AgentForm):
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none())
    slug = forms.SlugField(
        max_length=64,
        help_text="How its clients and the API name it, e.g. front-desk: lowercase letters, "
        "digits and hyphens; it does not change.",
    )
    field_order = ["workspace", "name", "slug", "system_prompt"]

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = Workspace.objects.filter(
            pk__in=owned_workspace_ids(user)
        ).order_by("name")


class AgentPages(WorkspacePages):
    """Mixed into AgentAdmin: members read an agent's skills, prompt and menu; its
    workspace's owners change its skills and promote them to a bundle."""

    def agent_urls(self):
        return [
            self.page_path("new/", self.new_view, "agents_agent_new"),
            self.page_path("<int:agent_id>/edit/", self.edit_view, "agents_agent_edit"),
            self.page_path("<int:agent_id>/promote/", self.promote_view, "agents_agent_promote"),
            self.page_path("<int:agent_id>/skills/", self.skills_view, "agents_agent_skills"),
            self.page_path(
                "<int:agent_id>/skills/change/",
                self.skills_change_view,
                "agents_agent_skills_change",
                post_only=True,
            ),
            self.page_path("<int:agent_id>/prompt/", self.prompt_view, "agents_agent_prompt"),
            self.page_path("<int:agent_id>/menu/", self.menu_view, "agents_agent_menu"),
            self.page_path(
                "<int:agent_id>/prompt/compare/",
                self.prompt_compare_view,
                "agents_agent_prompt_compare",
            ),
        ]

    def _agent_page(self, request, agent, template: str, title: str, **context):
        return self.render_page(
            request, f"admin/agents/agent/{template}", title, agent=agent, **context
        )

    def skills_view(self, request, agent_id, confirm_detach=None):
        agent = self.page_object(request, agent_id)
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
        return self._agent_page(
            request,
            agent,
            "skills.html",
            f"Skills of {agent.name}",
            attachments=attachments,
            available=available,
            is_owner=self.is_owner(request, agent),
            confirm_detach=confirm_detach,
        )

    def skills_change_view(self, request, agent_id):
        """One form post per change: attach, detach, move, reorder, toggle, pin, override.
        A detach is asked first, on the skills page, saying what it does."""
        agent = self.page_object(request, agent_id)
        action = request.POST.get("action", "")
        if action == "detach" and request.POST.get("confirmed") != "yes":
            attachment = AgentSkill.objects.filter(
                agent=agent, pk=request.POST.get("attachment") or 0
            ).first()
            if attachment is not None:
                return self.skills_view(request, agent_id, confirm_detach=attachment)
        try:
            _apply(request, agent, action)
        except PixieError as exc:
            self.report(request, exc)
        return HttpResponseRedirect(reverse("admin:agents_agent_skills", args=[agent.pk]))

    def prompt_view(self, request, agent_id):
        agent = self.page_object(request, agent_id)
        return self._agent_page(
            request,
            agent,
            "prompt.html",
            f"Composed prompt of {agent.name}",
            prompt=selectors.composed_prompt(agent),
        )

    def prompt_compare_view(self, request, agent_id):
        """What the agent ran at two moments (its latest turn by each), compared. Without
        both moments, the form starts from its first turn and now."""
        agent = self.page_object(request, agent_id)
        first = first_turn_at(agent)
        asked = {name: request.GET.get(name, "") for name in ("from", "to")}
        comparison, problems = None, []
        if asked["from"] and asked["to"]:
            try:
                comparison = prompt_compare(
                    agent,
                    since=moment(asked["from"], "from"),
                    until=moment(asked["to"], "to"),
                )
            except ValidationFailed as refused:
                problems = refused.problems
        # A datetime-local field shows only a local "YYYY-MM-DDTHH:MM[:SS]": echo the
        # moments compared in that form, not what the link said (a day, an offset).
        shown = {"from": first, "to": timezone.now()}
        if comparison:
            shown = {"from": comparison.before.at, "to": comparison.after.at}
        return self._agent_page(
            request,
            agent,
            "prompt_compare.html",
            f"What {agent.name} ran, compared",
            comparison=comparison,
            problems=problems,
            asked={
                name: f"{timezone.localtime(at):%Y-%m-%dT%H:%M:%S}" if at else ""
                for name, at in shown.items()
            },
            has_turns=first is not None,
            permalink=request.get_full_path(),
        )

    def menu_view(self, request, agent_id):
        agent = self.page_object(request, agent_id)
        return self._agent_page(
            request,
            agent,
            "menu.html",
            f"Planner's menu of {agent.name}",
            menu=selectors.planner_menu(agent),
        )

    def new_view(self, request):
        """A new agent of a workspace the person owns; its page next, to give it skills."""
        initial = {"workspace": request.GET.get("workspace")}
        form = NewAgentForm(request.POST or None, user=request.user, initial=initial)
        owns = bool(owned_workspace_ids(request.user))
        if request.method == "POST" and owns and form.is_valid():
            data = form.cleaned_data
            try:
                agent = services.agent_create(actor=request.user, **data)
            except PixieError as exc:
                self.report(request, exc, form)
            else:
                self.message_user(
                    request,
                    f"{agent.name} is an agent of {agent.workspace.name}. Give it skills here, "
                    "or with an install.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:agents_agent_skills", args=[agent.pk]))
        return self.render_page(
            request,
            "admin/agents/agent/edit.html",
            "Add an agent",
            form=form,
            refusal="" if owns else "Only a workspace's owners add agents to it; you own none.",
        )

    def edit_view(self, request, agent_id):
        agent = self.page_object(request, agent_id)
        refusal = self.owner_refusal(request, agent)
        initial = {"name": agent.name, "system_prompt": agent.system_prompt}
        form = AgentForm(request.POST or None, initial=initial)
        if request.method == "POST" and not refusal and form.is_valid():
            try:
                services.agent_update(agent=agent, actor=request.user, **form.cleaned_data)
            except PixieError as exc:
                self.report(request, exc, form)
            else:
                if form.has_changed():
                    self.message_user(request, f"{agent.name} is saved.", messages.SUCCESS)
                else:  # agent_update writes nothing for the same name and prompt
                    said = f"{agent.name} already reads like this: nothing was saved."
                    self.message_user(request, said, messages.WARNING)
                return HttpResponseRedirect(reverse("admin:agents_agent_change", args=[agent.pk]))
        return self._agent_page(
            request, agent, "edit.html", f"Edit {agent.name}", form=form, refusal=refusal
        )

    def promote_view(self, request, agent_id):
        agent = self.page_object(request, agent_id)
        form = PromoteForm(request.POST or None, initial={"slug": f"{agent.slug}-kit"})
        refusal = self.owner_refusal(request, agent)
        if request.method == "POST" and not refusal and form.is_valid():
            try:
                published = assembly_promote(agent=agent, actor=request.user, **form.cleaned_data)
            except PixieError as exc:
                self.report(request, exc, form)
            else:
                self.message_user(
                    request,
                    f"Published {published} from the skills of {agent.name}. "
                    + _review_note(published)
                    + " Install it on another agent with an ordinary install plan.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:catalog_plan_ask"))
        return self._agent_page(
            request,
            agent,
            "promote.html",
            f"Promote the skills of {agent.name}",
            form=form,
            refusal=refusal,
        )


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
    if action == "reorder":  # the whole order, as dragged on the page
        slugs = [slug.strip() for slug in request.POST.get("order", "").split(",") if slug]
        services.agent_skills_reorder(agent=agent, slugs=slugs, actor=actor)
        return
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
        messages.success(request, f"Detached @{attachment.skill.slug} from {agent.name}.")
    else:
        raise PixieError(f"Unknown action {action!r}")
