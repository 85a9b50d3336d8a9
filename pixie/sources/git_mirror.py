"""A source's bare mirror: fetching its ref safely, and telling how the ref moved.

One bare repository per source, in a folder the caller names (DATA_DIR/sources/<id>.git).
It keeps the ref's whole history (a shallow mirror cannot tell a force-push from an
update) and two refs of Pixie's own, nothing else:

- ``refs/pixie/tip``: the commit the ref pointed at after the last fetch that succeeded;
- ``refs/pixie/incoming``: where a fetch lands. It is deleted first and fetched into
  without a ``+``, so git never accepts a rewrite on its own: how the ref moved (forward,
  not at all, backwards, rewritten, vanished) is decided here, from ancestry.

A check is bounded: PIXIE_SOURCES_FETCH_SECONDS of wall clock (listing the refs,
fetching, reading the commit), PIXIE_SOURCES_MAX_BYTES of growth of the mirror's objects
(watched while git runs, and measured again after) and PIXIE_SOURCES_MAX_OBJECTS objects
in the mirror after. A check that fails in any way leaves the mirror as it was: its refs
move only at the end, the packs a failed fetch wrote are removed, and a first fetch works
in a folder beside the mirror that is renamed into place only when it succeeded.

Two checks of one source at one moment (a worker, and an operator's "Check now") are
kept apart by an flock on ``<mirror>.lock`` beside the mirror; that one worker at a time
checks a source at all is the caller's to say (a database lock).

Failures are words (FetchFailed: unreachable, no repository, ref not found, too big,
timed out), never a traceback; what upstream wrote (a commit's author and message,
git's error lines with the server's words) is bounded and shown with its hidden
characters written out (pixie.sources.upstream_text).
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from pathlib import Path

from django.conf import settings

from catalog.validators import is_semver, version_key
from pixie.core.errors import ErrorCode, PixieError

from .destinations import Destination, destination_check
from .git_command import (
    CredentialMissing,
    GitMissing,
    GitOutputTooLarge,
    GitResult,
    GitTimedOut,
    fence_environment,
    git_run,
)
from .upstream_text import upstream_line, upstream_message

KEPT_REF = "refs/pixie/tip"
INCOMING_REF = "refs/pixie/incoming"
AUTHOR_MAX = 200  # characters of a commit's author name kept
MESSAGE_MAX = 10_000  # characters of a commit message kept
ERROR_MAX = 300  # characters of git's last error line quoted in a failure
COMMIT_READ_MAX = 1 << 20  # bytes of a commit object read (its headers come first)
REFS_READ_MAX = 16 << 20  # bytes of the repository's branches and tags listed
LOCAL_SECONDS = 30.0  # for putting the mirror back after a failed fetch, past the deadline

SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
REF_CHARACTERS = re.compile(r"[A-Za-z0-9._/-]+")


class Movement(StrEnum):
    """How the ref moved since the commit it is compared with."""

    FIRST = "first"  # nothing to compare with: a first fetch, or ``since`` not in the mirror
    UNCHANGED = "unchanged"
    FORWARD = "forward"  # the new commit descends from the last one: an ordinary update
    BACKWARDS = "backwards"  # the new commit is an ancestor of the last one
    REWRITTEN = "rewritten"  # neither descends from the other: a force-push
    VANISHED = "vanished"  # the ref is no longer in the repository


@dataclass(frozen=True)
class UpstreamCommit:
    """A fetched commit, as Pixie records and shows it (author and message bounded and
    their hidden characters written out)."""

    sha: str
    date: datetime | None  # the committer's date; None when the commit's is not a date
    author: str
    message: str
    versions: tuple[str, ...]  # semantic-version tags on it, a leading v dropped, highest first


@dataclass(frozen=True)
class FetchResult:
    ref: str
    movement: Movement
    previous: str | None  # the commit compared with
    commit: UpstreamCommit | None  # None when the ref vanished

    @property
    def report(self) -> str:
        """What happened, in words for the source's page."""
        new = self.commit.sha[:12] if self.commit else ""
        old = (self.previous or "")[:12]
        return {
            Movement.FIRST: f"{self.ref} is at {new}",
            Movement.UNCHANGED: f"{self.ref} is still at {new}",
            Movement.FORWARD: f"{self.ref} moved forward from {old} to {new}",
            Movement.BACKWARDS: (
                f"{self.ref} moved backwards from {old} to {new}, an earlier commit"
            ),
            Movement.REWRITTEN: (
                f"{self.ref} was rewritten (force-pushed): {new} does not descend from {old}"
            ),
            Movement.VANISHED: f"{self.ref} is no longer in the repository (it was at {old})",
        }[self.movement]


