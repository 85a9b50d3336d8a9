"""Plain factory functions: each makes one realistic object with sensible defaults."""

import itertools

from django.contrib.auth import get_user_model

from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillVersion,
)
from catalog.skill_content import skill_digest
from pixie.core.models import Membership, Workspace

_counter = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_counter)}"


def make_user(username: str | None = None, **extra):
    username = username or unique("user")
    return get_user_model().objects.create_user(
        username=username, password="a-long-test-password", **extra
    )


def make_workspace(slug: str | None = None, *, owner=None, members=()) -> Workspace:
    slug = slug or unique("ws")
    workspace = Workspace.objects.create(slug=slug, name=slug.title())
    if owner is not None:
        Membership.objects.create(workspace=workspace, user=owner, role=Membership.Role.OWNER)
    for member in members:
        Membership.objects.create(workspace=workspace, user=member, role=Membership.Role.MEMBER)
    return workspace


def make_publisher(slug: str = "acme-ops") -> Publisher:
    publisher, _ = Publisher.objects.get_or_create(slug=slug, defaults={"name": "Acme Ops"})
    return publisher


def make_skill_version(
    slug: str | None = None,
    *,
    version: str = "1.0.0",
    body: str = "Look the invoice up with @query-ledger before writing.",
    name: str | None = None,
    approvals=None,
    publisher=None,
) -> SkillVersion:
    slug = slug or unique("skill")
    package, _ = SkillPackage.objects.get_or_create(
        slug=slug, publisher=publisher or make_publisher()
    )
    content = {
        "name": name or slug.replace("-", " ").title(),
        "description": f"What {slug} does, in one line.",
        "body": body,
        "approvals": approvals or [],
    }
    return SkillVersion.objects.create(
        package=package,
        version=version,
        digest=skill_digest(**content, frontmatter={}, files=()),
        **content,
    )


def make_bundle_version(
    slug: str | None = None,
    *,
    version: str = "1.0.0",
    skills=(),
    hosts=(("ledger.example.com", 443),),
    credentials=(("LEDGER_API_TOKEN", "ledger.example.com"),),
) -> BundleVersion:
    """A draft bundle version naming the given skill versions in order."""
    slug = slug or unique("bundle")
    bundle, _ = Bundle.objects.get_or_create(
        slug=slug, defaults={"name": slug.replace("-", " ").title(), "publisher": make_publisher()}
    )
    bundle_version = BundleVersion.objects.create(bundle=bundle, version=version)
    BundleSkill.objects.bulk_create(
        BundleSkill(bundle_version=bundle_version, skill_version=skill, position=position)
        for position, skill in enumerate(skills, start=1)
    )
    for host, port in hosts:
        BundleHost.objects.create(
            bundle_version=bundle_version, host=host, port=port, purpose="Reach the ledger."
        )
    for name, host in credentials:
        BundleCredential.objects.create(
            bundle_version=bundle_version, name=name, host=host, purpose="Ledger API token."
        )
    return bundle_version


def add_local_contact(*, workspace, other_slug, actor):
    """Add a workspace on this server as a contact, after its owners listed it in the
    server's directory (off by default)."""
    from pixie.sharing import services as sharing

    Workspace.objects.filter(slug=other_slug).update(listed_in_directory=True)
    return sharing.contact_add_local(workspace=workspace, other_slug=other_slug, actor=actor)
