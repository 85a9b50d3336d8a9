"""Installing from the workspace home, as a page: which agents get the bundle's skills and,
agent by agent, whether they stay pinned to this version's revisions or follow the
latest. Mixed into WorkspaceAdmin; the plan itself is the install kind's
(pixie/installer/kinds/install.py), read whole and approved on its own page."""

from django.contrib import messages
from django.shortcuts import redirect

from agents.models import Agent
from catalog.models import Plan
from pixie.core.errors import PixieError
from pixie.core.web.whole_numbers import whole_number
from pixie.installer.plan_kinds import KINDS, PlanRequest
from pixie.installer.plans import version_visible

# The agents listed at once; the API takes as many in one request.
AGENTS_SHOWN = 200
FOLLOW, PIN = "follow", "pin"


class InstallPages:
    def install_urls(self):
        return [
            self.page_path(
                "<int:workspace_id>/install/", self.install_view, "pixie_workspace_install"
            )
        ]

    def install_view(self, request, workspace_id):
        workspace = self.page_object(request, workspace_id)
        asked = request.POST if request.method == "POST" else request.GET
        try:
            version = version_visible(workspace, asked.get("bundle", ""), asked.get("version"))
        except PixieError as exc:
            self.report(request, exc)
            return redirect("admin:pixie_workspace_dashboard", workspace.pk)
        agents = list(Agent.objects.filter(workspace=workspace).order_by("name")[:AGENTS_SHOWN])
        chosen = {agent.pk for agent in agents}  # every agent, until the owner says
        follow: set[int] = set()
        refusal = self.owner_refusal(request, workspace)
        if request.method == "POST" and not refusal:
            chosen = {whole_number(pk) for pk in request.POST.getlist("agents")} - {None}
            follow = {a.pk for a in agents if request.POST.get(f"use-{a.pk}") == FOLLOW}
            try:
                plan = KINDS[Plan.Kind.INSTALL].create(
                    PlanRequest(
                        workspace=workspace,
                        actor=request.user,
                        bundle=version.bundle.slug,
                        version=version.version,
                        agents=sorted(chosen),
                        following=sorted(follow & chosen),
                    )
                )
            except PixieError as exc:
                self.report(request, exc)
            else:
                messages.success(request, f"Plan #{plan.pk} computed: read it, then approve.")
                return redirect("admin:catalog_plan_review", plan.pk)
        total = (
            Agent.objects.filter(workspace=workspace).count()
            if len(agents) == AGENTS_SHOWN
            else len(agents)
        )
        return self.render_page(
            request,
            "admin/pixie/workspace/install.html",
            f"Install {version} in {workspace.name}",
            workspace=workspace,
            original=workspace,
            version=version,
            refusal=refusal,
            rows=[
                {"agent": a, "chosen": a.pk in chosen, "follows": a.pk in follow} for a in agents
            ],
            agents_total=total,
            FOLLOW=FOLLOW,
            PIN=PIN,
        )