class FetchFailed(PixieError):
    """A source could not be checked; ``reason`` says why in a word or two, the message
    in a sentence. The mirror is as it was."""

    code = ErrorCode.ERROR

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason


class FetchLimitExceeded(FetchFailed):
    """A check passed one of its limits; ``setting`` names it."""

    code = ErrorCode.TOO_LARGE

    def __init__(self, message: str, *, setting: str, reason: str = "too big"):
        super().__init__(message, reason=reason)
        self.setting = setting


# Pure rules


def ref_problem(ref: object) -> str | None:
    """Why ``ref`` cannot be followed (a branch, a tag, or a commit's full SHA), or None."""
    if not isinstance(ref, str) or not ref or len(ref) > 255:
        return "A ref is a branch, a tag or a commit's full SHA, of at most 255 characters"
    if not REF_CHARACTERS.fullmatch(ref):
        return f"The ref {ref!r} may hold letters, digits, '.', '_', '-' and '/' only"
    parts = ref.split("/")
    if (
        ref.startswith(("-", "/"))
        or ref.endswith(("/", ".", ".lock"))
        or any(not part or part.startswith(".") for part in parts)
        or ".." in ref
    ):
        return f"The ref {ref!r} is not a branch or tag name git allows"
    if ref == "HEAD":
        return "Name the branch to follow (HEAD, the repository's default, is not followed)"
    return None


def refs_parse(listing: bytes) -> dict[str, str]:
    """``git ls-remote`` output as {ref: commit}, an annotated tag as the commit it
    points at (its peeled ``^{}`` line). Lines that are not a SHA and a ref are skipped."""
    refs: dict[str, str] = {}
    for line in listing.decode("utf-8", errors="replace").splitlines():
        sha, _, name = line.partition("\t")
        if not SHA.fullmatch(sha) or not name:
            continue
        if name.endswith("^{}"):
            refs[name.removesuffix("^{}")] = sha
        else:
            refs.setdefault(name, sha)
    return refs


def ref_find(refs: dict[str, str], ref: str) -> str | None:
    """The full name of ``ref`` among the repository's refs: a branch first, then a tag."""
    if ref.startswith("refs/"):
        return ref if ref in refs else None
    for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}"):
        if candidate in refs:
            return candidate
    return None


def tag_version(tag: str) -> str | None:
    """The semantic version a tag names (``v1.2.0`` or ``1.2.0``: 1.2.0), or None. ASCII
    only: a version with another script's digits is a lookalike, not a version."""
    name = tag.removeprefix("refs/tags/")
    version = name[1:] if name.startswith("v") else name
    return version if version.isascii() and is_semver(version) else None


def versions_at(refs: dict[str, str], commit: str) -> tuple[str, ...]:
    """The semantic versions of the tags pointing at ``commit``, highest first."""
    found = {
        version
        for name, sha in refs.items()
        if sha == commit and name.startswith("refs/tags/") and (version := tag_version(name))
    }
    return tuple(sorted(found, key=version_key, reverse=True))


def movement_of(previous: str | None, new: str, *, descends) -> Movement:
    """How a ref moved from ``previous`` to ``new``; ``descends(a, b)`` says whether
    commit b descends from (or is) commit a."""
    if previous is None:
        return Movement.FIRST
    if previous == new:
        return Movement.UNCHANGED
    if descends(previous, new):
        return Movement.FORWARD
    if descends(new, previous):
        return Movement.BACKWARDS
    return Movement.REWRITTEN


_IDENT = re.compile(rb"^(.*?) ?<[^<>]*> (\d{1,15}) ([+-])(\d\d)(\d\d)$", re.DOTALL)


def commit_parse(raw: bytes, sha: str, versions: tuple[str, ...] = ()) -> UpstreamCommit:
    """A raw commit object (``git cat-file commit``), perhaps cut short, as Pixie keeps it."""
    head, _, body = raw.partition(b"\n\n")
    headers: dict[bytes, bytes] = {}
    for line in head.split(b"\n"):
        if not line.startswith(b" "):  # " ..." continues a signature or a merged tag
            key, _, value = line.partition(b" ")
            headers.setdefault(key, value)
    encoding = headers.get(b"encoding", b"utf-8").decode("ascii", errors="replace")
    author = _ident_name(headers.get(b"author", b""))
    return UpstreamCommit(
        sha=sha,
        date=_ident_date(headers.get(b"committer", b"")),
        author=upstream_line(_decode(author, encoding).strip(), limit=AUTHOR_MAX),
        message=upstream_message(_decode(body, encoding), limit=MESSAGE_MAX),
        versions=versions,
    )


