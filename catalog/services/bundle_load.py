"""Loading a bundle folder into the catalog, and reading a version back out."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import reversion
from django.db import transaction

from catalog.bundle_files import (
    BundleFileError,
    BundleSpec,
    CredentialSpec,
    FileSpec,
    HostSpec,
    SkillSpec,
    has_frontmatter_key,
)
from catalog.finding_rules import guardrail_rules
from catalog.findings import body_line_offset, is_markdown
from catalog.manifest import Provenance
from catalog.mentions import describe_unresolved, unresolved_by_skill
from catalog.models import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    FileBlob,
    Publisher,
    SkillFile,
    SkillPackage,
    SkillVersion,
    Status,
)
from pixie.core.audit.records import audited

from .findings import (
    ScanAside,
    ScanInputs,
    SkillToScan,
    findings_scanned_aside,
    markdown_texts,
    scan_inputs,
)
from .publishing import bundle_version_publish, tool_slugs
from .signing import (
    carried_signature_fields,
    carried_signature_problems,
    publisher_key_ensure,
    signature_file_of,
)


@dataclass(frozen=True)
class BundleLoadResult:
    bundle_version: BundleVersion
    created: bool
    published: bool
    skill_versions_created: int
    skill_versions_reused: int = 0
    notices: list[str] = field(default_factory=list)


def bundle_spec_of(bundle_version: BundleVersion) -> BundleSpec:
    """The version as the file format sees it (used by bundle_dump, downloads and
    comparisons), files and all."""
    entries = list(
        bundle_version.skills.select_related("skill_version__package").order_by("position", "id")
    )
    files = skill_files_of([e.skill_version_id for e in entries])
    return BundleSpec(
        signature=signature_file_of(bundle_version),
        slug=bundle_version.bundle.slug,
        name=bundle_version.bundle.name,
        version=bundle_version.version,
        description=bundle_version.description,
        notes=bundle_version.notes,
        publisher=bundle_version.bundle.publisher.slug,
        skills=[skill_spec_of(e.skill_version, files.get(e.skill_version_id, ())) for e in entries],
        hosts=[HostSpec(h.host, h.port, h.purpose) for h in bundle_version.hosts.all()],
        credentials=[
            CredentialSpec(c.name, c.host, c.purpose) for c in bundle_version.credentials.all()
        ],
    )


def skill_files_of(version_ids) -> dict[int, tuple[FileSpec, ...]]:
    """Each skill version's files with their bytes, in two queries whatever their number."""
    rows = list(
        SkillFile.objects.filter(skill_version_id__in=version_ids)
        .order_by("skill_version_id", "path")
        .values_list("skill_version_id", "path", "executable", "blob_id")
    )
    data = dict(
        FileBlob.objects.filter(sha256__in={r[3] for r in rows}).values_list("sha256", "content")
    )
    found: dict[int, list[FileSpec]] = {}
    for version_id, path, executable, sha in rows:
        found.setdefault(version_id, []).append(FileSpec(path, bytes(data[sha]), executable))
    return {version_id: tuple(files) for version_id, files in found.items()}


def skill_spec_of(version: SkillVersion, files: tuple[FileSpec, ...] = ()) -> SkillSpec:
    return SkillSpec(
        slug=version.package.slug,
        version=version.version,
        name=version.name,
        description=version.description,
        body=version.body,
        approvals=version.approvals,
        frontmatter=version.frontmatter,
        files=files,
        skill_md=version.skill_md,
        approvals_in_file=bool(version.skill_md)
        and has_frontmatter_key(version.skill_md, "approvals"),
    )


@dataclass
class _Resolution:
    """Where each skill of a bundle lands in the catalog: an existing version with the
    same content (by digest), or a new version under a label."""

    reuse: dict[str, SkillVersion] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


def _resolve(spec: BundleSpec, problems: list[str]) -> _Resolution:
    """A skill version is its content: the same digest reuses the stored version, whatever
    its label; a new content needs a label not yet used by its package."""
    resolution = _Resolution()
    stored: dict[str, list[SkillVersion]] = {}
    # Labels and digests only: a package's earlier versions may hold long bodies.
    for version in (
        SkillVersion.objects.select_related("package")
        .filter(
            package__slug__in=[s.slug for s in spec.skills],
            package__publisher__slug=spec.publisher,
        )
        .only("id", "version", "digest", "package__slug")
    ):
        stored.setdefault(version.package.slug, []).append(version)
    for skill in spec.skills:
        versions = stored.get(skill.slug, [])
        digest = skill.digest
        same = [v for v in versions if v.digest == digest]
        if same:
            resolution.reuse[skill.slug] = min(same, key=lambda v: v.pk)
            continue
        labels = {v.version for v in versions}
        if skill.version not in labels:
            resolution.labels[skill.slug] = skill.version
        elif not skill.version_given:
            # The label came from the bundle's version, not the skill: keep it, and tell
            # this content apart with semver build metadata.
            resolution.labels[skill.slug] = f"{skill.version.split('+')[0]}+{digest[:8]}"
        else:
            problems.append(
                f"{skill.source}: @{skill.slug} {skill.version} already exists with different "
                "content; give the changed skill a new version"
            )
    return resolution


