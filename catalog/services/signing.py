"""Publishers' signing keys, and the signature every published bundle version carries.

A signature always proves integrity: what a workspace is about to receive is what
the publisher signed. Whether the signer is trusted is a separate fact, the
operator's approval of the publisher (``Publisher.is_trusted``), shown beside it.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import reversion
from django.db import connection, transaction
from django.db.models import CharField, F, Func, Value
from django.db.models.functions import Cast
from django.utils import timezone
from nacl.signing import SigningKey

from catalog.bundle_files import BundleSpec
from catalog.manifest import (
    ManifestFile,
    ManifestSkill,
    SignatureFile,
    canonical,
    differences,
    digest_of,
    manifest_of,
    public_key_of,
    sign,
    signature_verifies,
)
from catalog.models import (
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    FileBlob,
    Publisher,
    PublisherKey,
    SkillFile,
)
from catalog.skill_content import sha256_of, skill_digest
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, PixieError, ValidationFailed
from pixie.core.keys import b64, key_fingerprint, key_from_b64, server_tag, unwrap_private
from pixie.core.keys import wrap_private as wrap
from pixie.core.names import name_problem
from pixie.core.namespace.engine import is_slug

KEY_TAG_PERSON = b"pixie-pub-key"


class ContentNotAsSigned(PixieError):
    """Stored content differs from what its publisher signed: it is not applied."""

    code = ErrorCode.NOT_AS_SIGNED
    status = 409


# --- keys ---------------------------------------------------------------------------


def _tag(publisher_id: int, public_key: bytes) -> str:
    return server_tag(f"{publisher_id}:".encode() + public_key, person=KEY_TAG_PERSON)


def key_is_genuine(key: PublisherKey) -> bool:
    """Whether the key row was written by this server (its tag needs the wrapping key)."""
    return key.tag == _tag(key.publisher_id, key.raw_public_key)


def _key_create(*, publisher: Publisher, public_key: bytes | None = None) -> PublisherKey:
    """A new active key: generated and held by Pixie, or a public key held outside."""
    if public_key is None:
        seed = bytes(SigningKey.generate())
        public_key, private_wrapped = public_key_of(seed), wrap(seed)
    else:
        private_wrapped = None
    return PublisherKey.objects.create(
        publisher=publisher,
        public_key=b64(public_key),
        private_wrapped=private_wrapped,
        tag=_tag(publisher.pk, public_key),
    )


def publisher_key_ensure(*, publisher: Publisher) -> PublisherKey:
    """The publisher's active signing key, made now if it has none (every publisher has
    one from its creation; this also covers publishers made before signing existed)."""
    with transaction.atomic():
        Publisher.objects.select_for_update().filter(pk=publisher.pk).first()
        key = PublisherKey.objects.filter(publisher=publisher, retired_at=None).first()
        if key is None:
            key = _key_create(publisher=publisher)
            if reversion.is_active():
                reversion.add_to_revision(key)
        return key


def publisher_key_rotate(
    *, publisher: Publisher, actor, public_key: str | None = None
) -> PublisherKey:
    """Retire the publisher's active key and put a new one in its place: generated here,
    or ``public_key`` (base64), a key the publisher holds outside Pixie. Versions signed
    with the retired key still verify with it."""
    raw = None
    if public_key is not None:
        raw = key_from_b64(public_key.strip())
        if raw is None:
            raise ValidationFailed(
                "The public key must be the base64 of a 32-byte Ed25519 key (44 characters)."
            )
        if PublisherKey.objects.filter(public_key=b64(raw)).exists():
            raise ValidationFailed(
                f"The key {key_fingerprint(raw)} is already registered; a key belongs to one "
                "publisher."
            )
    held = "held outside Pixie" if raw is not None else "held by Pixie"
    with audited(actor=actor, comment=f"New signing key for {publisher} ({held})"):
        locked = Publisher.objects.select_for_update().get(pk=publisher.pk)
        now = timezone.now()
        for old in PublisherKey.objects.filter(publisher=locked, retired_at=None):
            old.retired_at = now
            old.save(update_fields=["retired_at"])
        key = _key_create(publisher=locked, public_key=raw)
        reversion.add_to_revision(key)
        return key


def publisher_key_register(
    *, slug: str, public_key: str, actor, name: str | None = None
) -> PublisherKey:
    """Register the key of a publisher that signs outside Pixie, making the publisher (a
    third party) if it is not here yet; one transaction, in the history."""
    if not is_slug(slug):
        raise ValidationFailed(f"{slug!r} is not a publisher slug (^[a-z0-9][a-z0-9-]{{0,63}}$)")
    if name and (problem := name_problem(name)):
        raise ValidationFailed(f"the publisher's name {problem}")
    with audited(actor=actor, comment=f"Registered a signing key for publisher {slug}"):
        publisher = Publisher.objects.filter(slug=slug).first()
        if publisher is None:
            publisher = Publisher.objects.create(
                slug=slug,
                name=name or slug.replace("-", " ").title(),
                kind=Publisher.Kind.THIRD_PARTY,
            )
        return publisher_key_rotate(publisher=publisher, actor=actor, public_key=public_key)


# --- manifests ------------------------------------------------------------------------


def manifest_of_spec(spec: BundleSpec) -> dict:
    """The manifest of a bundle folder as read from files (what a loader compares with the
    manifest its signature file carries)."""
    return manifest_of(
        publisher=spec.publisher,
        bundle=spec.slug,
        version=spec.version,
        description=spec.description,
        notes=spec.notes,
        hosts=((h.host, h.port, h.purpose) for h in spec.hosts),
        credentials=((c.name, c.host, c.purpose) for c in spec.credentials),
        skills=(
            ManifestSkill(
                slug=s.slug,
                digest=s.digest,
                files=tuple(ManifestFile(f.path, f.executable, f.size, f.sha256) for f in s.files),
            )
            for s in spec.skills
        ),
    )


def manifest_of_version(bundle_version: BundleVersion, *, read_bytes: bool) -> dict:
    """The manifest of a stored version, each skill's digest computed afresh from its
    stored fields. With ``read_bytes`` each file's sha256 is that of its stored bytes
    (verification); without, the digest the bytes are stored under (signing, where
    the bytes were hashed as they were stored)."""
    return _stored_content(bundle_version, read_bytes=read_bytes)[0]


def _stored_content(
    bundle_version: BundleVersion, *, read_bytes: bool
) -> tuple[dict, dict[int, str]]:
    """The manifest, and each skill version's body by id (what an apply compares its
    steps with)."""
    entries = list(_entries(bundle_version.pk))
    files: dict[int, list[ManifestFile]] = {}
    rows = list(_files(bundle_version.pk))
    actual = {sha: sha for *_, sha in rows}
    if read_bytes:
        actual = stored_bytes_sha256(actual)
    for version_id, path, executable, size, sha in rows:
        files.setdefault(version_id, []).append(
            ManifestFile(path, executable, size, actual.get(sha, "missing"))
        )
    skills = []
    for version_id, slug, name, description, body, approvals, frontmatter in entries:
        skill_files = tuple(files.get(version_id, ()))
        digest = skill_digest(
            name=name,
            description=description,
            body=body,
            approvals=approvals,
            frontmatter=frontmatter,
            files=((f.path, f.executable, f.sha256) for f in skill_files),
        )
        skills.append(ManifestSkill(slug=slug, digest=digest, files=skill_files))
    hosts, credentials = _hosts_and_credentials(bundle_version)
    manifest = manifest_of(
        publisher=bundle_version.bundle.publisher.slug,
        bundle=bundle_version.bundle.slug,
        version=bundle_version.version,
        description=bundle_version.description,
        notes=bundle_version.notes,
        hosts=hosts,
        credentials=credentials,
        skills=skills,
        provenance=bundle_version.provenance,
    )
    return manifest, {entry[0]: entry[4] for entry in entries}


def _hosts_and_credentials(bundle_version: BundleVersion) -> tuple[list, list]:
    """The version's (host, port, purpose) and (name, host, purpose) rows."""
    found: tuple[list, list] = ([], [])
    for of, a, b, c in _hosts_and_credentials_query(bundle_version.pk):
        if of == "host":
            found[0].append((a, int(b), c))
        else:
            found[1].append((a, b, c))
    return found


