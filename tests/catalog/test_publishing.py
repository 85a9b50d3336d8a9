"""Operators publish and yank bundle versions; published versions never change."""

import pytest
from django.db.models import ProtectedError
from django.urls import reverse
from reversion.models import Version

from catalog.models import BundleVersion, SkillVersion, Status
from catalog.services import bundle_version_publish, bundle_version_yank
from pixie.core.errors import ImmutableError, StateError, ValidationFailed
from tests.admin_forms import change_form_data
from tests.factories import make_bundle_version, make_skill_version

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(operator):
    chase = make_skill_version("invoice-chase", body="Chase it, then @take-payment.")
    pay = make_skill_version("take-payment", body="Ask first with @ask-approval.")
    bundle_version = make_bundle_version("accounts-receivable", skills=[chase, pay])
    return bundle_version_publish(bundle_version=bundle_version, actor=operator)


def test_publishing_freezes_the_bundle_version_and_its_skill_versions(published, operator):
    assert published.status == Status.PUBLISHED
    assert published.published_by == operator
    assert set(
        SkillVersion.objects.filter(bundle_entries__bundle_version=published).values_list(
            "status", flat=True
        )
    ) == {Status.PUBLISHED}


def test_a_published_skill_version_refuses_changes_in_code(published):
    skill_version = SkillVersion.objects.get(package__slug="take-payment")
    skill_version.body = "Take the money without asking."
    with pytest.raises(ImmutableError, match="is published and cannot be changed"):
        skill_version.save()
    with pytest.raises(ImmutableError):
        SkillVersion.objects.filter(pk=skill_version.pk).update(body="sneaky")
    skill_version.refresh_from_db()
    assert skill_version.body == "Ask first with @ask-approval."


def test_a_published_bundle_version_refuses_changes_to_itself_and_its_parts(published):
    published.notes = "rewritten history"
    with pytest.raises(ImmutableError):
        published.save()
    host = published.hosts.get()
    host.port = 8443
    with pytest.raises(ImmutableError):
        host.save()
    with pytest.raises(ImmutableError):
        published.skills.first().delete()
    assert published.skills.count() == 2


def test_published_versions_cannot_be_deleted(published):
    with pytest.raises(ImmutableError):
        BundleVersion.objects.get(pk=published.pk).delete()
    with pytest.raises(ImmutableError):
        SkillVersion.objects.filter(package__slug="take-payment").delete()
    assert BundleVersion.objects.filter(pk=published.pk).exists()


def test_a_draft_skill_version_named_by_a_bundle_cannot_be_deleted():
    skill_version = make_skill_version("draft-skill")
    make_bundle_version(skills=[skill_version])
    with pytest.raises(ProtectedError):
        skill_version.delete()


def test_publish_refuses_a_mention_that_resolves_nowhere_and_names_it(operator):
    chase = make_skill_version(
        "invoice-chase", body="Use @take-payment, then @refund-wizard and @fax-machine."
    )
    bundle_version = make_bundle_version(skills=[chase])
    with pytest.raises(ValidationFailed) as refused:
        bundle_version_publish(bundle_version=bundle_version, actor=operator)
    problems = " ".join(refused.value.problems)
    for slug in ("@take-payment", "@refund-wizard", "@fax-machine"):
        assert f"{slug} is mentioned by @invoice-chase" in problems
    bundle_version.refresh_from_db()
    assert bundle_version.status == Status.DRAFT
    assert SkillVersion.objects.get(pk=chase.pk).status == Status.DRAFT


def test_publish_refuses_an_empty_bundle_and_a_credential_for_an_unlisted_host(operator):
    bundle_version = make_bundle_version(
        skills=[], credentials=[("PAYMENTS_KEY", "payments.example.com")]
    )
    with pytest.raises(ValidationFailed) as refused:
        bundle_version_publish(bundle_version=bundle_version, actor=operator)
    assert any("at least one skill" in p for p in refused.value.problems)
    assert any("PAYMENTS_KEY is for host payments.example.com" in p for p in refused.value.problems)


def test_publishing_twice_is_refused(published, operator):
    with pytest.raises(StateError, match="already published"):
        bundle_version_publish(bundle_version=published, actor=operator)


def test_yank_needs_a_reason_and_a_published_version(published, operator):
    with pytest.raises(ValidationFailed, match="Say why"):
        bundle_version_yank(bundle_version=published, actor=operator, reason="  ")
    yanked = bundle_version_yank(
        bundle_version=published, actor=operator, reason="Takes payments twice"
    )
    assert (yanked.status, yanked.yanked_by, yanked.yank_reason) == (
        Status.YANKED,
        operator,
        "Takes payments twice",
    )
    with pytest.raises(StateError):
        bundle_version_yank(bundle_version=yanked, actor=operator, reason="again")


def test_history_records_who_published_and_why(published, operator):
    versions = Version.objects.get_for_object(published)
    latest = versions.first()
    assert latest.revision.user == operator
    # The operator's own version joins the catalog as it is published, and history says so.
    assert latest.revision.comment == f"Published {published}; in the catalog (operator publisher)"


# Through the admin, as an operator does it.


def _action(client, url, action, ids, **extra):
    return client.post(
        url, {"action": action, "_selected_action": [str(i) for i in ids], **extra}, follow=True
    )


