"""The installer's admin: installations, and the plan pages (ask for a plan, read it
whole, approve or reject it).

Custom views are prepended in get_urls and wrapped in admin_view; each checks
the user's role in the plan's workspace (404 for non-members) and calls one
service. The templates extend the admin's and fill one block.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.urls import reverse

from agents.models import Agent
from catalog.content_diff import frontmatter_text
from catalog.models import (
    BundleVersion,
    CatalogReview,
    Installation,
    Plan,
    SkillRevision,
    SkillVersion,
    Status,
    WorkspaceSkill,
)
from catalog.selectors import visible_versions
from catalog.services.signing import signature_summary, signature_words
from catalog.skill_files_display import file_mode, file_rows
from egress.models import CredentialRequirement
from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.models import Membership, Workspace
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    ServiceManagedAdmin,
    member_workspace_ids,
    owned_workspace_ids,
    person,
)
from pixie.core.web.pages import WorkspacePages
from pixie.core.web.whole_numbers import whole_number

from .plan_display import SKILL_TEXT_STEPS, grouped_steps, plan_timeline, skill_after
from .plan_kinds import KINDS, Effect, PlanRequest, kind_of
from .plans import plan_approve, plan_create, plan_reject, plan_rollback, undecided_forks
from .policy import blocking, plan_policy
from .repoint import repoint_backlog, repoint_create
from .takeover import plan_take_over


@admin.register(Installation)
class InstallationAdmin(WorkspacePages, ServiceManagedAdmin):
    listed_under = "pixie"  # Workspaces: what a workspace has installed (admin_site)
    list_display = ["workspace", "bundle", "bundle_version", "installed_at", "installed_by"]
    # Only the bundles installed in the user's workspaces: another workspace's draft
    # bundle is named after it.
    list_filter = [MemberWorkspaceFilter, ("bundle", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["workspace", "bundle", "bundle_version__bundle", "installed_by"]
    change_form_template = "admin/catalog/installation/change_form.html"
    # The bundle and its version by name: their pages are operators'.
    fields = ["workspace", "bundle_name", "version_name", "installed_at", "installed"]
    readonly_fields = fields

    @admin.display(description="Bundle")
    def bundle_name(self, installation):
        return installation.bundle.name

    @admin.display(description="Bundle version")
    def version_name(self, installation):
        return installation.bundle_version.version

    @admin.display(description="Installed by")
    def installed(self, installation):
        return person(installation.installed_by)

    def get_urls(self):
        repoint = self.page_path(
            "<int:installation_id>/repoint/",
            self.repoint_view,
            "catalog_installation_repoint",
            post_only=True,
        )
        rollback = self.page_path(
            "<int:installation_id>/rollback/<int:number>/",
            self.rollback_view,
            "catalog_installation_rollback",
            post_only=True,
        )
        return [repoint, rollback, *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        installation = self.get_object(request, object_id)
        extra = {}
        if installation is not None:
            extra = {
                "backlog": repoint_backlog(
                    workspace=installation.workspace, installation=installation
                ),
                "is_owner": self.is_owner(request, installation),
                **_generations_page(installation, request.GET.get("generations_before")),
            }
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})

    def repoint_view(self, request, installation_id):
        installation = self.page_object(request, installation_id)
        try:
            plan = repoint_create(
                workspace=installation.workspace, installation=installation, actor=request.user
            )
        except PixieError as exc:
            self.report(request, exc)
            return HttpResponseRedirect(
                reverse("admin:catalog_installation_change", args=[installation.pk])
            )
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[plan.pk]))

    def rollback_view(self, request, installation_id, number):
        """Plan a return to generation ``number``: reviewed and approved like any plan."""
        installation = self.page_object(request, installation_id)
        try:
            plan = plan_rollback(
                workspace=installation.workspace,
                bundle=installation.bundle.slug,
                generation=number,
                actor=request.user,
            )
        except PixieError as exc:
            self.report(request, exc)
            return HttpResponseRedirect(
                reverse("admin:catalog_installation_change", args=[installation.pk])
            )
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[plan.pk]))


TERMINAL = {"applied", "failed", "stale", "rejected", "superseded"}
# What approving says, by the status the plan has when the page is drawn again.
APPROVED_WORDS = {
    Plan.State.APPROVED: ("Plan #{number} approved; applying it now.", messages.SUCCESS),
    Plan.State.APPLYING: ("Plan #{number} approved; applying it now.", messages.SUCCESS),
    Plan.State.APPLIED: ("Plan #{number} approved and applied.", messages.SUCCESS),
    Plan.State.FAILED: (
        "Plan #{number} approved, but applying it failed: nothing changed. The plan says why.",
        messages.ERROR,
    ),
    Plan.State.STALE: (
        "Plan #{number} approved, but it went stale before it was applied: nothing changed. "
        "The plan says why.",
        messages.WARNING,
    ),
}


class AskForPlanForm(forms.Form):
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none())
    kind = forms.ChoiceField(choices=Plan.Kind.choices)
    bundle_version = forms.ModelChoiceField(
        queryset=BundleVersion.objects.none(),
        required=False,
        help_text="For an uninstall, any version of the installed bundle; none for a repoint.",
    )
    agents = forms.ModelMultipleChoiceField(
        queryset=Agent.objects.none(),
        required=False,
        help_text="For an install: the agents that get the skills, in bundle order.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        # A rollback names a generation: it is asked for from its installation's page.
        self.fields["kind"].choices = [
            (value, label)
            for value, label in Plan.Kind.choices
            if value in KINDS and not KINDS[value].names_generation
        ]
        owned = Membership.objects.filter(user=user, role=Membership.Role.OWNER).values(
            "workspace_id"
        )
        self.fields["workspace"].queryset = Workspace.objects.filter(pk__in=owned)
        owned_ids = list(owned.values_list("workspace_id", flat=True)[:2])
        if len(owned_ids) == 1:  # one workspace to ask for: chosen already
            self.fields["workspace"].initial = owned_ids[0]
        self.fields["agents"].queryset = Agent.objects.filter(workspace__in=owned).select_related(
            "workspace"
        )
        self.fields["agents"].label_from_instance = lambda a: f"{a.name} ({a.workspace.slug})"
        # What the user's workspaces may see, each with its publisher; plan_create checks
        # again against the chosen workspace.
        self.fields["bundle_version"].queryset = (
            visible_versions(user)
            .filter(status=Status.PUBLISHED)
            .select_related("bundle__publisher")
            .order_by("bundle__name", "bundle__slug", "-published_at")
        )
        self.fields["bundle_version"].label_from_instance = offered_label


def offered_label(bundle_version: BundleVersion) -> str:
    """A version as it is offered: its publisher named, the operator's mark, and whether
    other workspaces see it."""
    label = f"{bundle_version} by {bundle_version.bundle.publisher.label}"
    if bundle_version.catalog_review == CatalogReview.PENDING:
        return f"{label} [awaiting review: only its workspace sees it]"
    if bundle_version.catalog_review == CatalogReview.REFUSED:
        return f"{label} [refused for the catalog: {bundle_version.catalog_review_reason}]"
    return label


@admin.register(Plan)
class PlanAdmin(WorkspacePages, ServiceManagedAdmin):
    listed_under = "pixie"  # Workspaces: owners ask for and approve plans (admin_site)
    list_display = ["__str__", "workspace", "kind", "bundle_version", "status", "created_at"]
    list_filter = ["kind", "status", MemberWorkspaceFilter]
    list_select_related = ["workspace", "bundle_version__bundle"]
    change_list_template = "admin/catalog/plan/change_list.html"

    def get_urls(self):
        page, plan = self.page_path, "<int:plan_id>"
        return [
            page("ask/", self.ask_view, "catalog_plan_ask"),
            page(f"{plan}/review/", self.review_view, "catalog_plan_review"),
            page(f"{plan}/approve/", self.approve_view, "catalog_plan_approve", post_only=True),
            page(f"{plan}/reject/", self.reject_view, "catalog_plan_reject", post_only=True),
            page(
                f"{plan}/take-over/", self.take_over_view, "catalog_plan_take_over", post_only=True
            ),
            page(f"{plan}/choices/", self.choices_view, "catalog_plan_choices", post_only=True),
            page(f"{plan}/status/", self.status_view, "catalog_plan_status"),
            page(f"{plan}/skill/<slug:slug>/", self.skill_view, "catalog_plan_skill"),
            page(f"{plan}/repoint/", self.repoint_view, "catalog_plan_repoint", post_only=True),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The admin's catch-all hands any unmatched path here as an object id
        # (/admin/catalog/plan/1/history/x/change/): only a number names a plan.
        if whole_number(object_id) is None:
            raise Http404(f"No plan {object_id}.")
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[object_id]))

    # Helpers

    def _plan(self, request, plan_id) -> Plan:
        plans = self.get_queryset(request).select_related(
            "bundle_version__bundle__publisher",
            "bundle_version__signing_key",
            "installation__bundle_version",
            "created_by",
            "decided_by",
            "taken_over_by",
        )
        return self.page_object(request, plan_id, plans)

    def _back(self, plan_id):
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[plan_id]))

    # Views

    def ask_view(self, request):
        form = AskForPlanForm(request.POST or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            version = data["bundle_version"]
            asked = PlanRequest(
                workspace=data["workspace"],
                actor=request.user,
                bundle=version.bundle.slug if version else None,
                version=version.version if version else None,
                agents=list(data["agents"]),
            )
            try:
                kind = KINDS[data["kind"]]
                problems = kind.request_problems(
                    bundle=asked.bundle, version=asked.version, generation=None
                )
                if problems:  # in the form's words (it offers no kind that names more)
                    raise ValidationFailed(f"Choose a bundle version: it is required for {kind.a}")
                plan = kind.create(asked)
            except PixieError as exc:
                self.report(request, exc)
            else:
                return self._back(plan.pk)
        return self.render_page(
            request,
            "admin/catalog/plan/ask.html",
            "Ask for a plan",
            form=form,
            # Only owners ask: a member is told so, and where to turn, instead of a form
            # whose workspace list is empty.
            owns_a_workspace=bool(owned_workspace_ids(request.user)),
            member_of=Workspace.objects.filter(pk__in=member_workspace_ids(request.user)).order_by(
                "name"
            ),
        )

    def changelist_view(self, request, extra_context=None):
        extra = {"owns_a_workspace": bool(owned_workspace_ids(request.user))}
        return super().changelist_view(request, {**extra, **(extra_context or {})})

    def review_view(self, request, plan_id):
        plan = self._plan(request, plan_id)
        role = self.workspace_role(request, plan)
        # The approval rules for this viewer (stored ones once decided): no query.
        policy = plan_policy(plan, viewer=request.user, role=role)
        return self.render_page(
            request,
            "admin/catalog/plan/review.html",
            f"Plan #{plan.pk}: {plan.get_kind_display().lower()} {kind_of(plan).target(plan)}",
            plan=plan,
            groups=grouped_steps(plan.steps, plan_links(plan)),
            timeline=plan_timeline(plan),
            done=plan.status == Plan.State.APPLIED,
            forks=any(step["type"] == "skill.fork" for step in plan.steps),
            waiting=[step["slug"] for step in undecided_forks(plan)],
            holders=any(s["type"] in ("agent.gains", "agent.left_out") for s in plan.steps),
            can_decide=role == Membership.Role.OWNER and plan.status == Plan.State.PROPOSED,
            is_member_only=role == Membership.Role.MEMBER,
            policy=[rule for rule in policy if rule["level"] != "off"],
            policy_blocks=blocking(policy) if plan.status == Plan.State.PROPOSED else [],
            unconfirmed=[
                s["name"]
                for s in plan.steps
                if s["type"] == "credential.require" and not s["confirmed"]
            ],
            watching=plan.status not in TERMINAL,
            progress=kind_of(plan).progress(plan),
            backlog=(
                repoint_backlog(workspace=plan.workspace, installation=plan.installation)
                if kind_of(plan).effect == Effect.MOVES and plan.status == Plan.State.APPLIED
                else None
            ),
            # What replaced the revisions the backlog's pins still use: "this rollback".
            replaced_by=f"this {kind_of(plan).noun}",
            to_no_agent=kind_of(plan).effect == Effect.CREATES
            and not any(s["type"] in ("agent.attach", "agent.has") for s in plan.steps),
            is_owner=role == Membership.Role.OWNER,
            signature=(
                signature_words(signature_summary(plan.bundle_version))
                if plan.bundle_version_id and kind_of(plan).signed
                else ""
            ),
        )

    def skill_view(self, request, plan_id, slug):
        """A skill the plan creates, updates or forks, read whole as the plan leaves it
        (before it exists here, too): the catalog's text, the merge, or your own, as the
        plan's choice says, with its frontmatter and files."""
        plan = self._plan(request, plan_id)
        step = next(
            (s for s in plan.steps if s["type"] in SKILL_TEXT_STEPS and s["slug"] == slug), None
        )
        if step is None:
            raise Http404(f"Plan #{plan.pk} creates, updates or forks no skill @{slug}.")
        after = skill_after(step)
        version = SkillVersion.objects.select_related("package").get(pk=step["skill_version_id"])
        name, description = version.name, version.description
        frontmatter = frontmatter_text(version.frontmatter, version.approvals)
        files = file_rows(version.files.all())
        if after["source"] == "merge":
            merged = after["merged"]
            name, description = merged["name"], merged["description"]
            frontmatter = frontmatter_text(merged["frontmatter"], merged["approvals"])
            files = [_file_row(f) for f in merged["files"]]
        elif after["source"] == "yours":
            # The revision the plan read as yours (the head when it was computed).
            head = (
                SkillRevision.objects.filter(pk=step["head_id"], skill__workspace=plan.workspace_id)
                .prefetch_related("files")
                .first()
            )
            if head is not None:
                name, description = head.name, head.short_description
                frontmatter = frontmatter_text(head.frontmatter, head.approvals)
                files = file_rows(head.files.all())
        return self.render_page(
            request,
            "admin/catalog/plan/skill.html",
            f"@{slug} as plan #{plan.pk} leaves it",
            plan=plan,
            slug=slug,
            step=step,
            source=after["source"],
            done=plan.status == Plan.State.APPLIED,
            version=version,
            name=name,
            description=description,
            body=after["body"],
            frontmatter=frontmatter,
            files=files,
        )

    def approve_view(self, request, plan_id):
        """Approve what the page showed. Fork choices other than the plan's recompute it
        first (a new plan, this one superseded), to be read again: never approved unseen."""
        plan = self._plan(request, plan_id)
        if self._chosen(request, plan) != self._chosen(None, plan):
            return self.choices_view(request, plan_id)
        try:
            plan_approve(plan=plan, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            # Tasks run in-process (no Redis) apply the plan as the approval commits: the
            # message says what the page the owner lands on shows, not what was queued.
            status = Plan.objects.values_list("status", flat=True).get(pk=plan.pk)
            words, level = APPROVED_WORDS.get(status, APPROVED_WORDS[Plan.State.APPROVED])
            self.message_user(request, words.format(number=plan.pk), level)
        return self._back(plan_id)

    def reject_view(self, request, plan_id):
        plan = self._plan(request, plan_id)
        try:
            plan_reject(plan=plan, actor=request.user, reason=request.POST.get("reason", ""))
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(request, f"Plan #{plan.pk} rejected.")
        return self._back(plan_id)

    def take_over_view(self, request, plan_id):
        """An owner takes over a waiting plan whose asker left (pixie.installer.offboarding)."""
        plan = self._plan(request, plan_id)
        try:
            plan_take_over(plan=plan, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            self.message_user(request, f"Plan #{plan.pk} is yours now: approve or reject it.")
        return self._back(plan_id)

    def choices_view(self, request, plan_id):
        """Different fork choices make a new plan; this one is superseded."""
        plan = self._plan(request, plan_id)
        choices, left_out = self._chosen(request, plan)
        choices = {slug: choice for slug, choice in choices.items() if choice}  # "": waits
        try:
            new_plan = plan_create(
                workspace=plan.workspace,
                kind=plan.kind,
                bundle_version=plan.bundle_version or plan.installation.bundle_version,
                agents=plan.options.get("agents", []),
                fork_choices=choices,
                leave_out=left_out,
                following=plan.options.get("following", []),
                recommend=plan.options.get("recommend", ""),
                generation=plan.options.get("generation"),
                actor=request.user,
            )
        except PixieError as exc:
            self.report(request, exc)
            return self._back(plan_id)
        self.message_user(
            request,
            f"Plan #{new_plan.pk} replaces #{plan.pk} with your choices: read it, then approve.",
        )
        return self._back(new_plan.pk)

    @staticmethod
    def _chosen(request, plan) -> tuple[dict, list[int]]:
        """Each fork's choice and the agents left out, as posted (or as the plan has them,
        without a request or for what the form did not show)."""
        posted = request.POST if request is not None else {}
        # A fork that waits for a choice has none until one is posted ("").
        forks = {
            step["slug"]: posted.get(
                f"fork-{step['slug']}", step["choice"] if step.get("decided", True) else ""
            )
            for step in plan.steps
            if step["type"] == "skill.fork"
        }
        left_out = sorted(plan.options.get("leave_out", []))
        if request is not None and "leave-out-shown" in posted:
            numbers = {whole_number(value) for value in posted.getlist("leave-out")}
            left_out = sorted(numbers - {None})
        return forks, left_out

    def status_view(self, request, plan_id):
        plan = self._plan(request, plan_id)
        return JsonResponse(
            {
                "status": plan.status,
                "label": plan.get_status_display(),
                "error": plan.error,
                "done": plan.status in TERMINAL,
                "progress": kind_of(plan).progress(plan),
            }
        )

    def repoint_view(self, request, plan_id):
        """From an applied upgrade: a repoint plan for that installation's pins."""
        plan = self._plan(request, plan_id)
        try:
            repoint = repoint_create(
                workspace=plan.workspace, installation=plan.installation, actor=request.user
            )
        except PixieError as exc:
            self.report(request, exc)
            return self._back(plan_id)
        return self._back(repoint.pk)


GENERATIONS_SHOWN = 50


def _generations_page(installation, before: str | None) -> dict:
    """The installation's generations, newest first, 50 a page; older ones page by number
    so the page stays the same size however many plans it has had."""
    generations = installation.generations.select_related("bundle_version", "plan__decided_by")
    if (older_than := whole_number(before or "")) is not None:
        generations = generations.filter(number__lt=older_than)
    shown = list(generations.order_by("-number")[: GENERATIONS_SHOWN + 1])
    older = shown[GENERATIONS_SHOWN:]
    shown = shown[:GENERATIONS_SHOWN]
    return {
        "generations": shown,
        "generations_older": shown[-1].number if older else None,
        "generations_paged": bool(before),
    }


def _file_row(facts: dict) -> dict:
    """A file of a merge (content_diff.FileInfo.as_dict) as file_rows shows files."""
    return {**facts, "mode": file_mode(facts["executable"])}


def plan_links(plan) -> dict:
    """Where each skill, agent and credential a plan names can be read: the workspace's
    own pages, or, for a skill not created yet, the plan's page of it. Three queries."""
    steps = plan.steps
    slugs = {s.get("slug") or s.get("to") for s in steps if s["type"].startswith("skill.")}
    slugs.discard(None)
    skills = {
        slug: reverse("admin:catalog_workspaceskill_change", args=[pk])
        for slug, pk in WorkspaceSkill.objects.filter(
            workspace=plan.workspace_id, slug__in=slugs
        ).values_list("slug", "pk")
    }
    # Each skill whose text the plan sets is readable whole as it leaves it; one it creates
    # is linked there by name, too, since it has no page of its own yet.
    after = {
        step["slug"]: reverse("admin:catalog_plan_skill", args=[plan.pk, step["slug"]])
        for step in steps
        if step["type"] in SKILL_TEXT_STEPS
    }
    for step in steps:
        if step["type"] == "skill.create" and step["slug"] not in skills:
            skills[step["slug"]] = after[step["slug"]]
    names = {s["agent"] for s in steps if "agent" in s}
    agents: dict[str, str] = {}
    for name, pk in Agent.objects.filter(workspace=plan.workspace_id, name__in=names).values_list(
        "name", "pk"
    ):
        # Two agents of one name: neither is linked rather than the wrong one.
        agents[name] = "" if name in agents else reverse("admin:agents_agent_change", args=[pk])
    credentials = {
        name: reverse("admin:egress_credentialrequirement_change", args=[pk])
        for name, pk in CredentialRequirement.objects.filter(
            workspace=plan.workspace_id,
            name__in={s["name"] for s in steps if s["type"].startswith("credential.")},
        ).values_list("name", "pk")
    }
    return {"skills": skills, "after": after, "agents": agents, "credentials": credentials}


# What a publish or a yank would touch, on catalog's confirmation pages (its hook).

from . import release_impact  # noqa: E402, F401