# What a manifest is computed from, read on every apply.
def _entries(bundle_version_id: int):
    return (
        BundleSkill.objects.filter(bundle_version_id=bundle_version_id)
        .order_by("position", "id")
        .values_list(
            "skill_version_id",
            "skill_version__package__slug",
            "skill_version__name",
            "skill_version__description",
            "skill_version__body",
            "skill_version__approvals",
            "skill_version__frontmatter",
        )
    )


def _files(bundle_version_id: int):
    return (
        SkillFile.objects.filter(skill_version__bundle_entries__bundle_version_id=bundle_version_id)
        .order_by("skill_version_id", "path")
        .values_list("skill_version_id", "path", "executable", "size", "blob_id")
    )


def _hosts_and_credentials_query(bundle_version_id: int):
    """One UNION: the port as text, a credential's host in its place."""
    text = CharField()
    hosts = BundleHost.objects.filter(bundle_version_id=bundle_version_id).annotate(
        of=Value("host", output_field=text), a=F("host"), b=Cast("port", text), c=F("purpose")
    )
    credentials = BundleCredential.objects.filter(bundle_version_id=bundle_version_id).annotate(
        of=Value("credential", output_field=text), a=F("name"), b=F("host"), c=F("purpose")
    )
    return (
        hosts.order_by()
        .values_list("of", "a", "b", "c")
        .union(credentials.order_by().values_list("of", "a", "b", "c"), all=True)
    )


