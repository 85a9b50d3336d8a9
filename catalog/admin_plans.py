"""The plan pages of the admin: ask for a plan, read it whole, approve or reject it.

Custom views are prepended in get_urls and wrapped in admin_view; each checks
the user's role in the plan's workspace (404 for non-members) and calls one
service. The templates extend the admin's and fill one block.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from agents.models import Agent
from pixie.admin_scoping import ServiceManagedAdmin, member_workspace_ids, owned_workspace_ids
from pixie.errors import PixieError
from pixie.models import Membership, Workspace
from pixie.permissions import role_in

from .models import BundleVersion, CatalogReview, Plan, Status
from .plan_display import grouped_steps
from .selectors import visible_versions
from .services.plans import plan_approve, plan_create, plan_reject
from .services.repoint import progress_of, repoint_backlog, repoint_create

TERMINAL = {"applied", "failed", "stale", "rejected", "superseded"}


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
        owned = Membership.objects.filter(user=user, role=Membership.Role.OWNER).values(
            "workspace_id"
        )
        self.fields["workspace"].queryset = Workspace.objects.filter(pk__in=owned)
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
class PlanAdmin(ServiceManagedAdmin):
    list_display = ["__str__", "workspace", "kind", "bundle_version", "status", "created_at"]
    list_filter = ["kind", "status"]
    list_select_related = ["workspace", "bundle_version__bundle"]
    change_list_template = "admin/catalog/plan/change_list.html"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("ask/", view(self.ask_view), name="catalog_plan_ask"),
            path("<int:plan_id>/review/", view(self.review_view), name="catalog_plan_review"),
            path("<int:plan_id>/approve/", view(self.approve_view), name="catalog_plan_approve"),
            path("<int:plan_id>/reject/", view(self.reject_view), name="catalog_plan_reject"),
            path("<int:plan_id>/choices/", view(self.choices_view), name="catalog_plan_choices"),
            path("<int:plan_id>/status/", view(self.status_view), name="catalog_plan_status"),
            path("<int:plan_id>/repoint/", view(self.repoint_view), name="catalog_plan_repoint"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The admin's catch-all hands any unmatched path here as an object id
        # (/admin/catalog/plan/1/history/x/change/): only a number names a plan.
        if not str(object_id).isdigit():
            raise Http404(f"No plan {object_id}.")
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[object_id]))

    # Helpers

    def _plan_and_role(self, request, plan_id) -> tuple[Plan, str | None]:
        plan = get_object_or_404(
            Plan.objects.select_related(
                "workspace", "bundle_version__bundle", "installation__bundle_version",
                "created_by", "decided_by",
            ),
            pk=plan_id,
        )  # fmt: skip
        role = role_in(user=request.user, workspace=plan.workspace)
        if role is None and not request.user.is_superuser:
            raise Http404("No such plan.")
        return plan, role

    def _back(self, plan_id):
        return HttpResponseRedirect(reverse("admin:catalog_plan_review", args=[plan_id]))

    def _refusal(self, request, exc: PixieError):
        for problem in getattr(exc, "problems", [exc.message]):
            self.message_user(request, problem, messages.ERROR)

    # Views

    def ask_view(self, request):
        form = AskForPlanForm(request.POST or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                if data["kind"] == Plan.Kind.REPOINT:
                    plan = repoint_create(
                        workspace=data["workspace"], agents=list(data["agents"]), actor=request.user
                    )
                else:
                    plan = plan_create(
                        workspace=data["workspace"],
                        kind=data["kind"],
                        bundle_version=data["bundle_version"],
                        agents=list(data["agents"]),
                        actor=request.user,
                    )
            except PixieError as exc:
                self._refusal(request, exc)
            else:
                return self._back(plan.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": "Ask for a plan",
            "form": form,
            "opts": self.model._meta,
            # Only owners ask: a member is told so, and where to turn, instead of a form
            # whose workspace list is empty.
            "owns_a_workspace": bool(owned_workspace_ids(request.user)),
            "member_of": Workspace.objects.filter(
                pk__in=member_workspace_ids(request.user)
            ).order_by("name"),
        }
        return TemplateResponse(request, "admin/catalog/plan/ask.html", context)

    def changelist_view(self, request, extra_context=None):
        extra = {"owns_a_workspace": bool(owned_workspace_ids(request.user))}
        return super().changelist_view(request, {**extra, **(extra_context or {})})

    def review_view(self, request, plan_id):
        plan, role = self._plan_and_role(request, plan_id)
        can_decide = role == Membership.Role.OWNER and plan.status == Plan.State.PROPOSED
        context = {
            **self.admin_site.each_context(request),
            "title": f"Plan #{plan.pk}: {plan.get_kind_display().lower()} {_target(plan)}",
            "plan": plan,
            "groups": grouped_steps(plan.steps),
            "can_decide": can_decide,
            "is_member_only": role == Membership.Role.MEMBER,
            "unconfirmed": [
                s["name"]
                for s in plan.steps
                if s["type"] == "credential.require" and not s["confirmed"]
            ],
            "watching": plan.status not in TERMINAL,
            "progress": progress_of(plan) if plan.kind == Plan.Kind.REPOINT else None,
            "backlog": (
                repoint_backlog(workspace=plan.workspace, installation=plan.installation)
                if plan.kind == Plan.Kind.UPGRADE and plan.status == Plan.State.APPLIED
                else None
            ),
            "is_owner": role == Membership.Role.OWNER,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/plan/review.html", context)

    def approve_view(self, request, plan_id):
        return require_POST(self._approve)(request, plan_id)

    def _approve(self, request, plan_id):
        plan, _role = self._plan_and_role(request, plan_id)
        try:
            plan_approve(plan=plan, actor=request.user)
        except PixieError as exc:
            self._refusal(request, exc)
        else:
            self.message_user(request, f"Plan #{plan.pk} approved; applying it now.")
        return self._back(plan_id)

    def reject_view(self, request, plan_id):
        return require_POST(self._reject)(request, plan_id)

    def _reject(self, request, plan_id):
        plan, _role = self._plan_and_role(request, plan_id)
        try:
            plan_reject(plan=plan, actor=request.user, reason=request.POST.get("reason", ""))
        except PixieError as exc:
            self._refusal(request, exc)
        else:
            self.message_user(request, f"Plan #{plan.pk} rejected.")
        return self._back(plan_id)

    def choices_view(self, request, plan_id):
        return require_POST(self._choices)(request, plan_id)

    def _choices(self, request, plan_id):
        """Different fork choices make a new plan; this one is superseded."""
        plan, _role = self._plan_and_role(request, plan_id)
        choices = {
            step["slug"]: request.POST.get(f"fork-{step['slug']}", step["choice"])
            for step in plan.steps
            if step["type"] == "skill.fork"
        }
        try:
            new_plan = plan_create(
                workspace=plan.workspace,
                kind=plan.kind,
                bundle_version=plan.bundle_version or plan.installation.bundle_version,
                agents=plan.options.get("agents", []),
                fork_choices=choices,
                actor=request.user,
            )
        except PixieError as exc:
            self._refusal(request, exc)
            return self._back(plan_id)
        self.message_user(request, f"Plan #{new_plan.pk} replaces #{plan.pk} with your choices.")
        return self._back(new_plan.pk)

    def status_view(self, request, plan_id):
        plan, _role = self._plan_and_role(request, plan_id)
        return JsonResponse(
            {
                "status": plan.status,
                "label": plan.get_status_display(),
                "error": plan.error,
                "done": plan.status in TERMINAL,
                "progress": progress_of(plan) if plan.kind == Plan.Kind.REPOINT else None,
            }
        )

    def repoint_view(self, request, plan_id):
        return require_POST(self._repoint)(request, plan_id)

    def _repoint(self, request, plan_id):
        """From an applied upgrade: a repoint plan for that installation's pins."""
        plan, _role = self._plan_and_role(request, plan_id)
        try:
            repoint = repoint_create(
                workspace=plan.workspace, installation=plan.installation, actor=request.user
            )
        except PixieError as exc:
            self._refusal(request, exc)
            return self._back(plan_id)
        return self._back(repoint.pk)


def _target(plan: Plan) -> str:
    if plan.kind == Plan.Kind.REPOINT:
        return "of pinned skills"
    if plan.bundle_version_id:
        return str(plan.bundle_version)
    return str(plan.installation.bundle_version) if plan.installation_id else "a removed install"
