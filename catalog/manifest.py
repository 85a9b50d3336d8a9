"""A bundle version's manifest: what its publisher signs, as canonical JSON. Pure.

The manifest names everything a workspace receives from the version: the bundle
and version, its description and notes, its hosts and credential names, and each
skill in order with its digest (catalog.skill_content: name, description, body,
approvals, frontmatter and files) and each file's path, mode, size and sha256. Like
the digest, it leaves out a skill's version label: the same content under another
label is the same skill version. Canonical means sorted keys, UTF-8, no spaces,
so the same content always gives the same bytes, here or on another server.

Signing is Ed25519 (PyNaCl) over those bytes. A signature file travels beside
bundle.toml as ``bundle.signature.json``:

    {"format": "pixie-bundle-signature/1", "signer": <publisher slug>,
     "key": <base64 public key>, "signature": <base64 signature>,
     "manifest": <the manifest>}

A version made from a source (pixie.sources) also names the upstream commit it was made
from under the optional key ``source`` (repository, ref, commit, committed_at, author,
message). The key is there only when the version has a source, so the manifest of every
other version is byte for byte what it was, and signatures made before still verify.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import nacl.exceptions
from nacl.signing import SigningKey, VerifyKey

from pixie.core.b64 import bytes_from_b64

MANIFEST_FORMAT = "pixie-bundle-manifest/1"
SIGNATURE_FORMAT = "pixie-bundle-signature/1"
SIGNATURE_FILE = "bundle.signature.json"
SIGNATURE_FILE_KEYS = frozenset({"format", "signer", "key", "signature", "manifest"})
SIGNATURE_BYTES = 64


@dataclass(frozen=True)
class ManifestFile:
    path: str
    executable: bool
    size: int
    sha256: str


@dataclass(frozen=True)
class ManifestSkill:
    slug: str
    digest: str
    files: tuple[ManifestFile, ...]


@dataclass(frozen=True)
class Provenance:
    """The upstream commit a bundle version was made from (its source's repository and
    ref, the commit's SHA, date, author and message as Pixie keeps them)."""

    repository: str
    ref: str
    commit: str
    committed_at: datetime | None = None
    author: str = ""
    message: str = ""

    @classmethod
    def of(cls, bundle_version) -> Provenance | None:
        """A stored version's provenance (its ``source_*`` fields), or None."""
        if not bundle_version.source_commit:
            return None
        return cls(
            repository=bundle_version.source_repository,
            ref=bundle_version.source_ref,
            commit=bundle_version.source_commit,
            committed_at=bundle_version.source_committed_at,
            author=bundle_version.source_author,
            message=bundle_version.source_message,
        )

    def fields(self) -> dict:
        """The BundleVersion fields that store it."""
        return {
            "source_repository": self.repository,
            "source_ref": self.ref,
            "source_commit": self.commit,
            "source_committed_at": self.committed_at,
            "source_author": self.author,
            "source_message": self.message,
        }

    def as_manifest(self) -> dict:
        """The manifest's ``source`` object: the date in UTC, as a database gives it back."""
        when = self.committed_at
        return {
            "repository": self.repository,
            "ref": self.ref,
            "commit": self.commit,
            "committed_at": when.astimezone(UTC).isoformat() if when else "",
            "author": self.author,
            "message": self.message,
        }


def manifest_of(
    *,
    publisher: str,
    bundle: str,
    version: str,
    description: str,
    notes: str,
    hosts: Iterable[tuple[str, int, str]],
    credentials: Iterable[tuple[str, str, str]],
    skills: Iterable[ManifestSkill],
    provenance: Provenance | None = None,
) -> dict:
    """The manifest of a bundle version, from plain values (see the module docstring)."""
    manifest = {
        "format": MANIFEST_FORMAT,
        "publisher": publisher,
        "bundle": bundle,
        "version": version,
        "description": description,
        "notes": notes,
        "hosts": [
            {"host": host, "port": port, "purpose": purpose}
            for host, port, purpose in sorted(hosts)
        ],
        "credentials": [
            {"name": name, "host": host, "purpose": purpose}
            for name, host, purpose in sorted(credentials)
        ],
        "skills": [
            {
                "slug": skill.slug,
                "digest": skill.digest,
                "files": [
                    {
                        "path": f.path,
                        "executable": f.executable,
                        "size": f.size,
                        "sha256": f.sha256,
                    }
                    for f in sorted(skill.files, key=lambda f: f.path)
                ],
            }
            for skill in skills
        ],
    }
    if provenance is not None:
        manifest["source"] = provenance.as_manifest()
    return manifest


def canonical(manifest: dict) -> bytes:
    return json.dumps(
        manifest, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")


def digest_of(canonical_bytes: bytes) -> str:
    return hashlib.sha256(canonical_bytes).hexdigest()


def sign(canonical_bytes: bytes, seed: bytes) -> bytes:
    return SigningKey(seed).sign(canonical_bytes).signature


def public_key_of(seed: bytes) -> bytes:
    return bytes(SigningKey(seed).verify_key)


def signature_verifies(canonical_bytes: bytes, signature: bytes, public_key: bytes) -> bool:
    try:
        VerifyKey(public_key).verify(canonical_bytes, signature)
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError, TypeError):
        return False
    return True


def differences(signed: dict, actual: dict, signer: str) -> list[str]:
    """What differs between the signed manifest and the content as it stands, each said
    as a person reads it ("the content of @slug does not match what <signer> signed")."""
    problems: list[str] = []
    for key, label in [
        ("publisher", "publisher"),
        ("bundle", "bundle"),
        ("version", "version number"),
        ("description", "description"),
        ("notes", "notes"),
    ]:
        if signed.get(key) != actual.get(key):
            problems.append(f"the {label} does not match what {signer} signed")
    if signed.get("hosts") != actual.get("hosts"):
        problems.append(f"the hosts do not match what {signer} signed")
    if signed.get("credentials") != actual.get("credentials"):
        problems.append(f"the credentials do not match what {signer} signed")
    if signed.get("source") != actual.get("source"):
        problems.append(
            f"the source (repository, ref, commit) does not match what {signer} signed"
        )
    signed_skills = {s["slug"]: s for s in _skills(signed)}
    actual_skills = {s["slug"]: s for s in _skills(actual)}
    for slug, skill in actual_skills.items():
        theirs = signed_skills.get(slug)
        if theirs is None:
            problems.append(f"@{slug} is not among the skills {signer} signed")
        elif theirs != skill:
            where = _where(theirs, skill)
            problems.append(
                f"the content of @{slug} does not match what {signer} signed ({where})"
            )
    for slug in signed_skills.keys() - actual_skills.keys():
        problems.append(f"@{slug}, which {signer} signed, is missing")
    if not problems and [s["slug"] for s in _skills(signed)] != list(actual_skills):
        problems.append(f"the order of the skills does not match what {signer} signed")
    if not problems and signed != actual:
        problems.append(f"the manifest does not match what {signer} signed")
    return problems


def _skills(manifest: dict) -> list[dict]:
    skills = manifest.get("skills")
    return [s for s in skills if isinstance(s, dict)] if isinstance(skills, list) else []


def _where(signed: dict, actual: dict) -> str:
    """Which part of one skill differs: its files by path, else its SKILL.md."""
    theirs = {f.get("path"): f for f in signed.get("files", []) if isinstance(f, dict)}
    ours = {f["path"]: f for f in actual["files"]}
    changed = sorted(
        path for path in theirs.keys() | ours.keys() if theirs.get(path) != ours.get(path)
    )
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return ", ".join(str(p) for p in changed[:3]) + more
    return "SKILL.md"


@dataclass(frozen=True)
class SignatureFile:
    """A parsed bundle.signature.json (shape only: nothing is verified yet)."""

    signer: str
    public_key: bytes
    signature: bytes
    manifest: dict

    def as_json(self) -> str:
        return signature_file_text(
            signer=self.signer,
            public_key=self.public_key,
            signature=self.signature,
            manifest=self.manifest,
        )


def signature_file_text(
    *, signer: str, public_key: bytes, signature: bytes, manifest: dict
) -> str:
    data = {
        "format": SIGNATURE_FORMAT,
        "signer": signer,
        "key": base64.b64encode(public_key).decode("ascii"),
        "signature": base64.b64encode(signature).decode("ascii"),
        "manifest": manifest,
    }
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def parse_signature_file(text: str) -> tuple[SignatureFile | None, list[str]]:
    """The signature file's fields, or the problems that stop it being read."""
    label = SIGNATURE_FILE
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, [f"{label}: not valid JSON"]
    if not isinstance(data, dict) or set(data) != SIGNATURE_FILE_KEYS:
        return None, [f"{label}: must be an object with exactly {sorted(SIGNATURE_FILE_KEYS)}"]
    problems = []
    if data["format"] != SIGNATURE_FORMAT:
        problems.append(f"{label}: 'format' must be {SIGNATURE_FORMAT!r}")
    if not isinstance(data["signer"], str):
        problems.append(f"{label}: 'signer' must be the publisher's slug")
    public_key = bytes_from_b64(data["key"], 32)
    if public_key is None:
        problems.append(f"{label}: 'key' must be the base64 of a 32-byte Ed25519 public key")
    signature = bytes_from_b64(data["signature"], SIGNATURE_BYTES)
    if signature is None:
        problems.append(f"{label}: 'signature' must be the base64 of a 64-byte signature")
    manifest = data["manifest"]
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        problems.append(f"{label}: 'manifest' must be a {MANIFEST_FORMAT} manifest")
    if problems:
        return None, problems
    return SignatureFile(data["signer"], public_key, signature, manifest), []