def _ident_name(ident: bytes) -> bytes:
    found = _IDENT.match(ident)
    return found.group(1) if found else ident.rpartition(b"<")[0] or ident


def _ident_date(ident: bytes) -> datetime | None:
    found = _IDENT.match(ident)
    if found is None:
        return None
    _, seconds, sign, hours, minutes = found.groups()
    try:
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        zone = timezone(-offset if sign == b"-" else offset)
        return datetime.fromtimestamp(int(seconds), zone)
    except (ValueError, OverflowError, OSError):
        return None


def _decode(data: bytes, encoding: str) -> str:
    """A commit's text in the encoding its header names (git's default, UTF-8, otherwise
    or when the name is not a text encoding Python knows)."""
    try:
        codecs.lookup(encoding)
        return data.decode(encoding, errors="replace")
    except (LookupError, ValueError, TypeError):
        return data.decode("utf-8", errors="replace")


def failure_of(stderr: str, *, url: str, ref: str) -> FetchFailed:
    """git's error output as words an operator can act on. Pure."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = upstream_line(lines[-1] if lines else "no message", limit=ERROR_MAX)
    text = stderr.lower()
    status = re.search(r"returned error: (\d{3})", text)
    code = int(status.group(1)) if status else None
    if any(m in text for m in ("couldn't find remote ref", "not our ref", "unadvertised object",
                                "no such remote ref", "remote error: want")):  # fmt: skip
        return FetchFailed(f"{ref} is not a branch, tag or commit of {url}", reason="ref not found")
    if code == 404 or ("repository" in text and "not found" in text):
        return FetchFailed(f"There is no git repository at {url} (HTTP 404)", reason="not found")
    if code in (301, 302, 303, 307, 308):
        return FetchFailed(
            f"{url} answers with a redirect (HTTP {code}), which Pixie does not follow: give "
            "the URL it redirects to",
            reason="redirect",
        )
    if code == 401 or "terminal prompts disabled" in text or "authentication failed" in text:
        return FetchFailed(
            f"{url} asks for credentials: a private repository's token is given by the name "
            "of the environment variable that holds it",
            reason="credentials",
        )
    if code == 403:
        return FetchFailed(f"{url} refuses access (HTTP 403)", reason="forbidden")
    if code is not None and code >= 500:
        return FetchFailed(f"{url} failed to answer (HTTP {code}); try again later",
                           reason="server error")  # fmt: skip
    if any(m in text for m in ("failed to connect", "couldn't connect", "connection refused",
                               "could not resolve", "timed out", "connection reset",
                               "empty reply")):  # fmt: skip
        return FetchFailed(f"{url} cannot be reached: {last}", reason="unreachable")
    if "ssl" in text or "certificate" in text or "tls" in text:
        return FetchFailed(f"The TLS connection to {url} failed: {last}", reason="tls")
    return FetchFailed(f"git could not fetch {ref} from {url}: {last}", reason="git failed")


# The mirror


def mirror_fetch(
    mirror: Path,
    url: str,
    ref: str,
    *,
    since: str | None = None,
    credential_variable: str | None = None,
) -> FetchResult:
    """Fetch ``ref`` (a branch, a tag or a commit's full SHA) of the repository at ``url``
    into the bare mirror at ``mirror`` (made on the first fetch), and say how it moved
    since ``since`` (by default the commit the last fetch kept).

    A commit named by its SHA never moves: once in the mirror, git fetches nothing more
    for it, and it is UNCHANGED from then on even if upstream drops it.

    ``credential_variable`` names the environment variable holding a private
    repository's token (``user:token`` or a token alone). Raises DestinationRefused
    (the URL is not one a source may have) or FetchFailed; either way the mirror is as
    it was.
    """
    if problem := ref_problem(ref):
        raise FetchFailed(problem, reason="bad ref")
    if since is not None and not SHA.fullmatch(since):
        raise FetchFailed(f"{since!r} is not a commit's full SHA", reason="bad ref")
    allow_private = settings.PIXIE_SOURCES_ALLOW_PRIVATE
    try:
        destination = destination_check(url, allow_private=allow_private)
    except OSError:
        # The same words whether the name does not exist or the resolver is down.
        raise FetchFailed(
            f"{url} cannot be reached: its host's name does not resolve", reason="unreachable"
        ) from None
    try:
        environment = fence_environment(destination, credential_variable=credential_variable)
    except CredentialMissing as exc:
        raise FetchFailed(str(exc), reason="credentials") from None
    seconds = settings.PIXIE_SOURCES_FETCH_SECONDS
    with _locked(mirror, wait=seconds):
        check = _Check(url, ref, destination, environment, time.monotonic() + seconds)
        try:
            if mirror.is_dir():
                return check.into(mirror, since)
            return _first_fetch(mirror, check, since)
        except GitMissing as exc:
            raise FetchFailed(str(exc), reason="no git") from None
        except GitTimedOut:
            raise FetchLimitExceeded(
                f"Checking {url} took longer than {seconds:g} seconds, the limit for one check "
                "(PIXIE_SOURCES_FETCH_SECONDS); it was stopped",
                setting="PIXIE_SOURCES_FETCH_SECONDS",
                reason="timed out",
            ) from None


@contextmanager
def _locked(mirror: Path, *, wait: float) -> Iterator[None]:
    """The mirror to this check alone: an flock on ``<mirror>.lock`` (released when the
    file is closed, so a crashed worker holds nothing), waited for at most ``wait`` s."""
    mirror.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(mirror.parent / f"{mirror.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        give_up, pause = time.monotonic() + wait, 0.005
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > give_up:
                    raise FetchFailed(
                        "Another check of this source is still running; try again when it ends",
                        reason="busy",
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
        yield
    finally:
        os.close(descriptor)


def _first_fetch(mirror: Path, check: _Check, since: str | None) -> FetchResult:
    """A new mirror is made beside its place and moved there whole once fetched."""
    for stale in mirror.parent.glob(f".{mirror.name}.*"):  # a crashed first fetch's
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{mirror.name}.", dir=mirror.parent))
    try:
        check.git(work, "init", "--quiet", "--bare", "--template=", ".", local=True)
        result = check.into(work, since)
        work.rename(mirror)
        return result
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


@dataclass
class _Check:
    url: str  # as the source gives it, for messages
    ref: str
    destination: Destination
    environment: dict[str, str]
    deadline: float

    def git(self, repository: Path, *arguments: str, local: bool = False, **options) -> GitResult:
        """git in ``repository``: reaching the destination, or (``local``) reading only."""
        return git_run(
            arguments,
            cwd=repository,
            deadline=self.deadline,
            destination=None if local else self.destination,
            environment=self.environment,
            **options,
        )

    def into(self, repository: Path, since: str | None) -> FetchResult:
        previous = self._commit_of(repository, since or KEPT_REF)
        if since is not None and previous != since:
            previous = None  # ``since`` is not in this mirror: nothing to compare with
        refs = self._refs(repository)
        if SHA.fullmatch(self.ref):
            source = self.ref
        elif (source := ref_find(refs, self.ref)) is None:
            if previous is not None:
                return FetchResult(self.ref, Movement.VANISHED, previous, None)
            raise FetchFailed(
                f"{self.ref} is not a branch or tag of {self.url}", reason="ref not found"
            )
        baseline = _object_files(repository)
        try:
            failure = self._fetch(repository, source, baseline)
            if failure is not None:
                raise failure
            new = self._commit_of(repository, INCOMING_REF)
            if new is None:
                raise FetchFailed(f"{self.ref} does not point at a commit", reason="not a commit")
            self._objects_check(repository)
            movement = movement_of(previous, new, descends=lambda a, b: self._descends(
                repository, a, b))  # fmt: skip
            raw = self.git(repository, "cat-file", "commit", new, local=True,
                           max_output=COMMIT_READ_MAX, keep_first=True).stdout  # fmt: skip
            self._must(repository, "update-ref", KEPT_REF, new)
        except BaseException as failure:
            # The failure that brought us here is the one to tell.
            with contextlib.suppress(Exception):
                _undo(repository, baseline, self.environment)
            # Gone between listing the refs and fetching: vanished, as if not listed.
            vanished = isinstance(failure, FetchFailed) and failure.reason == "ref not found"
            if vanished and previous is not None:
                return FetchResult(self.ref, Movement.VANISHED, previous, None)
            raise
        self._must(repository, "update-ref", "-d", INCOMING_REF)
        commit = commit_parse(raw, new, versions_at(refs, new))
        return FetchResult(self.ref, movement, previous, commit)

    def _refs(self, repository: Path) -> dict[str, str]:
        try:
            listed = self.git(
                repository, "ls-remote", "--heads", "--tags", "--", self.destination.url,
                max_output=REFS_READ_MAX,
            )  # fmt: skip
        except GitOutputTooLarge:
            raise FetchFailed(
                f"{self.url} lists more than {REFS_READ_MAX:,} bytes of branches and tags, more "
                "than Pixie reads",
                reason="too big",
            ) from None
        if not listed.ok:
            raise failure_of(listed.stderr, url=self.url, ref=self.ref)
        return refs_parse(listed.stdout)

    def _fetch(self, repository: Path, source: str, baseline: dict[str, int]) -> FetchFailed | None:
        limit = settings.PIXIE_SOURCES_MAX_BYTES
        before = sum(baseline.values())

        def grown_past_limit() -> FetchLimitExceeded | None:
            grown = sum(_object_files(repository).values()) - before
            if grown <= limit:
                return None
            return FetchLimitExceeded(
                f"{self.url} is too big: fetching it passed {limit:,} bytes, the limit for one "
                "fetch (PIXIE_SOURCES_MAX_BYTES)",
                setting="PIXIE_SOURCES_MAX_BYTES",
            )

        self._must(repository, "update-ref", "-d", INCOMING_REF)
        fetched = self.git(
            repository, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
            "--no-recurse-submodules", "--", self.destination.url, f"{source}:{INCOMING_REF}",
            watch=grown_past_limit,
        )  # fmt: skip
        if (too_big := grown_past_limit()) is not None:
            raise too_big
        return None if fetched.ok else failure_of(fetched.stderr, url=self.url, ref=self.ref)

    def _objects_check(self, repository: Path) -> None:
        limit = settings.PIXIE_SOURCES_MAX_OBJECTS
        counted = self.git(repository, "count-objects", "-v", local=True).stdout.decode()
        numbers = dict(line.split(": ", 1) for line in counted.splitlines() if ": " in line)
        objects = int(numbers.get("count", 0)) + int(numbers.get("in-pack", 0))
        if objects > limit:
            raise FetchLimitExceeded(
                f"{self.url} is too big: its mirror would hold {objects:,} git objects; the "
                f"limit is {limit:,} (PIXIE_SOURCES_MAX_OBJECTS)",
                setting="PIXIE_SOURCES_MAX_OBJECTS",
            )

    def _commit_of(self, repository: Path, name: str) -> str | None:
        found = self.git(repository, "rev-parse", "--verify", "--quiet", "--end-of-options",
                         f"{name}^{{commit}}", local=True)  # fmt: skip
        sha = found.stdout.decode().strip()
        return sha if found.ok and SHA.fullmatch(sha) else None

    def _descends(self, repository: Path, ancestor: str, descendant: str) -> bool:
        return self.git(repository, "merge-base", "--is-ancestor", ancestor, descendant,
                        local=True).ok  # fmt: skip

    def _must(self, repository: Path, *arguments: str) -> None:
        done = self.git(repository, *arguments, local=True)
        if not done.ok:
            why = upstream_line(done.stderr.strip(), limit=ERROR_MAX)
            raise FetchFailed(f"The source's mirror could not be updated: {why}", reason="mirror")


def _object_files(repository: Path) -> dict[str, int]:
    """Every file under objects/ and its size. Every fetch arrives as a pack
    (transfer.unpackLimit=1), so these are a handful of packs, not one file an object."""
    files: dict[str, int] = {}
    pending = [repository / "objects"]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            else:
                try:
                    files[entry.path] = entry.stat(follow_symlinks=False).st_size
                except FileNotFoundError:  # a temporary file git renamed meanwhile
                    continue
    return files


def _undo(repository: Path, baseline: dict[str, int], environment: dict[str, str]) -> None:
    """The mirror as it was before a failed fetch: its lock files (git was killed), the
    incoming ref and the objects it brought removed. The check still holds the mirror's
    lock, so nothing else is writing."""
    for lock in [*(repository / "refs").rglob("*.lock"), repository / "packed-refs.lock"]:
        lock.unlink(missing_ok=True)
    git_run(["update-ref", "-d", INCOMING_REF], cwd=repository,
            deadline=time.monotonic() + LOCAL_SECONDS, environment=environment)  # fmt: skip
    for path in _object_files(repository):
        if path not in baseline:
            Path(path).unlink(missing_ok=True)
