"""Admin for sharing: contacts, the inbox (messages), and the review, import and
summary pages of a received share.

Pages are thin: each resolves what the user may see through the scoped admin
queryset (non-members get 404), calls one service, and shows the outcome or the
service's refusal as a message.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

from pixie.core.errors import PixieError
from pixie.core.models import Membership, Workspace
from pixie.core.people.permissions import sees_every_workspace
from pixie.core.web.admin_scoping import (
    MemberWorkspaceFilter,
    ServiceManagedAdmin,
    member_workspace_ids,
    owned_workspace_ids,
    person,
)
from pixie.core.web.pages import WorkspacePages, report
from pixie.core.web.whole_numbers import whole_number
from pixie.sharing import crypto
from pixie.sharing import services as svc
from pixie.sharing.identities import card_fingerprint
from pixie.sharing.letters import MAX_TEXT
from pixie.sharing.models import BlockedSender, Contact, Message


def inbox_url(workspace: Workspace) -> str:
    return reverse("admin:pixie_message_changelist") + f"?workspace={workspace.slug}"


def owned_workspaces(user):
    return Workspace.objects.filter(
        memberships__user=user, memberships__role=Membership.Role.OWNER
    ).order_by("name")


# --- contacts ---------------------------------------------------------------------


class ContactCardForm(forms.Form):
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none(), empty_label=None)
    card = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "class": "vLargeTextField"}),
        help_text="Paste the contact card they gave you (JSON).",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = owned_workspaces(user)


# Workspaces of this server offered at once; past that, the owner types the slug.
LOCAL_CHOICES = 200


class LocalContactForm(forms.Form):
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none(), empty_label=None)
    other = forms.SlugField(
        label="Their workspace's slug",
        max_length=64,
        help_text="A workspace its owners listed in this server's directory (on their "
        "contact card page), or one you own too. Otherwise, ask them for their contact card.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        owned = owned_workspaces(user)
        self.fields["workspace"].queryset = owned
        # The workspaces it may add, to pick from (for the first of the user's workspaces,
        # or the one asked for): listed in the directory, or the user's own.
        chosen = self.data.get("workspace") or self.initial.get("workspace")
        base = owned.filter(pk=whole_number(chosen) or 0).first() or owned.first()
        if base is None:
            return
        offered = svc.local_contact_choices(workspace=base, actor=user, limit=LOCAL_CHOICES + 1)
        if len(offered) <= LOCAL_CHOICES:
            self.fields["other"] = forms.ChoiceField(
                label="Their workspace",
                choices=[("", "Choose a workspace")]
                + [(w.slug, f"{w.name} ({w.slug})") for w in offered],
                help_text="Workspaces of this server their owners listed in its directory "
                "(on their contact card page), and those you own too. Not there? Ask them "
                "for their contact card.",
            )


class TextForm(forms.Form):
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "class": "vLargeTextField"}),
        max_length=MAX_TEXT,
        strip=False,
    )


@admin.register(Contact)
class ContactAdmin(WorkspacePages, ServiceManagedAdmin):
    # VersionAdmin names its own change list template; this one extends it.
    change_list_template = "admin/pixie/contact/change_list.html"
    list_display = ["name", "workspace", "remote_workspace", "inbox_url", "fingerprint"]
    list_filter = [MemberWorkspaceFilter]
    list_select_related = ["workspace"]
    search_fields = ["name", "remote_workspace"]
    fields = ["workspace", "name", "remote_workspace", "inbox_url", "fingerprint", "added"]
    readonly_fields = fields

    @admin.display(description="Added by")
    def added(self, contact):
        return person(contact.added_by)

    @admin.display(description="Fingerprint")
    def fingerprint(self, contact):
        return crypto.fingerprint(
            crypto.key_from_b64(contact.signing_public_key),
            crypto.key_from_b64(contact.box_public_key),
        )

    def get_urls(self):
        page = self.page_path
        return [
            page("add-card/", self.add_card_view, "pixie_contact_add_card"),
            page("add-local/", self.add_local_view, "pixie_contact_add_local"),
            page("our-card/", self.our_card_view, "pixie_contact_our_card"),
            page(
                "our-card/<int:workspace_id>/directory/",
                self.directory_view,
                "pixie_contact_directory",
                post_only=True,
            ),  # fmt: skip
            page("<path:object_id>/message/", self.message_view, "pixie_contact_message"),
            *super().get_urls(),
        ]

    def _added(self, request, contact):
        messages.success(request, f"{contact.name} is now one of {contact.workspace}'s contacts.")
        # Back where the person came from (a share's review), if it is one of our pages.
        back = request.POST.get("next") or request.GET.get("next") or ""
        if back and url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return HttpResponseRedirect(back)
        return HttpResponseRedirect(reverse("admin:pixie_contact_changelist"))

    def add_card_view(self, request):
        return self._add_view(
            request,
            ContactCardForm,
            "Add a contact from their card",
            lambda data: svc.contact_card_import(
                workspace=data["workspace"], card=data["card"], actor=request.user
            ),
        )

    def add_local_view(self, request):
        return self._add_view(
            request,
            LocalContactForm,
            "Add a workspace on this server",
            lambda data: svc.contact_add_local(
                workspace=data["workspace"], other_slug=data["other"], actor=request.user
            ),
        )

    def _add_view(self, request, form_class, title, add):
        initial = {"workspace": request.GET.get("workspace")}
        form = form_class(request.POST or None, user=request.user, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                contact = add(form.cleaned_data)
            except PixieError as exc:
                report(request, exc)
            else:
                return self._added(request, contact)
        return self.render_page(request, "admin/pixie/contact/add.html", title, form=form)

    def our_card_view(self, request):
        # Members only, superusers included: showing a card makes the workspace's keys.
        workspaces = Workspace.objects.filter(id__in=member_workspace_ids(request.user))
        owned = set(owned_workspace_ids(request.user))
        cards = []
        for workspace in workspaces:
            card = svc.contact_card_export(workspace=workspace)
            fingerprint = card_fingerprint(next(iter(card.values())))
            shown = json.dumps(card, indent=2)
            cards.append((workspace, shown, fingerprint, workspace.pk in owned))
        return self.render_page(
            request, "admin/pixie/contact/our_card.html", "Your contact cards", cards=cards
        )

    def directory_view(self, request, workspace_id):
        """List a workspace in this server's directory, or take it out (its owners)."""
        workspace = Workspace.objects.filter(
            id=workspace_id, id__in=member_workspace_ids(request.user)
        ).first()
        if workspace is None:
            raise Http404("No such workspace.")
        listed = request.POST.get("listed") == "yes"
        try:
            svc.directory_listing_set(workspace=workspace, listed=listed, actor=request.user)
        except PixieError as exc:
            report(request, exc)
        else:
            if listed:
                messages.success(request, f"{workspace.name} is listed in this server's "
                                 "directory: owners of other workspaces here can add it by its "
                                 f"slug, {workspace.slug}.")  # fmt: skip
            else:
                messages.success(request, f"{workspace.name} is no longer listed in this "
                                 "server's directory; contacts made before stay.")  # fmt: skip
        return HttpResponseRedirect(reverse("admin:pixie_contact_our_card"))

    def message_view(self, request, object_id):
        contact = self.page_object(request, object_id)
        form = TextForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                svc.text_send(
                    workspace=contact.workspace,
                    contact=contact,
                    text=form.cleaned_data["text"],
                    actor=request.user,
                )
            except PixieError as exc:
                report(request, exc)
            else:
                messages.success(request, f"Message sent to {contact.name}.")
                return HttpResponseRedirect(inbox_url(contact.workspace))
        return self.render_page(
            request,
            "admin/pixie/contact/add.html",
            f"Send a message to {contact.name}",
            form=form,
            original=contact,
        )