def _problems(spec: BundleSpec, tools: set[str]) -> list[str]:
    """Checks that need the database: tools, the publisher, mentions."""
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
    return problems


def bundle_version_holds(existing: BundleVersion, spec: BundleSpec) -> bool:
    """Whether a stored version holds what the parsed folder holds (its description,
    notes, skills by content in order, hosts and credentials), whatever its number: the
    content identity a source compares upstream with."""
    return _same_bundle_version(existing, spec)


def _same_bundle_version(existing: BundleVersion, spec: BundleSpec) -> bool:
    stored = list(
        existing.skills.select_related("skill_version__package")
        .order_by("position", "id")
        .values_list("skill_version__package__slug", "skill_version__digest")
    )
    return (
        existing.description == spec.description
        and existing.notes == spec.notes
        and stored == [(s.slug, s.digest) for s in spec.skills]
        and sorted((h.host, h.port, h.purpose) for h in existing.hosts.all())
        == sorted((h.host, h.port, h.purpose) for h in spec.hosts)
        and sorted((c.name, c.host, c.purpose) for c in existing.credentials.all())
        == sorted((c.name, c.host, c.purpose) for c in spec.credentials)
    )


@dataclass
class BundleLoadCheck:
    """What loading a parsed bundle would do, read without writing anything."""

    problems: list[str]
    existing: BundleVersion | None
    resolution: _Resolution

    def reused(self, slug: str) -> SkillVersion | None:
        """The stored skill version with the same content, if the skill reuses one."""
        return self.resolution.reuse.get(slug)


def bundle_load_check(spec: BundleSpec) -> BundleLoadCheck:
    """The checks bundle_load makes against the catalog (tools, publisher, mentions, an
    existing version, skill labels), and which skills reuse a stored version."""
    problems = _problems(spec, tool_slugs())
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
    resolution = _resolve(spec, problems)
    if spec.signature is not None:
        problems.extend(carried_signature_problems(spec, spec.signature))
    return BundleLoadCheck(problems=problems, existing=existing, resolution=resolution)


def bundle_load(
    *,
    spec: BundleSpec,
    actor,
    publish: bool = False,
    findings_override: str = "",
    provenance: Provenance | None = None,
    comment: str = "",
) -> BundleLoadResult:
    """Write a parsed bundle folder into the catalog, all of it or nothing.

    Loading the same folder twice changes nothing; a version that exists with
    other content is refused, since published versions never change. A skill whose
    content is already in the catalog reuses that skill version. ``provenance``: the
    upstream commit a source read the folder from, kept on a new version.
    """
    check = bundle_load_check(spec)
    if check.problems:
        raise BundleFileError(check.problems)
    existing, resolution = check.existing, check.resolution

    comment = comment or f"Loaded bundle {spec.slug} {spec.version} from files"
    # The bytes just read: the findings scan need not read them back.
    blobs = {f.sha256: f.data for s in spec.skills for f in s.files} if publish else None
    # A new version to publish: its findings are scanned while its files are stored.
    scanning: AbstractContextManager[ScanAside | None] = (
        findings_scanned_aside(_scan_inputs_of_spec(spec), blobs)
        if publish and existing is None
        else nullcontext()
    )
    with transaction.atomic(), audited(actor=actor, comment=comment), scanning as aside:
        created_skills = 0
        if existing is None:
            bundle_version, created_skills = _create(spec, resolution, aside, provenance)
        else:
            bundle_version = existing
        published = False
        if publish and bundle_version.status == Status.DRAFT:
            bundle_version = bundle_version_publish(
                bundle_version=bundle_version,
                actor=actor,
                findings_override=findings_override,
                blobs=blobs,
                findings_aside=aside,
            )
            published = True
    return BundleLoadResult(
        bundle_version=bundle_version,
        created=existing is None,
        published=published,
        skill_versions_created=created_skills,
        skill_versions_reused=len(resolution.reuse) if existing is None else 0,
        notices=list(spec.notices),
    )


def spec_findings(spec: BundleSpec) -> list[dict]:
    """The findings the folder's text would have once loaded, scanned from the bytes in
    memory (no query): what an upload's preview shows before anything is written."""
    inputs = _scan_inputs_of_spec(spec)
    blobs = {f.sha256: f.data for s in spec.skills for f in s.files}
    return scan_inputs(inputs, markdown_texts(inputs, blobs))


