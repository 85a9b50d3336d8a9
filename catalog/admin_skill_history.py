"""A workspace skill's history in the admin: one revision whole, and any two compared.

Mixed into WorkspaceSkillAdmin. The skill comes through the admin's get_queryset, so
whoever may open the skill (its workspace's members; superusers) may read its history,
and anyone else meets a 404. The one write is an owner's restore, through skill_restore.
"""

from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from pixie.errors import PixieError, ValidationFailed
from pixie.permissions import require_owner, role_in

from .plan_core import frontmatter_text
from .plan_display import file_views, side_by_side
from .services.workspace_skills import skill_restore
from .skill_files_display import file_rows
from .skill_history import (
    RevisionMissing,
    revision_compare,
    revision_get,
    revision_number,
    revision_summaries,
)


class SkillHistoryPages:
    def history_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "<int:skill_id>/revision/<int:number>/",
                view(self.revision_text_view),
                name="catalog_workspaceskill_text",
            ),
            path(
                "<int:skill_id>/compare/",
                view(self.revision_compare_view),
                name="catalog_workspaceskill_compare",
            ),
            path(
                "<int:skill_id>/revision/<int:number>/restore/",
                view(require_POST(self.revision_restore_view)),
                name="catalog_workspaceskill_restore",
            ),
        ]

    def _history_skill(self, request, skill_id):
        return get_object_or_404(
            self.get_queryset(request).select_related("workspace", "head"), pk=skill_id
        )

    def _history_context(self, request, skill, title: str) -> dict:
        return {
            **self.admin_site.each_context(request),
            "title": title,
            "skill": skill,
            "opts": self.model._meta,
            "compare_url": reverse("admin:catalog_workspaceskill_compare", args=[skill.pk]),
        }

    def revision_text_view(self, request, skill_id, number):
        skill = self._history_skill(request, skill_id)
        try:
            revision = revision_get(skill=skill, number=number)
        except RevisionMissing as exc:
            raise Http404(exc.message) from None
        context = {
            **self._history_context(request, skill, f"@{skill.slug} revision {revision.number}"),
            "revision": revision,
            "is_head": revision.pk == skill.head_id,
            "head_number": skill.head.number if skill.head_id else None,
            "is_owner": role_in(user=request.user, workspace=skill.workspace) == "owner",
            "frontmatter": frontmatter_text(revision.frontmatter, revision.approvals),
            "files": file_rows(revision.files.all()),
        }
        return TemplateResponse(request, "admin/catalog/workspaceskill/revision.html", context)

    def revision_compare_view(self, request, skill_id):
        skill = self._history_skill(request, skill_id)
        context = self._history_context(request, skill, f"Compare revisions of @{skill.slug}")
        context["revisions"] = list(revision_summaries(skill))
        try:
            comparison = revision_compare(
                skill=skill,
                before=revision_number(request.GET.get("from"), "from"),
                after=revision_number(request.GET.get("to"), "to"),
            )
        except ValidationFailed as exc:  # a number that names no revision, or no number
            context["problems"] = exc.problems
            return TemplateResponse(request, "admin/catalog/workspaceskill/compare.html", context)
        context.update(
            comparison=comparison,
            changes=[
                {"label": change.label, "diff_html": side_by_side(change.before, change.after)}
                for change in comparison.changed_fields
            ],
            files=file_views(comparison.files),
            permalink=f"{context['compare_url']}?from={comparison.before.number}"
            f"&to={comparison.after.number}",
        )
        return TemplateResponse(request, "admin/catalog/workspaceskill/compare.html", context)

    def revision_restore_view(self, request, skill_id, number):
        """An owner makes an earlier revision the latest again (a new, recorded edit)."""
        skill = self._history_skill(request, skill_id)
        head_before = skill.head_id
        try:
            require_owner(user=request.user, workspace=skill.workspace)
            revision = skill_restore(skill=skill, number=number, actor=request.user)
        except PixieError as exc:
            for problem in getattr(exc, "problems", [exc.message]):
                self.message_user(request, problem, messages.ERROR)
            return HttpResponseRedirect(
                reverse("admin:catalog_workspaceskill_text", args=[skill.pk, number])
            )
        if revision.pk == head_before:
            self.message_user(request, f"@{skill.slug} already holds revision {number}'s text.")
        else:
            self.message_user(
                request,
                f"@{skill.slug} revision {number} is restored as revision {revision.number}.",
                messages.SUCCESS,
            )
        return HttpResponseRedirect(reverse("admin:catalog_workspaceskill_change", args=[skill.pk]))