def test_admin_publish_action_confirms_then_shows_the_unresolved_mention(operator_client):
    chase = make_skill_version("invoice-chase", body="Then @refund-wizard it.")
    bundle_version = make_bundle_version(skills=[chase])
    url = reverse("admin:catalog_bundleversion_changelist")
    asked = _action(operator_client, url, "publish", [bundle_version.pk]).content.decode()
    assert 'id="release-impact"' in asked and "Yes, publish 1 version" in asked
    assert BundleVersion.objects.get(pk=bundle_version.pk).status == Status.DRAFT
    response = _action(operator_client, url, "publish", [bundle_version.pk], post="yes")
    text = response.content.decode()
    assert "@refund-wizard is mentioned by @invoice-chase" in text
    # Refused, the confirmation stays, with the version still selected.
    assert f'name="_selected_action" value="{bundle_version.pk}"' in text
    assert BundleVersion.objects.get(pk=bundle_version.pk).status == Status.DRAFT

    SkillVersion.objects.filter(pk=chase.pk).update(body="Then @ask-approval.")
    response = _action(operator_client, url, "publish", [bundle_version.pk], post="yes")
    assert f"Published {bundle_version}." in response.content.decode()
    assert BundleVersion.objects.get(pk=bundle_version.pk).status == Status.PUBLISHED


def test_admin_yank_asks_the_reason_on_its_confirmation_and_keeps_the_selection(
    operator_client, published
):
    url = reverse("admin:catalog_bundleversion_changelist")
    response = _action(operator_client, url, "yank", [published.pk], post="yes")
    text = response.content.decode()
    assert "Say why the version is yanked" in text
    assert f'name="_selected_action" value="{published.pk}"' in text
    assert BundleVersion.objects.get(pk=published.pk).status == Status.PUBLISHED
    _action(operator_client, url, "yank", [published.pk], post="yes", reason="Double charges")
    published.refresh_from_db()
    assert (published.status, published.yank_reason) == (Status.YANKED, "Double charges")
    listed = operator_client.get(url).content.decode()
    assert "Double charges" in listed  # the reason is a column


def test_admin_shows_a_published_version_read_only_and_ignores_posted_changes(
    operator_client, published
):
    url = reverse("admin:catalog_skillversion_change", args=[published.skills.first().pk])
    skill_version = published.skills.first().skill_version
    url = reverse("admin:catalog_skillversion_change", args=[skill_version.pk])
    page = operator_client.get(url).content.decode()
    assert 'name="body"' not in page
    operator_client.post(url, {"body": "changed", "name": "Changed", "_save": "Save"})
    skill_version.refresh_from_db()
    assert skill_version.body == "Chase it, then @take-payment."


def test_admin_refuses_to_delete_a_published_version(operator_client, published):
    url = reverse("admin:catalog_bundleversion_delete", args=[published.pk])
    assert operator_client.post(url, {"post": "yes"}).status_code == 403
    assert BundleVersion.objects.filter(pk=published.pk).exists()


def test_admin_edits_a_drafts_notes_and_order_and_records_the_operator(operator_client, operator):
    first, second = make_skill_version("first-skill"), make_skill_version("second-skill")
    bundle_version = make_bundle_version(skills=[first, second])
    page = reverse("admin:catalog_bundleversion_change", args=[bundle_version.pk])
    url = reverse("admin:catalog_bundleversion_notes", args=[bundle_version.pk])
    assert url in operator_client.get(page).content.decode()
    # The change page itself takes no edit: a draft is read, and settled in its own form.
    assert operator_client.post(page, {"notes": "x"}).status_code == 405
    response = operator_client.post(
        url,
        {
            "notes": "First draft of the notes.",
            "skill": ["first-skill", "second-skill"],
            "position": ["2", "1"],
        },
    )
    assert response.status_code == 302 and response["Location"] == page
    bundle_version.refresh_from_db()
    assert bundle_version.notes == "First draft of the notes."
    order = bundle_version.skills.order_by("position").values_list(
        "skill_version__package__slug", flat=True
    )
    assert list(order) == ["second-skill", "first-skill"]
    recorded = Version.objects.get_for_object(bundle_version).first().revision
    assert recorded.user == operator
    assert recorded.get_comment() == f"Changed the notes and skill order of {bundle_version}"


def test_a_drafts_order_that_is_not_numbers_changes_nothing(operator_client):
    bundle_version = make_bundle_version(skills=[make_skill_version("only-skill")])
    url = reverse("admin:catalog_bundleversion_notes", args=[bundle_version.pk])
    page = operator_client.post(
        url, {"notes": "Never saved.", "skill": ["only-skill"], "position": ["first"]}
    ).content.decode()
    assert "The position of @only-skill must be a whole number, like 1" in page
    assert "nothing was saved" in page
    bundle_version.refresh_from_db()
    assert bundle_version.notes == ""


def test_a_published_versions_notes_are_not_edited(operator_client, published):
    url = reverse("admin:catalog_bundleversion_notes", args=[published.pk])
    assert operator_client.get(url).status_code == 403
    answer = operator_client.post(url, {"notes": "Rewritten.", "skill": [], "position": []})
    assert answer.status_code == 403
    published.refresh_from_db()
    assert published.notes != "Rewritten."


def test_admin_refuses_a_package_named_like_a_tool_and_records_a_new_one(operator_client, operator):
    from catalog.models import SkillPackage
    from tests.factories import make_publisher

    publisher = make_publisher()
    url = reverse("admin:catalog_skillpackage_add")
    page = operator_client.post(url, {"slug": "send-email", "publisher": publisher.pk})
    assert "@send-email is a built-in tool" in page.content.decode()
    assert not SkillPackage.objects.filter(slug="send-email").exists()
    data = change_form_data(operator_client.get(url))
    data.update(slug="refund-check", publisher=publisher.pk)
    assert operator_client.post(url, data).status_code == 302
    package = SkillPackage.objects.get(slug="refund-check")
    # Created through skill_package_create, inside the admin's own history entry.
    assert Version.objects.get_for_object(package).first().revision.user == operator
