"""A big workspace and a published bundle, for the benchmarks that need them (import
after Django is set up, i.e. after _setup.django_with_test_database)."""

from django.db import connection, transaction
from django.utils import timezone

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
from pixie.core.models import Membership, Workspace


def _reserve(cursor, model, count: int) -> int:
    """The first of ``count`` ids taken from the table's sequence (the benchmark's own
    database: nobody else writes it)."""
    sequence = f"pg_get_serial_sequence('{model._meta.db_table}', 'id')"
    cursor.execute(f"SELECT nextval({sequence})")
    first = cursor.fetchone()[0]
    cursor.execute(f"SELECT setval({sequence}, %s)", [first + count - 1])
    return first


def _generate_skills(workspace, owner, size: int) -> None:
    """seed_workspace's rows written by PostgreSQL itself (generate_series, ids reserved
    first so each skill names its head as it is written): 1,000,000 skills in seconds,
    where building the rows in Python took minutes."""
    now = timezone.now()
    # One transaction: the foreign keys (deferred) hold at its end.
    with transaction.atomic(), connection.cursor() as cursor:
        skill, revision = (
            _reserve(cursor, WorkspaceSkill, size),
            _reserve(cursor, SkillRevision, size),
        )
        cursor.execute(
            "INSERT INTO catalog_workspaceskill "
            "(id, workspace_id, slug, head_id, enabled, advertised, created_at) "
            "SELECT %s + i, %s, 'local-skill-' || i, %s + i, true, true, %s "
            "FROM generate_series(0, %s - 1) AS i",
            [skill, workspace.pk, revision, now, size],
        )
        cursor.execute(
            "INSERT INTO catalog_skillrevision (id, skill_id, number, name, short_description, "
            "body, approvals, frontmatter, origin, created_by_id, created_at, comment) "
            "SELECT %s + i, %s + i, 1, 'Local ' || i, 'Local.', "
            "'Local procedure ' || i || ': use @query-ledger then @send-email.', "
            "'[]', '{}', %s, NULL, %s, '' FROM generate_series(0, %s - 1) AS i",
            [revision, skill, SkillRevision.Origin.LOCAL, now, size],
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_workspaceskill, catalog_skillrevision")


def seed_workspace(owner, size):
    """A workspace of ``size`` skills ``local-skill-<i>``, each with one revision, its head."""
    workspace = Workspace.objects.create(slug=f"big-{size}", name="Big")
    Membership.objects.create(workspace=workspace, user=owner, role="owner")
    if connection.vendor == "postgresql":
        _generate_skills(workspace, owner, size)
        return workspace
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