class _Sha256Hex(Func):
    """PostgreSQL hashes the bytes where they are stored (pg_catalog's own sha256, named
    so no function earlier on the search path can stand in for it)."""

    template = "encode(pg_catalog.sha256(%(expressions)s), 'hex')"
    output_field = CharField()


def stored_bytes_sha256(digests) -> dict[str, str]:
    """The sha256 of the bytes stored under each digest, as they are now: hashed by
    PostgreSQL in place (50 MiB need not cross the connection), else read and hashed."""
    blobs = FileBlob.objects.filter(sha256__in=digests)
    if connection.vendor == "postgresql":
        return dict(blobs.annotate(actual=_Sha256Hex("content")).values_list("sha256", "actual"))
    rows = blobs.values_list("sha256", "content")
    return {sha: sha256_of(bytes(content)) for sha, content in rows}


# --- signing at publish, checking at load -----------------------------------------------


def bundle_version_sign(bundle_version: BundleVersion) -> None:
    """Set the version's manifest and signature (not saved: publishing saves it).

    A version loaded with its publisher's signature keeps it, if it still matches what
    is stored; otherwise the publisher's active key signs, when Pixie holds it."""
    publisher = bundle_version.bundle.publisher
    manifest = manifest_of_version(bundle_version, read_bytes=False)
    data = canonical(manifest)
    if bundle_version.signature and bundle_version.signing_key_id:
        carried = bundle_version.signing_key
        if (
            bundle_version.manifest.encode("utf-8") == data
            and key_is_genuine(carried)
            and signature_verifies(
                data, _signature_bytes(bundle_version.signature), carried.raw_public_key
            )
        ):
            return
    key = publisher_key_ensure(publisher=publisher)
    if not key.held_by_pixie:
        problems = [
            f"{bundle_version} must carry its publisher's signature to be published: "
            f"{publisher} signs outside Pixie, so load it with its bundle.signature.json"
        ]
        if bundle_version.signature:
            problems = [
                f"{bundle_version} cannot be published: "
                + "; ".join(differences(_stored_manifest(bundle_version), manifest, publisher.name))
            ]
        raise ValidationFailed(problems, code=ErrorCode.PUBLISH_REFUSED)
    seed = unwrap_private(key.private_wrapped)
    bundle_version.manifest = data.decode("utf-8")
    bundle_version.manifest_sha256 = digest_of(data)
    bundle_version.signature = b64(sign(data, seed))
    bundle_version.signing_key = key


SIGNATURE_FIELDS = ["manifest", "manifest_sha256", "signature", "signing_key"]


def carried_signature_problems(spec: BundleSpec, signature: SignatureFile) -> list[str]:
    """Why a bundle folder's signature file cannot be trusted, each problem named; none
    when its publisher's registered key signed exactly this content."""
    label = "bundle.signature.json"
    if signature.signer != spec.publisher:
        return [f"{label}: signed by {signature.signer!r}, but bundle.toml's publisher is "
                f"{spec.publisher!r}"]  # fmt: skip
    publisher = Publisher.objects.filter(slug=spec.publisher).first()
    fingerprint = key_fingerprint(signature.public_key)
    if publisher is None:
        return [
            f"{label}: publisher {spec.publisher!r} is not registered here; an operator "
            "registers it and its public key first (manage.py publisher_key_register)"
        ]
    key = PublisherKey.objects.filter(
        publisher=publisher, public_key=b64(signature.public_key)
    ).first()
    if key is None or not key_is_genuine(key):
        return [f"{label}: signed with the key {fingerprint}, which is not a key of "
                f"{publisher} here (an operator registers a publisher's key with "
                "manage.py publisher_key_register)"]  # fmt: skip
    data = canonical(signature.manifest)
    if not signature_verifies(data, signature.signature, signature.public_key):
        return [f"{label}: the signature does not verify with {publisher}'s key "
                f"{fingerprint}: the manifest was changed after it was signed"]  # fmt: skip
    return [f"{label}: {p}" for p in differences(signature.manifest, manifest_of_spec(spec),
                                                 publisher.name)]  # fmt: skip


def carried_signature_fields(signature: SignatureFile) -> dict:
    """The fields a version loaded with a checked signature file stores."""
    data = canonical(signature.manifest)
    return {
        "manifest": data.decode("utf-8"),
        "manifest_sha256": digest_of(data),
        "signature": b64(signature.signature),
        "signing_key": PublisherKey.objects.get(public_key=b64(signature.public_key)),
    }


