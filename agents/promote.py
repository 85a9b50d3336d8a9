"""Promote an agent's assembly to a bundle the workspace publishes.

The cheapest useful bundle is one a workspace built by hand and wants on a
second agent. Its enabled skills (in order, with this agent's overrides), the
hosts and credential names they use, and their approval rules become a draft
bundle version, which then goes through the operator's publish checks. Other
workspaces see it once an operator approves it for the catalog (or at once, if the
operator trusts the workspace as a publisher); a name imitating another publisher's
bundle is refused.
"""

from __future__ import annotations

from django.db.models import Q

from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillFile,
    SkillPackage,
    SkillRevision,
    SkillVersion,
)
from catalog.services.catalog_review import imitation_check
from catalog.services.publishing import bundle_version_publish
from catalog.services.signing import publisher_key_ensure
from catalog.skill_content import skill_digest
from catalog.validators import NAME_MAX, is_semver
from egress.models import EgressRule
from pixie.core.audit.records import audited
from pixie.core.errors import ValidationFailed
from pixie.core.names import name_problem
from pixie.core.namespace.engine import is_slug
from pixie.core.people.permissions import require_owner

from .models import AgentSkill


def workspace_publisher(workspace) -> Publisher:
    publisher, _ = Publisher.objects.get_or_create(
        kind=Publisher.Kind.WORKSPACE,
        workspace=workspace,
        defaults={"slug": f"workspace-{workspace.slug}"[:64], "name": workspace.name},
    )
    publisher_key_ensure(publisher=publisher)  # every publisher has its signing key
    return publisher


def assembly_promote(
    *, agent, actor, slug: str, name: str, version: str = "1.0.0", description: str = ""
) -> BundleVersion:
    require_owner(user=actor, workspace=agent.workspace)
    problems = []
    if not is_slug(slug):
        problems.append(f"bundle slug {slug!r} must match ^[a-z0-9][a-z0-9-]{{0,63}}$")
    if not name.strip() or len(name) > NAME_MAX:
        problems.append(f"bundle name must be 1 to {NAME_MAX} characters")
    elif problem := name_problem(name):
        problems.append(f"bundle name {problem}")
    if not is_semver(version):
        problems.append(f"version {version!r} is not a semantic version such as 1.0.0")
    parts = list(
        AgentSkill.objects.filter(agent=agent, enabled=True, skill__archived_at__isnull=True)
        .select_related(
            "skill__head__upstream__package", "pinned_revision__upstream__package", "override"
        )
        .order_by("position", "id")
    )
    if not parts:
        problems.append(f"{agent.name} has no enabled skills to promote")
    bundle = Bundle.objects.select_related("publisher").filter(slug=slug).first()
    if bundle is not None and bundle.publisher.workspace_id != agent.workspace_id:
        problems.append(f"bundle {slug} belongs to another publisher; choose another slug")
    if bundle is not None and bundle.versions.filter(version=version).exists():
        problems.append(f"{slug} {version} already exists; choose a newer version")
    # Refused before anything is written; publishing checks again for every other door.
    publisher = Publisher.objects.filter(
        kind=Publisher.Kind.WORKSPACE, workspace=agent.workspace
    ).first()
    problems.extend(
        imitation_check(
            publisher=publisher,
            publisher_name=publisher.name if publisher else agent.workspace.name,
            slug=slug,
            name=bundle.name if bundle is not None else name,
        ).refusals
    )
    if problems:
        raise ValidationFailed(problems)

    with audited(actor=actor, comment=f"Promoted the skills of {agent.name} to {slug} {version}"):
        publisher = workspace_publisher(agent.workspace)
        if bundle is None:
            bundle = Bundle.objects.create(
                slug=slug, name=name, description=description[:400], publisher=publisher
            )
        draft = BundleVersion.objects.create(
            bundle=bundle, version=version, description=description[:400]
        )
        versions = _skill_versions(parts, publisher, version)
        BundleSkill.objects.bulk_create(
            BundleSkill(bundle_version=draft, skill_version=v, position=i)
            for i, v in enumerate(versions, start=1)
        )
        _reach(draft, agent.workspace, parts, versions)
    try:
        return bundle_version_publish(bundle_version=draft, actor=actor)
    except ValidationFailed as exc:
        raise ValidationFailed(
            [*exc.problems, f"The draft {draft} was kept: fix the skills, then publish it."],
            code=exc.code,
        ) from None


def _skill_versions(parts, publisher, version) -> list[SkillVersion]:
    """A catalog version per part, under the same slug the workspace uses (so the
    bundle's mentions resolve as they do here): the upstream version when the text is
    the catalog's own, else a new version of the workspace publisher's package."""
    result = []
    for part in parts:
        revision = part.pinned_revision or part.skill.head
        upstream = revision.upstream
        if (
            upstream is not None
            and revision.origin == SkillRevision.Origin.CATALOG
            and part.override_id is None
            and upstream.package.slug == part.skill.slug
            and (revision.name, revision.short_description, revision.body)
            == (upstream.name, upstream.description, upstream.body)
        ):
            result.append(upstream)
            continue
        package, _ = SkillPackage.objects.get_or_create(slug=part.skill.slug, publisher=publisher)
        if package.versions.filter(version=version).exists():
            raise ValidationFailed(
                f"@{package.slug} {version} already exists; choose a newer version"
            )
        files = list(revision.files.all())
        body = part.override.body if part.override_id else revision.body
        made = SkillVersion.objects.create(
            package=package,
            version=version,
            name=revision.name,
            description=revision.short_description,
            body=body,
            approvals=revision.approvals,
            frontmatter=revision.frontmatter,
            digest=skill_digest(
                name=revision.name,
                description=revision.short_description,
                body=body,
                approvals=revision.approvals,
                frontmatter=revision.frontmatter,
                files=((f.path, f.executable, f.blob_id) for f in files),
            ),
        )
        SkillFile.objects.bulk_create(
            SkillFile(skill_version=made, **f.entry_fields()) for f in files
        )
        result.append(made)
    return result


def _reach(draft, workspace, parts, versions) -> None:
    """Hosts and credential names the skills use: from the bundles they came from, and
    the workspace's egress rules whose host a skill's text names."""
    hosts: dict[tuple[str, int], str] = {}
    credentials: dict[str, tuple[str, str]] = {}
    installed = {p.skill.installation_id for p in parts if p.skill.installation_id}
    for host in BundleHost.objects.filter(bundle_version__installations__in=installed):
        hosts.setdefault((host.host, host.port), host.purpose)
    for credential in BundleCredential.objects.filter(bundle_version__installations__in=installed):
        credentials.setdefault(credential.name, (credential.host, credential.purpose))
    text = "\n".join(v.body for v in versions)
    for rule in EgressRule.objects.filter(workspace=workspace).filter(~Q(host="")):
        if rule.host in text:
            hosts.setdefault((rule.host, rule.port), rule.purpose or "Used by the promoted skills")
            if rule.credential_name:
                credentials.setdefault(rule.credential_name, (rule.host, rule.purpose or ""))
    BundleHost.objects.bulk_create(
        BundleHost(bundle_version=draft, host=h, port=p, purpose=purpose or "Reached by the skills")
        for (h, p), purpose in sorted(hosts.items())
    )
    known_hosts = {h for h, _ in hosts}
    BundleCredential.objects.bulk_create(
        BundleCredential(
            bundle_version=draft, name=name, host=host, purpose=purpose or "Needed at " + host
        )
        for name, (host, purpose) in sorted(credentials.items())
        if host in known_hosts
    )
