"""A workspace skill's own pages: edit (a new revision), rename, promote. Its history is in
admin_skill_history."""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from pixie.admin_pages import page, report
from pixie.errors import PixieError
from pixie.models import Membership
from pixie.permissions import role_in

from .models import WorkspaceSkill
from .services.workspace_skills import skill_edit, skill_rename, skill_set_advertised
from .validators import NAME_MAX, SKILL_DESCRIPTION_MAX


class SkillEditForm(forms.Form):
    name = forms.CharField(max_length=NAME_MAX)
    short_description = forms.CharField(max_length=SKILL_DESCRIPTION_MAX, required=False)
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "cols": 100}))
    comment = forms.CharField(max_length=200, required=False, help_text="Why you changed it.")


class RenameForm(forms.Form):
    slug = forms.CharField(label="New slug", max_length=64)


def skill_edit_urls(model_admin):
    def edit_view(request, skill_id):
        skill = get_object_or_404(
            WorkspaceSkill.objects.select_related("workspace", "head__upstream"), pk=skill_id
        )
        if role_in(user=request.user, workspace=skill.workspace) != Membership.Role.OWNER:
            raise Http404("No such skill.")
        head = skill.head
        initial = {
            "name": head.name,
            "short_description": head.short_description,
            "body": head.body,
        }
        form = SkillEditForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
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
                for problem in getattr(exc, "problems", [exc.message]):
                    form.add_error(None, problem)
            else:
                model_admin.message_user(
                    request, f"@{skill.slug} saved as revision {revision.number}.", messages.SUCCESS
                )
                return HttpResponseRedirect(
                    reverse("admin:catalog_workspaceskill_change", args=[skill.pk])
                )
        context = {
            **model_admin.admin_site.each_context(request),
            "title": f"Edit @{skill.slug}",
            "skill": skill,
            "form": form,
            "forked_from": head.upstream,
            "opts": model_admin.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/workspaceskill/edit.html", context)

    @require_POST
    def advertise_view(request, skill_id):
        skill = get_object_or_404(WorkspaceSkill.objects.select_related("workspace"), pk=skill_id)
        if role_in(user=request.user, workspace=skill.workspace) is None:
            raise Http404("No such skill.")
        wanted = request.POST.get("advertised") == "1"
        try:
            skill_set_advertised(skill=skill, advertised=wanted, actor=request.user)
        except PixieError as exc:
            model_admin.message_user(request, exc.message, messages.ERROR)
        else:
            state = "is on the planner's menu" if wanted else "is off the planner's menu"
            model_admin.message_user(request, f"@{skill.slug} {state}.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:catalog_workspaceskill_change", args=[skill.pk]))

    def rename_view(request, object_id):
        skill = model_admin.get_object(request, object_id)
        if skill is None:
            raise Http404("No such skill.")
        form = RenameForm(request.POST or None, initial={"slug": skill.slug})
        refusal = ""
        if role_in(user=request.user, workspace=skill.workspace) != Membership.Role.OWNER:
            refusal = f"Only an owner of {skill.workspace.name} can do this."
        if request.method == "POST" and not refusal and form.is_valid():
            old = skill.slug
            try:
                rewritten = skill_rename(
                    skill=skill, new_slug=form.cleaned_data["slug"], actor=request.user
                )
            except PixieError as exc:
                report(request, exc)
            else:
                done = f"Renamed @{old} to @{skill.slug}."
                if rewritten:
                    done += " Rewrote its mentions in " + ", ".join(f"@{s}" for s in rewritten)
                    done += "."
                messages.success(request, done)
                change = reverse("admin:catalog_workspaceskill_change", args=[skill.pk])
                return HttpResponseRedirect(change)
        return page(
            model_admin,
            request,
            "admin/pixie/rename.html",
            f"Rename @{skill.slug}",
            original=skill,
            form=form,
            refusal=refusal,
        )

    view = model_admin.admin_site.admin_view
    return [
        path("<path:object_id>/rename/", view(rename_view), name="catalog_workspaceskill_rename"),
        path("<int:skill_id>/edit/", view(edit_view), name="catalog_workspaceskill_edit"),
        path(
            "<int:skill_id>/advertise/",
            view(advertise_view),
            name="catalog_workspaceskill_advertise",
        ),
    ]