# --- the inbox --------------------------------------------------------------------


class BlockForm(forms.Form):
    delete_pending = forms.BooleanField(
        required=False,
        initial=True,
        label="Also delete the messages from this sender that nobody has reviewed",
    )


INBOX_STATES_SHOWN = 20


@admin.register(Message)
class MessageAdmin(WorkspacePages, ServiceManagedAdmin):
    # VersionAdmin names its own change list template; this one extends it.
    change_list_template = "admin/pixie/message/change_list.html"
    change_form_template = "admin/pixie/message/change_form.html"
    list_display = ["created_at", "workspace", "correspondent", "content", "delivery_state"]
    list_display_links = ["created_at"]
    list_filter = [MemberWorkspaceFilter, "direction"]
    list_select_related = ["workspace", "contact", "share_import"]
    list_per_page = 50
    actions = ["retry_dispatch", "keep_received", "delete_received"]
    owner_actions = ("keep_received", "delete_received")
    fields = [
        "workspace",
        "created_at",
        "correspondent",
        "full_content",
        "delivery_state",
        "review_state",
    ]
    readonly_fields = fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not owned_workspace_ids(request.user):  # offer members nothing they may not do
            for name in self.owner_actions:
                actions.pop(name, None)
        return actions

    def _inbox_states(self, request) -> list:
        workspaces = Workspace.objects.filter(id__in=member_workspace_ids(request.user))
        chosen = request.GET.get("workspace")
        if chosen:
            workspaces = Workspace.objects.filter(slug=chosen)
            if not sees_every_workspace(request.user):
                workspaces = workspaces.filter(id__in=member_workspace_ids(request.user))
        return svc.inbox_states(workspaces=list(workspaces.order_by("name")[:INBOX_STATES_SHOWN]))

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "inbox_states": self._inbox_states(request)}
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            # Open the whole page at once (two queries), before the rows render.
            page_messages = list(changelist.result_list)
            for opened in svc.messages_open(messages=page_messages):
                opened.message.opened = opened
        return response

    def get_object(self, request, object_id, from_field=None):
        message = super().get_object(request, object_id, from_field)
        if message is not None:
            message.opened = svc.message_open(message=message)
        return message

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["can_block"] = self.is_owner(request, obj) and svc.may_block(obj.opened)
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.display(description="Review")
    def review_state(self, message):
        if message.direction != Message.Direction.INCOMING:
            return "—"
        if message.reviewed_at is None:
            if message.from_contact:
                return "Not reviewed yet"
            return "Not reviewed yet; from an unknown sender, so it expires unless kept"
        return f"Reviewed {message.reviewed_at:%Y-%m-%d %H:%M}"

    @admin.display(description="From / to")
    def correspondent(self, message):
        return message.opened.correspondent

    @admin.display(description="Message")
    def content(self, message):
        return self._render(message, whole=False)

    @admin.display(description="Message")
    def full_content(self, message):
        return self._render(message, whole=True)

    def _render(self, message, *, whole: bool):
        opened = message.opened
        review = reverse("admin:pixie_message_review", args=[message.pk])
        return render_to_string(
            "admin/pixie/message/card.html",
            {"opened": opened, "review_url": review, "whole": whole},
        )

    @admin.display(description="Delivery")
    def delivery_state(self, message):
        if message.direction != Message.Direction.OUTGOING:
            return "—"
        if message.delivery == Message.Delivery.FAILED:
            problem = message.opened.dispatch_problem
            return format_html("{}: {}", message.get_delivery_display(), problem)
        return message.get_delivery_display()

    @admin.action(description="Try again to deliver the selected messages")
    def retry_dispatch(self, request, queryset):
        retried = 0
        for message in queryset.filter(delivery=Message.Delivery.FAILED):
            try:
                svc.message_retry(message=message, actor=request.user)
                retried += 1
            except PixieError as exc:
                report(request, exc)
        if retried:
            messages.info(request, f"Delivery tried again for {retried:,} message(s).")
        else:
            messages.warning(
                request, "None of the selected messages had failed: nothing was tried again."
            )

    @admin.action(description="Keep the selected received messages (they stop counting as pending)")
    def keep_received(self, request, queryset):
        self._per_workspace(
            request,
            queryset,
            svc.messages_keep,
            "Kept {} received message(s).",
            "None of the selected messages was a received one waiting for review: nothing "
            "was kept.",
        )

    @admin.action(description="Delete the selected received messages")
    def delete_received(self, request, queryset):
        self._per_workspace(
            request,
            queryset,
            svc.messages_delete,
            "Deleted {} received message(s).",
            "None of the selected messages was a received one: nothing was deleted.",
        )

    def _per_workspace(self, request, queryset, service, done: str, none: str):
        chosen = list(queryset.filter(direction=Message.Direction.INCOMING))
        by_workspace: dict[int, list[Message]] = {}
        for message in chosen:
            by_workspace.setdefault(message.workspace_id, []).append(message)
        count = 0
        for selected in by_workspace.values():
            try:
                count += service(
                    workspace=selected[0].workspace, messages=selected, actor=request.user
                )
            except PixieError as exc:
                report(request, exc)
        if count:
            messages.info(request, done.format(f"{count:,}"))
        else:
            messages.warning(request, none)

    def get_urls(self):
        page, message = self.page_path, "<path:object_id>"
        return [
            page(f"{message}/block/", self.block_view, "pixie_message_block"),
            page(f"{message}/review/", self.review_view, "pixie_message_review"),
            page(f"{message}/import/", self.import_view, "pixie_message_import", post_only=True),
            page(
                f"{message}/add-sender/",
                self.add_sender_view,
                "pixie_message_add_sender",
                post_only=True,
            ),
            page(f"{message}/summary/", self.summary_view, "pixie_message_summary"),
            *super().get_urls(),
        ]

    def _message(self, request, object_id) -> Message:
        message = self.page_object(request, object_id)
        message.opened = svc.message_open(message=message)
        return message

    def block_view(self, request, object_id):
        message = self._message(request, object_id)
        workspace = message.workspace
        opened = message.opened
        # Only a sender the message names can be blocked; only an owner blocks.
        if not svc.may_block(opened):
            raise Http404("This message has no sender to block.")
        form = BlockForm(request.POST or None)
        refusal = self.owner_refusal(request, message)
        if request.method == "POST" and not refusal and form.is_valid():
            try:
                result = svc.sender_block(
                    workspace=workspace,
                    opened=opened,
                    delete_pending=form.cleaned_data["delete_pending"],
                    actor=request.user,
                )
            except PixieError as exc:
                report(request, exc)
            else:
                messages.success(
                    request,
                    f"“{result.blocked.claimed_name}” is blocked: {workspace.name}'s inbox will "
                    f"drop their messages without keeping them. {result.deleted} unreviewed "
                    "message(s) from them deleted.",
                )
                return HttpResponseRedirect(inbox_url(workspace))
        pending = svc.pending_from(workspace=workspace, sender_tag=message.sender_tag).count()
        return self.render_page(
            request,
            "admin/pixie/message/block.html",
            f"Block “{opened.claimed_name}”?",
            form=form,
            refusal=refusal,
            opened=opened,
            pending=pending,
            original=message,
            cancel_url=reverse("admin:pixie_message_change", args=[message.pk]),
        )

    def review_view(self, request, object_id):
        message = self._message(request, object_id)
        workspace = message.workspace
        role = self.workspace_role(request, message)
        try:
            review = svc.share_review(workspace=workspace, message=message, role=role)
        except PixieError:
            raise Http404("This message carries no skill share.") from None
        return self.render_page(
            request,
            "admin/pixie/message/review.html",
            f"Review “{review.share.skill.name}”",
            review=review,
            original=message,
            cancel_url=inbox_url(workspace),
            is_owner=role == Membership.Role.OWNER,
            can_block=role == Membership.Role.OWNER and svc.may_block(review.opened),
        )

    def import_view(self, request, object_id):
        message = self._message(request, object_id)
        try:
            svc.share_import(workspace=message.workspace, message=message, actor=request.user)
        except PixieError as exc:
            report(request, exc)
            return HttpResponseRedirect(reverse("admin:pixie_message_review", args=[message.pk]))
        return HttpResponseRedirect(reverse("admin:pixie_message_summary", args=[message.pk]))

    def add_sender_view(self, request, object_id):
        """The review page's "Add this sender as a contact": in one click for a workspace
        of this server (it holds its keys), else once the owner has ticked that they
        compared the fingerprint; back to the review either way."""
        message = self._message(request, object_id)
        back = HttpResponseRedirect(reverse("admin:pixie_message_review", args=[message.pk]))
        opened = message.opened
        if opened.local is None and not request.POST.get("compared"):
            messages.error(
                request,
                "Tick that you compared the fingerprint with the sender's card first: "
                "nothing was added.",
            )
            return back
        try:
            if opened.local is not None:
                contact = svc.contact_add_local_sender(opened=opened, actor=request.user)
            else:
                contact = svc.contact_add_from_message(
                    opened=opened,
                    fingerprint=request.POST.get("fingerprint", ""),
                    actor=request.user,
                )
        except PixieError as exc:
            report(request, exc)
        else:
            messages.success(
                request, f"{contact.name} is now one of {contact.workspace}'s contacts."
            )
        return back

    def summary_view(self, request, object_id):
        message = self._message(request, object_id)
        share_import = getattr(message, "share_import", None)
        if share_import is None:
            return HttpResponseRedirect(reverse("admin:pixie_message_review", args=[message.pk]))
        outcome = share_import.outcome
        skills_url = reverse("admin:catalog_workspaceskill_changelist")
        return self.render_page(
            request,
            "admin/pixie/message/summary.html",
            "Imported",
            original=message,
            outcome=outcome,
            lines=svc.outcome_lines(outcome),
            skills_url=f"{skills_url}?workspace={message.workspace.slug}&advertised__exact=0",
            inbox_url=inbox_url(message.workspace),
        )


@admin.register(BlockedSender)
class BlockedSenderAdmin(ServiceManagedAdmin):
    list_display = ["claimed_name", "fingerprint", "workspace", "blocked_by", "created_at"]
    list_filter = [MemberWorkspaceFilter]
    list_select_related = ["workspace", "blocked_by"]
    fields = ["workspace", "claimed_name", "fingerprint", "blocked", "created_at"]
    readonly_fields = fields

    @admin.display(description="Blocked by")
    def blocked(self, sender):
        return person(sender.blocked_by)

    actions = ["unblock"]

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not owned_workspace_ids(request.user):
            actions.pop("unblock", None)
        return actions

    @admin.action(description="Unblock the selected senders")
    def unblock(self, request, queryset):
        unblocked = 0
        for blocked in queryset.select_related("workspace"):
            try:
                svc.sender_unblock(blocked=blocked, actor=request.user)
                unblocked += 1
            except PixieError as exc:
                report(request, exc)
        messages.info(request, f"{unblocked} sender(s) unblocked; their messages arrive again.")
