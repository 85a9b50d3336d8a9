"""A workspace skill's "Share with a contact" page.

Sharing sits above catalog, so catalog cannot import it: this module adds the page to
catalog.admin.registered.WorkspaceSkillAdmin through its ``extra_pages`` hook.
"""

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect

from catalog.admin.registered import WorkspaceSkillAdmin
from pixie.core.errors import PixieError
from pixie.sharing import crypto
from pixie.sharing import services as svc
from pixie.sharing.models import Contact

from .inbox import inbox_url

PICKER_FOOTER = (
    "The skill and every skill it references travel end-to-end encrypted as a message. "
    "They'll review it before anything is added on their side."
)


class ContactChoiceForm(forms.Form):
    contact = forms.ModelChoiceField(
        queryset=Contact.objects.none(), widget=forms.RadioSelect, empty_label=None
    )

    def __init__(self, *args, contacts, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["contact"]
        field.queryset = contacts
        field.label_from_instance = lambda contact: (
            f"{contact.name} — {contact.remote_workspace} · "
            + crypto.fingerprint(
                crypto.key_from_b64(contact.signing_public_key),
                crypto.key_from_b64(contact.box_public_key),
            )
        )


def skill_sharing_urls(model_admin) -> list:
    def share(request, object_id):
        return share_view(model_admin, request, object_id)

    return [model_admin.page_path("<path:object_id>/share/", share, "catalog_workspaceskill_share")]


def share_view(model_admin, request, object_id):
    skill = model_admin.page_object(request, object_id)
    workspace = skill.workspace
    contacts = Contact.objects.filter(workspace=workspace).order_by("name")
    form = ContactChoiceForm(request.POST or None, contacts=contacts)
    refusal = model_admin.owner_refusal(request, skill)
    preview = None
    if not refusal:
        try:
            preview = svc.share_preview(workspace=workspace, skill=skill)
        except PixieError as exc:
            refusal = exc.message
    problems = preview.problems if preview else []
    if request.method == "POST" and not refusal and not problems and form.is_valid():
        contact = form.cleaned_data["contact"]
        try:
            svc.share_send(workspace=workspace, skill=skill, contact=contact, actor=request.user)
        except PixieError as exc:
            model_admin.report(request, exc)
        else:
            messages.success(request, f"You shared @{skill.slug} with {contact.name}.")
            return HttpResponseRedirect(inbox_url(workspace))
    return model_admin.render_page(
        request,
        "admin/pixie/share_picker.html",
        f"Share @{skill.slug} with a contact",
        original=skill,
        form=form,
        has_contacts=contacts.exists(),
        refusal=refusal,
        preview=preview,
        problems=problems,
        files_stay=svc.FILES_STAY,
        footer=PICKER_FOOTER,
    )


WorkspaceSkillAdmin.extra_pages.append(skill_sharing_urls)