def _scan_inputs_of_spec(spec: BundleSpec) -> ScanInputs:
    """What the findings scan will read of the version once stored (scan_inputs_of), as
    the folder gives it: equal unless a skill reuses a stored version that differs from
    the folder's in what the digest leaves out (its SKILL.md's frontmatter lines, say)."""
    return ScanInputs(
        skills=tuple(
            SkillToScan(
                slug=skill.slug,
                body=skill.body,
                body_offset=body_line_offset(skill.skill_md, skill.body),
                markdown=tuple(
                    sorted((f.path, f.sha256) for f in skill.files if is_markdown(f.path))
                ),
            )
            for skill in spec.skills
        ),
        hosts=tuple(sorted(h.host for h in spec.hosts)),
        credentials=tuple(sorted(c.name for c in spec.credentials)),
        rules=guardrail_rules(),
    )


def blobs_store(files) -> None:
    """Store each file's bytes once: a digest already stored is not written again."""
    wanted = {f.sha256: f for f in files}
    if not wanted:
        return
    have = set(FileBlob.objects.filter(sha256__in=wanted).values_list("sha256", flat=True))
    new = [(sha, f.size, f.data) for sha, f in wanted.items() if sha not in have]
    # With server-side binding (DB_PREPARED_STATEMENTS=on) the bytes go as binary
    # parameters; bound into the SQL text (the default) they are escaped to hex and
    # parsed back, twice their size (about 4x as long for 50 MiB).
    FileBlob.objects.bulk_create(
        (FileBlob(sha256=sha, size=size, content=data) for sha, size, data in new),
        batch_size=50,
        ignore_conflicts=True,  # another load storing the same bytes at once
    )


def _create(
    spec: BundleSpec,
    resolution: _Resolution,
    aside: ScanAside | None = None,
    provenance: Provenance | None = None,
) -> tuple[BundleVersion, int]:
    publisher, _ = Publisher.objects.get_or_create(
        slug=spec.publisher,
        defaults={"name": spec.publisher.replace("-", " ").title(), "kind": "operator"},
    )
    publisher_key_ensure(publisher=publisher)
    bundle, _ = Bundle.objects.get_or_create(
        slug=spec.slug,
        defaults={"name": spec.name, "description": spec.description, "publisher": publisher},
    )
    if bundle.name != spec.name or bundle.description != spec.description:
        bundle.name, bundle.description = spec.name, spec.description
        bundle.save(update_fields=["name", "description"])
    bundle_version = BundleVersion.objects.create(
        bundle=bundle,
        version=spec.version,
        description=spec.description,
        notes=spec.notes,
        # Signed elsewhere and checked (bundle_load_check): the signature is kept as it came.
        **(carried_signature_fields(spec.signature) if spec.signature else {}),
        **(provenance.fields() if provenance else {}),
    )
    new = [s for s in spec.skills if s.slug not in resolution.reuse]
    packages = {
        package.slug: package
        for package in SkillPackage.objects.filter(
            publisher=publisher, slug__in=[s.slug for s in new]
        )
    }
    missing = [
        SkillPackage(slug=s.slug, publisher=publisher) for s in new if s.slug not in packages
    ]
    for package in SkillPackage.objects.bulk_create(missing):
        packages[package.slug] = package
    if aside is not None:
        aside.start()  # the findings scanned while the bytes are stored
    blobs_store(f for s in new for f in s.files)
    made = SkillVersion.objects.bulk_create(
        SkillVersion(
            package=packages[s.slug],
            version=resolution.labels[s.slug],
            name=s.name,
            description=s.description,
            body=s.body,
            approvals=s.approvals,
            frontmatter=s.frontmatter,
            digest=s.digest,
            skill_md=s.skill_md,
        )
        for s in new
    )
    files = SkillFile.objects.bulk_create(
        (
            SkillFile(
                skill_version=version,
                path=f.path,
                blob_id=f.sha256,
                size=f.size,
                executable=f.executable,
                media_type=f.media_type,
            )
            for version, s in zip(made, new, strict=True)
            for f in s.files
        ),
        batch_size=500,
    )
    versions = {**resolution.reuse, **{s.slug: v for v, s in zip(made, new, strict=True)}}
    BundleSkill.objects.bulk_create(
        BundleSkill(bundle_version=bundle_version, skill_version=versions[s.slug], position=i)
        for i, s in enumerate(spec.skills, start=1)
    )
    BundleHost.objects.bulk_create(
        BundleHost(bundle_version=bundle_version, host=h.host, port=h.port, purpose=h.purpose)
        for h in spec.hosts
    )
    BundleCredential.objects.bulk_create(
        BundleCredential(bundle_version=bundle_version, name=c.name, host=c.host, purpose=c.purpose)
        for c in spec.credentials
    )
    # Bulk writes send no signals: put the new rows in the history by hand. File rows
    # record path, mode and digest; their bytes (FileBlob) are never in the history.
    for row in (*made, *files, *missing):
        reversion.add_to_revision(row)
    return bundle_version, len(made)
