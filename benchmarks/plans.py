"""Plan creation and apply times for bundles of 5 and 50 skills into a big workspace.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/plans.py

Prints a table: bundle size, workspace size, median plan-creation time and its
query count, and apply time (approve + apply in one process, no broker).
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import django_with_test_database  # noqa: E402

connection, teardown = django_with_test_database()

from django.contrib.auth import get_user_model  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from catalog.models import (  # noqa: E402
    Bundle,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillRevision,
    SkillVersion,
    WorkspaceSkill,
)
from catalog.services import bundle_version_publish  # noqa: E402
from catalog.services.plan_apply import plan_apply  # noqa: E402
from catalog.services.plans import plan_create  # noqa: E402
from pixie.models import Membership, Workspace  # noqa: E402

WORKSPACE_SKILLS = 10_000
RUNS = 5


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


def main():
    owner = get_user_model().objects.create_user("bench-owner")
    workspace = seed_workspace(owner, WORKSPACE_SKILLS)
    print(f"database: {connection.vendor}; workspace of {WORKSPACE_SKILLS:,} skills")
    print("| bundle skills | plan create (median of 5) | queries | apply |")
    print("| ---: | ---: | ---: | ---: |")
    for size in (5, 50):
        version = seed_bundle(owner, size)
        timings = []
        for _ in range(RUNS):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                plan = plan_create(
                    workspace=workspace, kind="install", bundle_version=version, actor=owner
                )
                timings.append(time.perf_counter() - started)
        from catalog.models import Plan

        Plan.objects.filter(pk=plan.pk).update(status="approved", decided_by=owner)
        started = time.perf_counter()
        outcome = plan_apply(plan_id=plan.pk)
        applied = time.perf_counter() - started
        assert outcome == "applied", Plan.objects.get(pk=plan.pk).error
        print(
            f"| {size} | {statistics.median(timings) * 1000:.1f} ms | {len(queries)} "
            f"| {applied * 1000:.1f} ms |"
        )


if __name__ == "__main__":
    try:
        main()
    finally:
        teardown()
