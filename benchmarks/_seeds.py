"""A big workspace and a published bundle, for the benchmarks that need them (import
after Django is set up, i.e. after _setup.django_with_test_database)."""

from catalog.models import (
    Bundle,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillRevision,
    SkillVersion,
    WorkspaceSkill,
)
from catalog.services import bundle_version_publish
from pixie.models import Membership, Workspace


def seed_workspace(owner, size):
    workspace = Workspace.objects.create(slug=f"big-{size}", name="Big")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    skills = WorkspaceSkill.objects.bulk_create(
        WorkspaceSkill(workspace=workspace, slug=f"local-skill-{i}") for i in range(size)
    )
    revisions = SkillRevision.objects.bulk_create(
        SkillRevision(
            skill=skill,
            number=1,
            name=f"Local {i}",
            short_description="Local.",
            body=f"Local procedure {i}: use @query-ledger then @send-email.",
        )  # fmt: skip
        for i, skill in enumerate(skills)
    )
    for skill, revision in zip(skills, revisions, strict=True):
        skill.head = revision
    WorkspaceSkill.objects.bulk_update(skills, ["head"], batch_size=2000)
    return workspace


def seed_bundle(owner, size):
    publisher, _ = Publisher.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    bundle = Bundle.objects.create(slug=f"bench-{size}", name=f"Bench {size}", publisher=publisher)
    version = BundleVersion.objects.create(bundle=bundle, version="1.0.0")
    packages = SkillPackage.objects.bulk_create(
        SkillPackage(slug=f"bench-{size}-skill-{i}", publisher=publisher) for i in range(size)
    )
    skill_versions = SkillVersion.objects.bulk_create(
        SkillVersion(
            package=package,
            version="1.0.0",
            name=f"Bench skill {i}",
            description="Bench.",
            body=f"Step {i}: use @query-ledger, then @bench-{size}-skill-{(i + 1) % size}.",
        )  # fmt: skip
        for i, package in enumerate(packages)
    )
    BundleSkill.objects.bulk_create(
        BundleSkill(bundle_version=version, skill_version=sv, position=i)
        for i, sv in enumerate(skill_versions)
    )
    return bundle_version_publish(bundle_version=version, actor=owner)
