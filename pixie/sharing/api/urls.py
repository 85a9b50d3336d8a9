"""API routes for contacts, messages and shares, and the public server-to-server inbox."""

from django.urls import path

from pixie.sharing.api import views as api

W = "workspaces/<slug:workspace>"

urlpatterns = [
    path("inbox/", api.inbox, name="sharing-inbox"),
    path(f"{W}/card/", api.ContactCard.as_view(), name="contact-card"),
    path(f"{W}/contacts/", api.ContactList.as_view(), name="contact-list"),
    path(f"{W}/directory/", api.DirectoryListing.as_view(), name="directory-listing"),
    path(f"{W}/messages/", api.MessageList.as_view(), name="message-list"),
    path(f"{W}/inbox/", api.InboxStatus.as_view(), name="inbox-status"),
    path(f"{W}/shares/", api.ShareSend.as_view(), name="share-send"),
    path(f"{W}/messages/<int:pk>/review/", api.ShareReview.as_view(), name="share-review"),
    path(f"{W}/messages/<int:pk>/import/", api.ShareImport.as_view(), name="share-import"),
    path(f"{W}/messages/<int:pk>/add-sender/", api.AddSender.as_view(), name="add-sender"),
    path(f"{W}/skills/<slug:skill>/rename/", api.SkillRename.as_view(), name="skill-rename"),
]
