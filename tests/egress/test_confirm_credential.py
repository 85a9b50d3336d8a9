"""Confirming a credential is supplied is one button beside it, for its workspace's
owners: on the workspace home, in the list and on its page, each back where the owner
was; a member is offered none and a post of theirs changes nothing."""

import pytest
from django.urls import reverse

from egress.models import CredentialRequirement
from pixie.core.models import AuditEntry
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def needed(acme):
    return [
        CredentialRequirement.objects.create(
            workspace=acme, name=name, host="ledger.example.com", purpose="Read the ledger."
        )
        for name in ("LEDGER_API_TOKEN", "BANK_TOKEN", "MAIL_TOKEN")
    ]


def confirm_url(requirement):
    return reverse("admin:egress_credentialrequirement_confirm", args=[requirement.pk])


def test_an_owner_confirms_from_the_home_the_list_and_the_page(acme, owner, needed):
    client = admin_for(owner)
    home = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    page = client.get(home).content.decode()
    for requirement in needed:
        assert f'action="{confirm_url(requirement)}"' in page
        assert f'aria-label="Confirm {requirement.name} is supplied">Confirm</button>' in page
    back = client.post(confirm_url(needed[0]), {"back": "home"})
    assert back["Location"] == home

    listing = reverse("admin:egress_credentialrequirement_changelist")
    page = client.get(listing).content.decode()
    assert f'formaction="{confirm_url(needed[1])}" formmethod="post"' in page
    assert f'formaction="{confirm_url(needed[0])}"' not in page  # confirmed already
    assert client.post(confirm_url(needed[1]), {"back": "list"})["Location"] == listing

    change = reverse("admin:egress_credentialrequirement_change", args=[needed[2].pk])
    page = client.get(change).content.decode()
    assert "Confirm MAIL_TOKEN is supplied</button>" in page
    answer = client.post(confirm_url(needed[2]), follow=True)
    assert answer.redirect_chain[-1][0] == change
    assert "MAIL_TOKEN confirmed as supplied." in answer.content.decode()
    assert "Confirm MAIL_TOKEN is supplied</button>" not in answer.content.decode()

    assert set(CredentialRequirement.objects.values_list("confirmed_by", flat=True)) == {owner.pk}
    assert AuditEntry.objects.filter(
        revision__comment="Confirmed credential BANK_TOKEN is supplied"
    ).exists()


def test_a_member_is_offered_no_confirm_and_a_stranger_finds_nothing(acme, member, needed):
    client = admin_for(member)
    home = client.get(reverse("admin:pixie_workspace_dashboard", args=[acme.pk])).content
    assert b'is supplied">Confirm</button>' not in home
    listing = client.get(reverse("admin:egress_credentialrequirement_changelist")).content
    assert b"formaction=" not in listing
    refused = client.post(confirm_url(needed[0]), follow=True)
    assert "Only an owner of Acme" in refused.content.decode()
    assert admin_for(make_user("stranger")).post(confirm_url(needed[0])).status_code == 404
    assert not CredentialRequirement.objects.filter(confirmed=True).exists()