def signature_file_of(bundle_version: BundleVersion) -> SignatureFile | None:
    """The version's signature as the file that travels beside its bundle.toml."""
    if not bundle_version.signature or bundle_version.signing_key_id is None:
        return None
    return SignatureFile(
        signer=bundle_version.bundle.publisher.slug,
        public_key=bundle_version.signing_key.raw_public_key,
        signature=_signature_bytes(bundle_version.signature),
        manifest=_stored_manifest(bundle_version),
    )


# --- verifying before anything is applied ------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """A version whose stored content is what its publisher signed."""

    bundle_version: BundleVersion
    manifest: dict
    bodies: dict[int, str]  # each skill version's verified body, by id

    @property
    def hosts(self) -> set[tuple[str, int]]:
        return {(h["host"], h["port"]) for h in self.manifest["hosts"]}

    @property
    def credentials(self) -> set[str]:
        return {c["name"] for c in self.manifest["credentials"]}


def bundle_version_verify(*, bundle_version: BundleVersion, fresh: bool = False) -> Verified:
    """Check the stored version against its signed manifest, reading every file's bytes;
    raise ContentNotAsSigned naming the first thing that differs. ``fresh``: the caller
    read the version in this transaction, with its bundle's publisher and its signing key
    (an apply, with its plan), so its row is not read again."""
    if not fresh:
        bundle_version = (
            BundleVersion.objects.select_related("bundle__publisher", "signing_key")
            .filter(pk=bundle_version.pk)
            .get()
        )
    publisher = bundle_version.bundle.publisher
    key = bundle_version.signing_key
    if not bundle_version.signature or key is None:
        raise ContentNotAsSigned(
            f"{bundle_version} is not signed by {publisher.name}, so what it holds cannot be "
            "checked; it is not applied"
        )
    if not key_is_genuine(key) or key.publisher_id != publisher.pk:
        raise ContentNotAsSigned(
            f"{bundle_version} is signed with the key {key.fingerprint}, which this server "
            f"did not register for {publisher.name}; it is not applied"
        )
    data = bundle_version.manifest.encode("utf-8")
    if digest_of(data) != bundle_version.manifest_sha256 or not signature_verifies(
        data, _signature_bytes(bundle_version.signature), key.raw_public_key
    ):
        raise ContentNotAsSigned(
            f"the signature of {bundle_version} does not verify with {publisher.name}'s key "
            f"{key.fingerprint}: its manifest was changed after it was signed"
        )
    signed = _stored_manifest(bundle_version)
    actual, bodies = _stored_content(bundle_version, read_bytes=True)
    problems = differences(signed, actual, publisher.name)
    if problems:
        raise ContentNotAsSigned(problems[0])
    return Verified(bundle_version=bundle_version, manifest=signed, bodies=bodies)


def _stored_manifest(bundle_version: BundleVersion) -> dict:
    try:
        manifest = json.loads(bundle_version.manifest)
    except ValueError:
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _signature_bytes(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return b""


@dataclass(frozen=True)
class SignatureSummary:
    """What a page or the API says of a version's signature (no bytes are read)."""

    signed: bool
    signer: str
    signer_trusted: bool
    key_fingerprint: str
    key_retired: bool
    key_held_by_pixie: bool
    manifest_sha256: str


def signature_summary(bundle_version: BundleVersion) -> SignatureSummary:
    """From the version with its bundle's publisher and signing key already loaded."""
    publisher = bundle_version.bundle.publisher
    key = bundle_version.signing_key if bundle_version.signing_key_id else None
    return SignatureSummary(
        signed=bool(bundle_version.signature and key),
        signer=publisher.name,
        signer_trusted=publisher.is_trusted,
        key_fingerprint=key.fingerprint if key else "",
        key_retired=bool(key and key.retired_at),
        key_held_by_pixie=bool(key and key.held_by_pixie),
        manifest_sha256=bundle_version.manifest_sha256,
    )


def signature_words(summary: SignatureSummary) -> str:
    """The signature in one line, as the version and plan pages show it."""
    if not summary.signed:
        return "Not signed yet: the publisher's key signs the version when it is published."
    trust = "operator-approved" if summary.signer_trusted else "not operator-approved"
    retired = ", since retired" if summary.key_retired else ""
    held = "" if summary.key_held_by_pixie else ", held outside Pixie"
    return (
        f"Signed by {summary.signer} ({trust}) with key {summary.key_fingerprint}"
        f"{held}{retired}; manifest sha256 {summary.manifest_sha256[:16]}…. Every install, "
        "upgrade and roll-back checks the stored content against it first."
    )
