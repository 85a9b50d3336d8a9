"""The workspace's people, as pages: its members and roles (owners change them), the
tokens that reach it (owners revoke them), and each person's own API tokens.

Mixed into WorkspaceAdmin. Every action is a service call (pixie.core.people.members,
pixie.core.people.tokens);
a refusal is shown on the page and changes nothing.
"""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet
from django.shortcuts import redirect

from pixie.core.errors import PixieError, ValidationFailed
from pixie.core.models import ApiToken, Membership, Workspace
from pixie.core.people.invitations import invitation_make, invitation_revoke, invitations_waiting
from pixie.core.people.members import (
    member_add,
    member_remove,
    member_role_change,
    members_of,
    memberships_keep_an_owner,
    site_url_for,
)
from pixie.core.people.tokens import token_create, token_revoke, tokens_of_workspace


class InviteForm(forms.Form):
    email = forms.EmailField(
        label="Email address",
        help_text="You get a one-time link to give them (Pixie sends nothing). They join "
        "with the login they have, or make one of their own.",
    )
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class AddMemberForm(forms.Form):
    """A new login made for someone (an existing one joins by invitation)."""

    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)
    email = forms.EmailField(required=False, label="Email")


class TokenForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="What or who uses it, e.g. “CI deploy”.")
    workspace = forms.ModelChoiceField(
        queryset=Workspace.objects.none(),
        required=False,
        empty_label="Every workspace I belong to",
        help_text="Limit the token to one workspace.",
    )
    read_only = forms.BooleanField(
        required=False, label="Read-only", help_text="It reads, and changes nothing."
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = Workspace.objects.filter(memberships__user=user)


class MembershipFormSet(BaseInlineFormSet):
    """The members inline of a workspace's change page (superusers edit there): the rule
    of the members page holds, a workspace keeps an owner. Its rows are saved in the
    admin's transaction, which the check's lock of the workspace row lasts until."""

    def clean(self):
        super().clean()
        if self.instance.pk is None or any(self.errors):
            return
        owner = Membership.Role.OWNER
        leaving, arriving = [], False
        for form in self.forms:
            if not form.has_changed() and form.instance.pk is None:
                continue  # an empty extra row
            was_owner = form.instance.pk is not None and form.initial.get("role") == owner
            stays_owner = not form.cleaned_data.get("DELETE", False) and (
                form.cleaned_data.get("role") == owner
            )
            if was_owner and not stays_owner:
                leaving.append(form.instance.pk)
            arriving = arriving or (stays_owner and not was_owner)
        try:
            memberships_keep_an_owner(
                workspace=self.instance, leaving_ids=leaving, owners_arriving=arriving
            )
        except PixieError as exc:
            raise ValidationError(exc.message, code=exc.code) from exc


def _only_owner(workspace) -> int | None:
    """The user id of the workspace's one owner, if it has one only: that row offers no
    role change or removal (the service refuses both; the page does not offer them)."""
    owners = list(
        workspace.memberships.filter(role=Membership.Role.OWNER).values_list("user_id", flat=True)[
            :2
        ]
    )
    return owners[0] if len(owners) == 1 else None


def _add_or_invite(request, workspace, action: str, shown: dict) -> None:
    """Make a login and add it, or invite someone: the one-time link goes in ``shown``."""
    if action == "add":
        shown["form"] = form = AddMemberForm(request.POST)
        if not form.is_valid():  # its fields say what is wrong
            raise _Invalid
        added = member_add(
            workspace=workspace, actor=request.user, site_url=site_url_for(request),
            **form.cleaned_data,
        )  # fmt: skip
        shown["password_link"] = added.password_link
        role = "an owner" if added.membership.role == Membership.Role.OWNER else "a member"
        username = added.membership.user.username
        messages.success(request, f"{username} is now {role} of {workspace.name}.")
        shown["form"] = AddMemberForm()
        return
    shown["invite_form"] = invite_form = InviteForm(request.POST, prefix="invite")
    if not invite_form.is_valid():
        raise _Invalid
    invited = invitation_make(
        workspace=workspace, actor=request.user, site_url=site_url_for(request),
        **invite_form.cleaned_data,
    )  # fmt: skip
    shown["invitation_link"] = invited.link
    messages.success(request, f"Invited {invited.invitation.email}.")
    shown["invite_form"] = InviteForm(prefix="invite")


def _member_change(request, workspace, action: str, shown: dict) -> None:
    """Revoke an invitation, change a role, remove someone (asked first), revoke a
    token; each refusal a PixieError."""
    actor, posted = request.user, request.POST
    username = posted.get("username", "")
    if action == "uninvite":
        revoked = invitation_revoke(
            workspace=workspace, actor=actor, invitation_id=_int(posted.get("invitation"))
        )
        messages.success(request, f"Revoked the invitation of {revoked.email}.")
    elif action == "role":
        role = posted.get("role", "")
        member_role_change(workspace=workspace, actor=actor, username=username, role=role)
        said = "an owner" if role == Membership.Role.OWNER else "a member"
        messages.success(request, f"{username} is now {said} of {workspace.name}.")
    elif action == "remove" and posted.get("confirmed") != "yes":
        # Asked first, on this page: who it is, and what they lose.
        if not workspace.memberships.filter(user__username=username).exists():
            raise ValidationFailed(f"{username[:150]!r} is not in {workspace.name}")
        shown["confirm_remove"] = username
    elif action == "remove":
        member_remove(workspace=workspace, actor=actor, username=username)
        messages.success(request, f"{username} no longer belongs to {workspace.name}.")
    elif action == "revoke":
        token = tokens_of_workspace(workspace).filter(pk=_int(posted.get("token"))).first()
        if token is None:
            raise ValidationFailed(
                "That token is not limited to this workspace (or is revoked already)"
            )
        token_revoke(token=token, actor=actor, workspace=workspace)
        messages.success(request, f"Revoked {token.user.username}'s token {token}.")
    else:
        raise ValidationFailed(f"Unknown action {action[:20]!r}")


class MembersPages:
    """Pages of WorkspaceAdmin (a WorkspacePages)."""

    def members_urls(self):
        return [
            self.page_path(
                "<int:workspace_id>/members/", self.members_view, "pixie_workspace_members"
            ),
            self.page_path("tokens/", self.my_tokens_view, "pixie_my_tokens"),
        ]

    def members_view(self, request, workspace_id):
        workspace = self.page_object(request, workspace_id)
        is_owner = self.is_owner(request, workspace)
        # What the page shows besides the lists: the two forms, a one-time link (this
        # answer only), the removal it asks to confirm.
        shown = {
            "form": AddMemberForm(),
            "invite_form": InviteForm(prefix="invite"),
            "password_link": None,
            "invitation_link": None,
            "confirm_remove": "",
        }
        if request.method == "POST" and not is_owner:
            messages.error(request, self.owner_refusal(request, workspace))
        elif request.method == "POST":
            action = request.POST.get("action", "")
            try:
                if action in ("add", "invite"):
                    _add_or_invite(request, workspace, action, shown)
                else:
                    _member_change(request, workspace, action, shown)
            except _Invalid:
                pass
            except PixieError as exc:
                form = {"add": shown["form"], "invite": shown["invite_form"]}.get(action)
                self.report(request, exc, form)
            else:
                stays = ("password_link", "invitation_link", "confirm_remove")
                if not any(shown[key] for key in stays):
                    return redirect("admin:pixie_workspace_members", workspace.pk)
        response = self.render_page(
            request,
            "admin/pixie/workspace/members.html",
            f"People of {workspace.name}",
            workspace=workspace,
            original=workspace,
            is_owner=is_owner,
            refusal=self.owner_refusal(request, workspace),
            members=members_of(workspace),
            roles=Membership.Role.choices,
            only_owner=_only_owner(workspace),
            tokens=tokens_of_workspace(workspace) if is_owner else [],
            invitations=invitations_waiting(workspace) if is_owner else [],
            **shown,
        )
        response["Cache-Control"] = "no-store"  # a one-time link may be on it
        return response

    def my_tokens_view(self, request):
        user = request.user
        form = TokenForm(user=user)
        secret = made = None
        if request.method == "POST":
            action = request.POST.get("action", "")
            try:
                if action == "make":
                    form = TokenForm(request.POST, user=user)
                    if not form.is_valid():  # its fields say what is wrong
                        raise _Invalid
                    made, secret = token_create(user=user, actor=user, **form.cleaned_data)
                    form = TokenForm(user=user)
                elif action == "revoke":
                    token = ApiToken.objects.filter(
                        user=user, pk=_int(request.POST.get("token"))
                    ).first()
                    if token is None:
                        raise ValidationFailed("No such token of yours")
                    token_revoke(token=token, actor=user)
                    messages.success(request, f"Revoked {token}: it fails from the next request.")
                    return redirect("admin:pixie_my_tokens")
                else:
                    raise ValidationFailed(f"Unknown action {action[:20]!r}")
            except _Invalid:
                pass
            except PixieError as exc:
                self.report(request, exc, form if action == "make" else None)
        response = self.render_page(
            request,
            "admin/pixie/workspace/my_tokens.html",
            "Your API tokens",
            tokens=ApiToken.objects.filter(user=user).select_related("workspace"),
            form=form,
            made=made,
            secret=secret,
        )
        response["Cache-Control"] = "no-store"  # the secret is on this answer only
        return response


def _int(value) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


class _Invalid(Exception):
    """A form's own fields refused the input; the page shows them."""
