"""A workspace skill's own pages: edit (a new revision), rename, and on or off the
planner's menu. Mixed into WorkspaceSkillAdmin; its history is in admin_skill_history."""

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse

from catalog.services.workspace_skills import skill_edit, skill_rename, skill_set_advertised
from catalog.validators import NAME_MAX, SKILL_DESCRIPTION_MAX
from pixie.core.errors import PixieError
from pixie.core.web.pages import WorkspacePages


class SkillEditForm(forms.Form):
    name = forms.CharField(max_length=NAME_MAX)
    short_description = forms.CharField(max_length=SKILL_DESCRIPTION_MAX, required=False)
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "cols": 100}))
    comment = forms.CharField(max_length=200, required=False, help_text="Why you changed it.")


class RenameForm(forms.Form):
    slug = forms.CharField(label="New slug", max_length=64)


def _skill_page(skill) -> str:
    return reverse("admin:catalog_workspaceskill_change", args=[skill.pk])


class SkillPages(WorkspacePages):
    def skill_urls(self):
        return [
            self.page_path(
                "<path:object_id>/rename/", self.rename_view, "catalog_workspaceskill_rename"
            ),
            self.page_path("<int:skill_id>/edit/", self.edit_view, "catalog_workspaceskill_edit"),
            self.page_path(
                "<int:skill_id>/advertise/",
                self.advertise_view,
                "catalog_workspaceskill_advertise",
                post_only=True,
            ),
        ]

    def edit_view(self, request, skill_id):
        skill = self.page_object(
            request, skill_id, self.get_queryset(request).select_related("head__upstream")
        )
        head = skill.head
        initial = {
            "name": head.name,
            "short_description": head.short_description,
            "body": head.body,
        }
        form = SkillEditForm(request.POST or None, initial=initial)
        refusal = self.owner_refusal(request, skill)
        if request.method == "POST" and not refusal and form.is_valid():
            data = form.cleaned_data
            try:
                revision = skill_edit(
                    skill=skill,
                    actor=request.user,
                    name=data["name"],
                    short_description=data["short_description"],
                    body=data["body"].replace("\r\n", "\n"),
                    comment=data["comment"],
                )
            except PixieError as exc:
                self.report(request, exc, form)
            else:
                if revision.pk == head.pk:  # the same text: skill_edit writes nothing
                    said = f"@{skill.slug} already reads like this: nothing was saved."
                    self.message_user(request, said, messages.WARNING)
                else:
                    said = f"@{skill.slug} saved as revision {revision.number}."
                    self.message_user(request, said, messages.SUCCESS)
                return HttpResponseRedirect(_skill_page(skill))
        return self.render_page(
            request,
            "admin/catalog/workspaceskill/edit.html",
            f"Edit @{skill.slug}",
            original=skill,
            skill=skill,
            form=form,
            refusal=refusal,
            forked_from=head.upstream,
        )

    def rename_view(self, request, object_id):
        skill = self.page_object(request, object_id)
        form = RenameForm(request.POST or None, initial={"slug": skill.slug})
        refusal = self.owner_refusal(request, skill)
        if request.method == "POST" and not refusal and form.is_valid():
            old = skill.slug
            try:
                rewritten = skill_rename(
                    skill=skill, new_slug=form.cleaned_data["slug"], actor=request.user
                )
            except PixieError as exc:
                self.report(request, exc)
            else:
                done = f"Renamed @{old} to @{skill.slug}."
                if rewritten:
                    mentions = ", ".join(f"@{slug}" for slug in rewritten)
                    done += f" Rewrote its mentions in {mentions}."
                messages.success(request, done)
                return HttpResponseRedirect(_skill_page(skill))
        return self.render_page(
            request,
            "admin/pixie/rename.html",
            f"Rename @{skill.slug}",
            original=skill,
            form=form,
            refusal=refusal,
        )

    def advertise_view(self, request, skill_id):
        skill = self.page_object(request, skill_id)
        wanted = request.POST.get("advertised") == "1"
        try:
            skill_set_advertised(skill=skill, advertised=wanted, actor=request.user)
        except PixieError as exc:
            self.report(request, exc)
        else:
            state = "is on the planner's menu" if wanted else "is off the planner's menu"
            self.message_user(request, f"@{skill.slug} {state}.", messages.SUCCESS)
        return HttpResponseRedirect(_skill_page(skill))
