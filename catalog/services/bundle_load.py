"""Loading a bundle folder into the catalog, and reading a version back out."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.bundle_files import (
    BundleFileError,
    BundleSpec,
    CredentialSpec,
    HostSpec,
    SkillSpec,
)
from catalog.mentions import describe_unresolved, unresolved_by_skill
from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillVersion,
    Status,
)
from pixie.audit import audited

from .publishing import bundle_version_publish, tool_slugs


@dataclass(frozen=True)
class BundleLoadResult:
    bundle_version: BundleVersion
    created: bool
    published: bool
    skill_versions_created: int


def _skill_content(spec: SkillSpec) -> tuple:
    return (spec.name, spec.description, spec.body, spec.approvals, spec.frontmatter)


def _stored_skill_content(version: SkillVersion) -> tuple:
    return (
        version.name,
        version.description,
        version.body,
        version.approvals,
        version.frontmatter,
    )


def bundle_spec_of(bundle_version: BundleVersion) -> BundleSpec:
    """The version as the file format sees it (used by bundle_dump and comparisons)."""
    entries = bundle_version.skills.select_related("skill_version__package").order_by(
        "position", "id"
    )
    return BundleSpec(
        slug=bundle_version.bundle.slug,
        name=bundle_version.bundle.name,
        version=bundle_version.version,
        description=bundle_version.description,
        notes=bundle_version.notes,
        publisher=bundle_version.bundle.publisher.slug,
        skills=[
            SkillSpec(
                slug=e.skill_version.package.slug,
                version=e.skill_version.version,
                name=e.skill_version.name,
                description=e.skill_version.description,
                body=e.skill_version.body,
                approvals=e.skill_version.approvals,
                frontmatter=e.skill_version.frontmatter,
            )
            for e in entries
        ],
        hosts=[HostSpec(h.host, h.port, h.purpose) for h in bundle_version.hosts.all()],
        credentials=[
            CredentialSpec(c.name, c.host, c.purpose) for c in bundle_version.credentials.all()
        ],
    )


def _same_bundle_version(existing: BundleVersion, spec: BundleSpec) -> bool:
    stored = bundle_spec_of(existing)
    return (
        stored.description == spec.description
        and stored.notes == spec.notes
        and [(s.slug, s.version) for s in stored.skills]
        == [(s.slug, s.version) for s in spec.skills]
        and sorted(stored.hosts, key=repr) == sorted(spec.hosts, key=repr)
        and sorted(stored.credentials, key=repr) == sorted(spec.credentials, key=repr)
    )


def _problems(spec: BundleSpec, tools: set[str]) -> list[str]:
    """Checks that need the database: tools, existing versions, mentions."""
    problems = []
    for skill in spec.skills:
        if skill.slug in tools:
            problems.append(f"{skill.source}: @{skill.slug} is a built-in tool; rename the skill")
    missing = unresolved_by_skill(
        ((s.slug, s.body) for s in spec.skills), {s.slug for s in spec.skills} | tools
    )
    problems.extend(f"skills: {p}" for p in describe_unresolved(missing))
    bundle = Bundle.objects.select_related("publisher").filter(slug=spec.slug).first()
    if bundle is not None and bundle.publisher.slug != spec.publisher:
        problems.append(
            f"bundle: {spec.slug} is published by {bundle.publisher.slug}, not {spec.publisher}"
        )
    existing = {
        (v.package.slug, v.version): v
        for v in SkillVersion.objects.select_related("package").filter(
            package__slug__in=[s.slug for s in spec.skills], package__publisher__slug=spec.publisher
        )
    }
    for skill in spec.skills:
        stored = existing.get((skill.slug, skill.version))
        if stored is not None and _stored_skill_content(stored) != _skill_content(skill):
            problems.append(
                f"{skill.source}: @{skill.slug} {skill.version} already exists with different "
                "content; give the changed skill a new version"
            )
    return problems


def bundle_load(*, spec: BundleSpec, actor, publish: bool = False) -> BundleLoadResult:
    """Write a parsed bundle folder into the catalog, all of it or nothing.

    Loading the same folder twice changes nothing; a version that exists with
    other content is refused, since published versions never change.
    """
    tools = tool_slugs()
    problems = _problems(spec, tools)
    existing = (
        BundleVersion.objects.select_related("bundle__publisher")
        .filter(bundle__slug=spec.slug, version=spec.version)
        .first()
    )
    if existing is not None and not _same_bundle_version(existing, spec):
        problems.append(
            f"bundle: {spec.slug} {spec.version} already exists with different content; "
            "give the changed bundle a new version"
        )
    if problems:
        raise BundleFileError(problems)

    comment = f"Loaded bundle {spec.slug} {spec.version} from files"
    with audited(actor=actor, comment=comment):
        created_skills = 0
        if existing is None:
            bundle_version, created_skills = _create(spec)
        else:
            bundle_version = existing
        published = False
        if publish and bundle_version.status == Status.DRAFT:
            bundle_version = bundle_version_publish(bundle_version=bundle_version, actor=actor)
            published = True
    return BundleLoadResult(
        bundle_version=bundle_version,
        created=existing is None,
        published=published,
        skill_versions_created=created_skills,
    )


def _create(spec: BundleSpec) -> tuple[BundleVersion, int]:
    publisher, _ = Publisher.objects.get_or_create(
        slug=spec.publisher,
        defaults={"name": spec.publisher.replace("-", " ").title(), "kind": "operator"},
    )
    bundle, _ = Bundle.objects.get_or_create(
        slug=spec.slug,
        defaults={"name": spec.name, "description": spec.description, "publisher": publisher},
    )
    if bundle.name != spec.name or bundle.description != spec.description:
        bundle.name, bundle.description = spec.name, spec.description
        bundle.save(update_fields=["name", "description"])
    bundle_version = BundleVersion.objects.create(
        bundle=bundle, version=spec.version, description=spec.description, notes=spec.notes
    )
    created = 0
    entries = []
    for position, skill in enumerate(spec.skills, start=1):
        package, _ = SkillPackage.objects.get_or_create(slug=skill.slug, publisher=publisher)
        version, made = SkillVersion.objects.get_or_create(
            package=package,
            version=skill.version,
            defaults={
                "name": skill.name,
                "description": skill.description,
                "body": skill.body,
                "approvals": skill.approvals,
                "frontmatter": skill.frontmatter,
            },
        )
        created += made
        entries.append(
            BundleSkill(bundle_version=bundle_version, skill_version=version, position=position)
        )
    BundleSkill.objects.bulk_create(entries)
    BundleHost.objects.bulk_create(
        BundleHost(bundle_version=bundle_version, host=h.host, port=h.port, purpose=h.purpose)
        for h in spec.hosts
    )
    BundleCredential.objects.bulk_create(
        BundleCredential(bundle_version=bundle_version, name=c.name, host=c.host, purpose=c.purpose)
        for c in spec.credentials
    )
    return bundle_version, created
