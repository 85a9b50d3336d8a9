"""Realistic, valid data at catalog and fleet scale, written in bulk for benchmarks.

What one seed writes, every name carrying its prefix so seeds never collide:

- an operator (superuser) and a publisher ``<prefix>-ops``;
- ``bundles`` bundles ``<prefix>-bundle-<b>``, each with one published version
  1.0.0 naming ``skills_per_bundle`` published skill versions in order (each
  body mentions its neighbour in the bundle and a built-in tool, so publishing
  rules hold), one host and one credential name for that host;
- ``workspaces`` workspaces ``<prefix>-<w>``, each with an owner
  ``<prefix>-owner-<w>`` and a member ``<prefix>-member-<w>`` (staff, so the
  admin opens for them), ``skills_per_workspace`` skills ``skill-<i>`` with
  ``revisions_per_skill`` revisions each (numbered from 1, the head the
  latest; bodies mention the next skill and a tool);
- ``agents_per_workspace`` agents per workspace, each with ``skills_per_agent``
  ordered attachments: four in five pinned to revision 1 (behind the head when
  there are several revisions, so a repoint has work), one in five following
  the latest.

Rows are written straight to the tables: COPY on PostgreSQL, batched
executemany elsewhere, with primary keys reserved from the tables' own
sequences so foreign keys are known before the rows exist. One transaction:
a failed seed leaves nothing behind. History gets a single entry naming the
seed (per-row history of synthetic data would only dwarf the data).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection, models, transaction
from django.utils import timezone

from agents.models import Agent, AgentSkill
from catalog.manifest import ManifestSkill, canonical, digest_of, manifest_of, sign
from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    CatalogReview,
    Publisher,
    SkillPackage,
    SkillRevision,
    SkillVersion,
    Status,
    WorkspaceSkill,
)
from catalog.services.signing import publisher_key_ensure
from catalog.skill_content import skill_digest
from catalog.tools import BUILTIN_TOOLS
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.keys import b64, unwrap_private
from pixie.core.models import Membership, Workspace
from pixie.core.namespace.engine import is_slug

PREFIX_MAX = 20

# The approval policy's columns, at their defaults (COPY writes every column it names,
# and the database has no defaults of its own).
POLICY_FIELDS = [f.name for f in Workspace._meta.fields if f.name.startswith("policy_")]
POLICY_DEFAULTS = [Workspace._meta.get_field(name).default for name in POLICY_FIELDS]
MAX_ROWS = 50_000_000  # a guard against a typo that would fill the disk
TOOLS = [slug for slug, _name, _description in BUILTIN_TOOLS]
SQLITE_BATCH = 5_000


@dataclass(frozen=True)
class SeedSizes:
    workspaces: int = 10
    skills_per_workspace: int = 100
    revisions_per_skill: int = 2
    agents_per_workspace: int = 10
    skills_per_agent: int = 10
    bundles: int = 100
    skills_per_bundle: int = 5

    def rows(self) -> dict[str, int]:
        """How many rows of each model the seed writes (users and the publisher aside)."""
        skills = self.workspaces * self.skills_per_workspace
        agents = self.workspaces * self.agents_per_workspace
        bundle_skills = self.bundles * self.skills_per_bundle
        return {
            "workspaces": self.workspaces,
            "memberships": 2 * self.workspaces,
            "skill packages": bundle_skills,
            "skill versions": bundle_skills,
            "bundles": self.bundles,
            "bundle versions": self.bundles,
            "bundle skills": bundle_skills,
            "bundle hosts": self.bundles,
            "bundle credentials": self.bundles,
            "workspace skills": skills,
            "skill revisions": skills * self.revisions_per_skill,
            "agents": agents,
            "agent skills": agents * self.skills_per_agent,
        }


@dataclass
class SeedResult:
    prefix: str
    rows: dict[str, int]
    seconds: float
    operator_id: int
    workspace_ids: list[int]
    bundle_version_ids: list[int]

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def seed_problems(*, prefix: str, sizes: SeedSizes) -> list[str]:
    """Everything wrong with a request, each named; empty when the seed can run."""
    problems = []
    if not (isinstance(prefix, str) and is_slug(prefix) and len(prefix) <= PREFIX_MAX):
        problems.append(
            f"prefix {prefix!r} must be a slug (lowercase letters, digits, hyphens) "
            f"of at most {PREFIX_MAX} characters"
        )
    for field in fields(sizes):
        value = getattr(sizes, field.name)
        if not isinstance(value, int) or value < 0:
            problems.append(f"{field.name.replace('_', '-')} must be 0 or more; got {value!r}")
    if problems:
        return problems
    if sizes.skills_per_agent > sizes.skills_per_workspace:
        problems.append(
            f"skills-per-agent ({sizes.skills_per_agent}) cannot exceed skills-per-workspace "
            f"({sizes.skills_per_workspace}): an agent has each skill at most once"
        )
    if sizes.skills_per_workspace and sizes.revisions_per_skill < 1:
        problems.append("revisions-per-skill must be at least 1: every skill has a head revision")
    if sizes.bundles and sizes.skills_per_bundle < 1:
        problems.append("skills-per-bundle must be at least 1: a published bundle needs a skill")
    total = sum(sizes.rows().values())
    if total > MAX_ROWS:
        problems.append(f"that is {total:,} rows; the limit is {MAX_ROWS:,}")
    return problems


def _existing(prefix: str) -> list[str]:
    found = []
    workspaces = Workspace.objects.filter(slug__startswith=f"{prefix}-").count()
    if workspaces:
        found.append(f"{workspaces} workspaces named {prefix}-*")
    if Publisher.objects.filter(slug=f"{prefix}-ops").exists():
        found.append(f"the publisher {prefix}-ops")
    if Bundle.objects.filter(slug__startswith=f"{prefix}-bundle-").exists():
        found.append(f"bundles named {prefix}-bundle-*")
    if get_user_model().objects.filter(username__startswith=f"{prefix}-").exists():
        found.append(f"users named {prefix}-*")
    return found


def seed(
    *, sizes: SeedSizes, prefix: str = "bench", progress: Callable[[str], None] | None = None
) -> SeedResult:
    """Write one seed; refuses (ValidationFailed, nothing written) on bad sizes or a used prefix."""
    problems = seed_problems(prefix=prefix, sizes=sizes)
    if problems:
        raise ValidationFailed(problems, code=ErrorCode.BAD_SEED)
    say = progress or (lambda message: None)
    started = time.perf_counter()
    with transaction.atomic():
        found = _existing(prefix)
        if found:
            raise ValidationFailed(
                f"The database already has data seeded under prefix {prefix!r} "
                f"({', '.join(found)}); pass another --prefix to add more.",
                code=ErrorCode.PREFIX_TAKEN,
            )
        result = _Seeder(prefix, sizes, say).run()
        say("commit (the deferred foreign keys are checked now) ...")
    if connection.vendor == "postgresql":
        say("analyze")
        _analyze()
    result.seconds = time.perf_counter() - started
    return result


def _analyze() -> None:
    """Fresh statistics, so the planner sees the new sizes at once (not after autovacuum)."""
    tables = [
        model._meta.db_table
        for model in (
            get_user_model(),
            Workspace,
            Membership,
            Publisher,
            SkillPackage,
            SkillVersion,
            Bundle,
            BundleVersion,
            BundleSkill,
            BundleHost,
            BundleCredential,
            WorkspaceSkill,
            SkillRevision,
            Agent,
            AgentSkill,
        )
    ]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(connection.ops.quote_name(t) for t in tables))


class _Writer:
    """Reserve primary keys and write rows of one table, the fastest way the database has."""

    def __init__(self):
        self.postgres = connection.vendor == "postgresql"

    def reserve(self, model: type[models.Model], count: int) -> list[int]:
        if count == 0:
            return []
        table = model._meta.db_table
        with connection.cursor() as cursor:
            if self.postgres:
                # Taken from the table's own sequence: safe beside other writers.
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [table, count],
                )
                return [row[0] for row in cursor.fetchall()]
            # SQLite: the transaction holds the only write lock.
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {quoted}")  # noqa: S608 - model names
            top = cursor.fetchone()[0]
            return list(range(top + 1, top + 1 + count))

    def write(self, model: type[models.Model], names: Sequence[str], rows: Iterable[tuple]) -> int:
        quote = connection.ops.quote_name
        table = quote(model._meta.db_table)
        columns = ", ".join(quote(model._meta.get_field(name).column) for name in names)
        written = 0
        with connection.cursor() as cursor:
            if self.postgres:
                with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                        written += 1
                return written
            marks = ", ".join(["%s"] * len(names))
            sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"  # noqa: S608 - model names
            rows = iter(rows)
            while batch := list(itertools.islice(rows, SQLITE_BATCH)):
                cursor.executemany(sql, batch)
                written += len(batch)
        return written


class _Seeder:
    def __init__(self, prefix: str, sizes: SeedSizes, say: Callable[[str], None]):
        self.prefix = prefix
        self.sizes = sizes
        self.say = say
        self.writer = _Writer()
        self.rows: dict[str, int] = {}
        now = timezone.now()
        self.now = connection.ops.adapt_datetimefield_value(now)
        self.empty_list = json.dumps([])
        self.empty_dict = json.dumps({})

    def _write(self, label: str, model, names, rows) -> None:
        self.say(f"{label} ...")
        began = time.perf_counter()
        self.rows[label] = self.rows.get(label, 0) + self.writer.write(model, names, rows)
        self.say(f"{label}: {self.rows[label]:,} rows in {time.perf_counter() - began:.1f} s")

    def run(self) -> SeedResult:
        operator_id, owner_ids, member_ids = self._users()
        bundle_version_ids = self._catalog(operator_id)
        workspace_ids = self._workspaces(owner_ids, member_ids)
        self._skills_and_agents(workspace_ids, owner_ids)
        self._history(operator_id)
        return SeedResult(
            prefix=self.prefix,
            rows=self.rows,
            seconds=0.0,
            operator_id=operator_id,
            workspace_ids=workspace_ids,
            bundle_version_ids=bundle_version_ids,
        )

    def _users(self) -> tuple[int, list[int], list[int]]:
        """The operator, then an owner and a member per workspace; passwords unusable."""
        user_model = get_user_model()
        count = self.sizes.workspaces
        ids = self.writer.reserve(user_model, 1 + 2 * count)
        password = make_password(None)
        names = [
            f"{self.prefix}-operator",
            *(f"{self.prefix}-{role}-{w}" for w in range(count) for role in ("owner", "member")),
        ]
        self._write(
            "users",
            user_model,
            [
                "id",
                "password",
                "is_superuser",
                "username",
                "first_name",
                "last_name",
                "email",
                "is_staff",
                "is_active",
                "date_joined",
            ],
            (
                (
                    user_id,
                    password,
                    index == 0,
                    name,
                    "",
                    "",
                    f"{name}@example.com",
                    True,
                    True,
                    self.now,
                )
                for index, (user_id, name) in enumerate(zip(ids, names, strict=True))
            ),
        )
        return ids[0], ids[1::2], ids[2::2]

    def _catalog(self, operator_id: int) -> list[int]:
        prefix, sizes, now = self.prefix, self.sizes, self.now
        if not sizes.bundles:
            return []
        [publisher_id] = self.writer.reserve(Publisher, 1)
        self._write(
            "publishers",
            Publisher,
            ["id", "slug", "name", "kind", "trusted", "created_at"],
            [(publisher_id, f"{prefix}-ops", f"{prefix} operations", "operator", False, now)],
        )
        per_bundle = sizes.skills_per_bundle
        count = sizes.bundles * per_bundle
        package_ids = self.writer.reserve(SkillPackage, count)
        version_ids = self.writer.reserve(SkillVersion, count)

        def package_slug(bundle: int, step: int) -> str:
            return f"b{bundle}-step-{step % per_bundle}"

        self._write(
            "skill packages",
            SkillPackage,
            ["id", "slug", "publisher_id", "created_at"],
            (
                (package_ids[index], package_slug(*divmod(index, per_bundle)), publisher_id, now)
                for index in range(count)
            ),
        )
        def content(index: int) -> tuple[str, str, str]:
            bundle, step = divmod(index, per_bundle)
            return (
                f"Bundle {bundle} step {step}",
                f"Step {step} of bundle {bundle}'s procedure.",
                f"Step {step}: read the records with @{TOOLS[index % len(TOOLS)]}, "
                f"then hand over to @{package_slug(bundle, step + 1)}.",
            )

        digests = [
            skill_digest(
                name=name, description=description, body=body, approvals=(), frontmatter={},
                files=(),
            )  # fmt: skip
            for name, description, body in map(content, range(count))
        ]
        self._write(
            "skill versions",
            SkillVersion,
            [
                "id",
                "package_id",
                "version",
                "name",
                "description",
                "body",
                "approvals",
                "frontmatter",
                "digest",
                "skill_md",
                "status",
                "created_at",
                "published_at",
            ],
            (
                (
                    version_ids[index],
                    package_ids[index],
                    "1.0.0",
                    *content(index),
                    self.empty_list,
                    self.empty_dict,
                    digests[index],
                    "",
                    Status.PUBLISHED,
                    now,
                    now,
                )
                for index in range(count)
            ),
        )
        # Published versions are signed, as publishing would sign them: the manifest built
        # from the same values the rows get (catalog.manifest), signed with the key the
        # publisher gets as every publisher does.
        key = publisher_key_ensure(publisher=Publisher.objects.get(pk=publisher_id))
        seed = unwrap_private(key.private_wrapped)

        def signed(bundle: int) -> tuple[str, str, str, int]:
            host = f"api-{bundle}.{prefix}.example.com"
            manifest = manifest_of(
                publisher=f"{prefix}-ops", bundle=f"{prefix}-bundle-{bundle}", version="1.0.0",
                description="First release.", notes="",
                hosts=[(host, 443, "Reach the records.")],
                credentials=[(f"BUNDLE_{bundle}_TOKEN", host, "API token.")],
                skills=[
                    ManifestSkill(package_slug(bundle, step), digests[index], ())
                    for step in range(per_bundle)
                    for index in [bundle * per_bundle + step]
                ],
            )  # fmt: skip
            data = canonical(manifest)
            return data.decode(), digest_of(data), b64(sign(data, seed)), key.pk

        bundle_ids = self.writer.reserve(Bundle, sizes.bundles)
        bundle_version_ids = self.writer.reserve(BundleVersion, sizes.bundles)
        self._write(
            "bundles",
            Bundle,
            ["id", "slug", "name", "description", "publisher_id", "created_at"],
            (
                (
                    bundle_id,
                    f"{prefix}-bundle-{b}",
                    f"{prefix} bundle {b:06d}",
                    f"Bench bundle {b}.",
                    publisher_id,
                    now,
                )
                for b, bundle_id in enumerate(bundle_ids)
            ),
        )
        self._write(
            "bundle versions",
            BundleVersion,
            [
                "id",
                "bundle_id",
                "version",
                "description",
                "notes",
                "status",
                "created_at",
                "published_at",
                "published_by_id",
                "yank_reason",
                "catalog_review",
                "catalog_review_flags",
                "catalog_review_reason",
                "catalog_reviewed_at",
                "findings",
                "findings_override_reason",
                "manifest",
                "manifest_sha256",
                "signature",
                "signing_key_id",
            ],
            (
                (
                    version_id,
                    bundle_id,
                    "1.0.0",
                    "First release.",
                    "",
                    Status.PUBLISHED,
                    now,
                    now,
                    operator_id,
                    "",
                    CatalogReview.APPROVED,  # the operator's own: in the catalog
                    self.empty_list,
                    "",
                    now,
                    self.empty_list,  # no findings: the seeded text holds none
                    "",
                    *signed(b),
                )
                for b, (bundle_id, version_id) in enumerate(
                    zip(bundle_ids, bundle_version_ids, strict=True)
                )
            ),
        )
        self._write(
            "bundle skills",
            BundleSkill,
            ["bundle_version_id", "skill_version_id", "position"],
            (
                (bundle_version_ids[bundle], version_ids[index], step + 1)
                for index in range(count)
                for bundle, step in [divmod(index, per_bundle)]
            ),
        )
        self._write(
            "bundle hosts",
            BundleHost,
            ["bundle_version_id", "host", "port", "purpose"],
            (
                (version_id, f"api-{b}.{prefix}.example.com", 443, "Reach the records.")
                for b, version_id in enumerate(bundle_version_ids)
            ),
        )
        self._write(
            "bundle credentials",
            BundleCredential,
            ["bundle_version_id", "name", "host", "purpose"],
            (
                (version_id, f"BUNDLE_{b}_TOKEN", f"api-{b}.{prefix}.example.com", "API token.")
                for b, version_id in enumerate(bundle_version_ids)
            ),
        )
        return bundle_version_ids

    def _workspaces(self, owner_ids: list[int], member_ids: list[int]) -> list[int]:
        ids = self.writer.reserve(Workspace, self.sizes.workspaces)
        self._write(
            "workspaces",
            Workspace,
            ["id", "slug", "name", "created_at", "listed_in_directory", *POLICY_FIELDS],
            (
                (workspace_id, f"{self.prefix}-{w}", f"{self.prefix} workspace {w}", self.now,
                 False, *POLICY_DEFAULTS)
                for w, workspace_id in enumerate(ids)
            ),  # fmt: skip
        )
        self._write(
            "memberships",
            Membership,
            ["workspace_id", "user_id", "role", "created_at"],
            (
                (workspace_id, user_id, role, self.now)
                for workspace_id, owner_id, member_id in zip(
                    ids, owner_ids, member_ids, strict=True
                )
                for user_id, role in ((owner_id, "owner"), (member_id, "member"))
            ),
        )
        return ids

    def _skills_and_agents(self, workspace_ids: list[int], owner_ids: list[int]) -> None:
        sizes, now = self.sizes, self.now
        per_workspace = sizes.skills_per_workspace
        per_skill = sizes.revisions_per_skill
        count = len(workspace_ids) * per_workspace
        skill_ids = self.writer.reserve(WorkspaceSkill, count)
        revision_ids = self.writer.reserve(SkillRevision, count * per_skill)
        # Foreign keys are checked at commit, so skills may name heads written next.
        self._write(
            "workspace skills",
            WorkspaceSkill,
            ["id", "workspace_id", "slug", "head_id", "enabled", "advertised", "created_at"],
            (
                (
                    skill_ids[index],
                    workspace_ids[index // per_workspace],
                    f"skill-{index % per_workspace}",
                    revision_ids[index * per_skill + per_skill - 1],
                    True,
                    True,
                    now,
                )
                for index in range(count)
            ),
        )
        self._write(
            "skill revisions",
            SkillRevision,
            [
                "id",
                "skill_id",
                "number",
                "name",
                "short_description",
                "body",
                "approvals",
                "frontmatter",
                "origin",
                "created_by_id",
                "created_at",
                "comment",
            ],
            (
                (
                    revision_ids[index * per_skill + number - 1],
                    skill_ids[index],
                    number,
                    f"Skill {local}",
                    f"Procedure {local}, revision {number}.",
                    f"Procedure {local} (revision {number}): look it up with "
                    f"@{TOOLS[local % len(TOOLS)]}, then continue with "
                    f"@skill-{(local + 1) % per_workspace}.",
                    self.empty_list,
                    self.empty_dict,
                    SkillRevision.Origin.CATALOG,
                    owner_ids[index // per_workspace],
                    now,
                    "",
                )
                for index in range(count)
                for local in [index % per_workspace]
                for number in range(1, per_skill + 1)
            ),
        )
        per_agent_count = sizes.agents_per_workspace
        agent_ids = self.writer.reserve(Agent, len(workspace_ids) * per_agent_count)
        self._write(
            "agents",
            Agent,
            ["id", "workspace_id", "slug", "name", "system_prompt", "created_at"],
            (
                (
                    agent_id,
                    workspace_ids[index // per_agent_count],
                    f"agent-{index % per_agent_count}",
                    f"Agent {index % per_agent_count:05d}",
                    "",
                    now,
                )
                for index, agent_id in enumerate(agent_ids)
            ),
        )
        per_agent = sizes.skills_per_agent
        self._write(
            "agent skills",
            AgentSkill,
            ["agent_id", "skill_id", "position", "pinned_revision_id", "enabled"],
            (
                (
                    agent_id,
                    skill_ids[base + local],
                    position,
                    None if position % 5 == 0 else revision_ids[(base + local) * per_skill],
                    True,
                )
                for index, agent_id in enumerate(agent_ids)
                for base in [(index // per_agent_count) * per_workspace]
                for position in range(1, per_agent + 1)
                # Each agent takes a run of distinct skills, wrapping round the workspace's.
                for local in [(index * per_agent + position - 1) % per_workspace]
            ),
        )

    def _history(self, operator_id: int) -> None:
        from reversion.models import Revision

        total = sum(self.rows.values())
        Revision.objects.create(
            date_created=timezone.now(),
            user_id=operator_id,
            comment=f"bench_seed: wrote {total:,} rows of benchmark data under prefix "
            f"{self.prefix!r}",
        )
