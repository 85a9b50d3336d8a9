"""A workspace skill's history in the admin: one revision whole, and any two compared.

Mixed into WorkspaceSkillAdmin. Whoever may open the skill (its workspace's members;
auditors and superusers) may read its history, and so may operators, who read every
workspace's history but not its other pages (pixie.core.people.permissions.reads_every_history);
anyone else meets a 404. The one write is an owner's restore, through skill_restore.
"""

from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse

from catalog.content_diff import frontmatter_text
from catalog.diff_display import file_views, side_by_side
from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_restore
from catalog.skill_files_display import file_rows
from catalog.skill_history import (
    RevisionMissing,
    revision_compare,
    revision_get,
    revision_number,
    revision_summaries,
)
from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.people.permissions import reads_every_history, require_owner
from pixie.core.web.pages import WorkspacePages


class SkillHistoryPages(WorkspacePages):
    def history_urls(self):
        return [
            self.page_path(
                "<int:skill_id>/revision/<int:number>/",
                self.revision_text_view,
                "catalog_workspaceskill_text",
            ),
            self.page_path(
                "<int:skill_id>/compare/",
                self.revision_compare_view,
                "catalog_workspaceskill_compare",
            ),
            self.page_path(
                "<int:skill_id>/revision/<int:number>/restore/",
                self.revision_restore_view,
                "catalog_workspaceskill_restore",
                post_only=True,
            ),
        ]

    def _history_skill(self, request, skill_id):
        skills = self.get_queryset(request)
        if reads_every_history(request.user):
            skills = WorkspaceSkill.objects.all()
        return self.page_object(request, skill_id, skills.select_related("head"))

    def _history_page(self, request, template: str, skill, title: str, **context):
        compare_url = reverse("admin:catalog_workspaceskill_compare", args=[skill.pk])
        # Its reader may read this history without opening the skill's own page.
        history_only = not self.get_queryset(request).filter(pk=skill.pk).exists()
        return self.render_page(
            request,
            template,
            title,
            skill=skill,
            compare_url=compare_url,
            history_only=history_only,
            **context,
        )

    def revision_text_view(self, request, skill_id, number):
        skill = self._history_skill(request, skill_id)
        try:
            revision = revision_get(skill=skill, number=number)
        except RevisionMissing as exc:
            raise Http404(exc.message) from None
        return self._history_page(
            request,
            "admin/catalog/workspaceskill/revision.html",
            skill,
            f"@{skill.slug} revision {revision.number}",
            revision=revision,
            is_head=revision.pk == skill.head_id,
            head_number=skill.head.number if skill.head_id else None,
            is_owner=self.is_owner(request, skill),
            frontmatter=frontmatter_text(revision.frontmatter, revision.approvals),
            files=file_rows(revision.files.all()),
        )

    def revision_compare_view(self, request, skill_id):
        skill = self._history_skill(request, skill_id)
        template = "admin/catalog/workspaceskill/compare.html"
        title = f"Compare revisions of @{skill.slug}"
        compare_url = reverse("admin:catalog_workspaceskill_compare", args=[skill.pk])
        context = {"revisions": list(revision_summaries(skill))}
        try:
            comparison = revision_compare(
                skill=skill,
                before=revision_number(request.GET.get("from"), "from"),
                after=revision_number(request.GET.get("to"), "to"),
            )
        except ValidationFailed as exc:  # a number that names no revision, or no number
            context["problems"] = exc.problems
            return self._history_page(request, template, skill, title, **context)
        context.update(
            comparison=comparison,
            changes=[
                {"label": change.label, "diff_html": side_by_side(change.before, change.after)}
                for change in comparison.changed_fields
            ],
            files=file_views(comparison.files),
            permalink=f"{compare_url}?from={comparison.before.number}"
            f"&to={comparison.after.number}",
        )
        return self._history_page(request, template, skill, title, **context)

    def revision_restore_view(self, request, skill_id, number):
        """An owner makes an earlier revision the latest again (a new, recorded edit)."""
        skill = self._history_skill(request, skill_id)
        head_before = skill.head_id
        try:
            require_owner(user=request.user, workspace=skill.workspace)
            revision = skill_restore(skill=skill, number=number, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
            return HttpResponseRedirect(
                reverse("admin:catalog_workspaceskill_text", args=[skill.pk, number])
            )
        if revision.pk == head_before:
            self.message_user(
                request,
                f"@{skill.slug} already holds revision {number}'s text: nothing was restored.",
                messages.WARNING,
            )
        else:
            self.message_user(
                request,
                f"@{skill.slug} revision {number} is restored as revision {revision.number}.",
                messages.SUCCESS,
            )
        return HttpResponseRedirect(reverse("admin:catalog_workspaceskill_change", args=[skill.pk]))
