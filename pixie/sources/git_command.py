"""Running git on a source's repository: the one way Pixie calls git.

A fetch talks to a server somebody else runs, and git can do much more than fetch: run
hooks, ask a credential helper or a person for a password, follow a redirect to another
host, reach other transports (ssh, ext::, file), recurse into submodules, smudge LFS
files, read the server's ~/.gitconfig and ~/.netrc. Every git run here is fenced the
same way, whatever it does:

- a minimal environment: PATH, a C locale, the TLS certificate settings, and nothing
  else inherited (no GIT_* variable, no proxy); no system or global config; HOME at
  /dev/null, so curl reads no ~/.netrc;
- ``protocol.allow=never`` and only https allowed (http and file too when the source's
  URL was allowed them); ``http.followRedirects=false``; the checked addresses pinned
  with ``http.curloptResolve``;
- no credential helper and no prompt; a private repository's token is read from the
  environment variable the source names and handed to git as an ``http.extraHeader``
  through GIT_CONFIG_COUNT/KEY/VALUE, so it is never in argv (the process list) or a URL;
- no hooks, no submodules, no LFS smudging, no automatic gc, no commit-graph writes;
  every object arrives as a pack (``transfer.unpackLimit=1``), which is what the byte
  watch measures;
- a deadline: past it the whole process group (git and its remote helper, index-pack)
  is killed; output is read from a file, never a pipe that could fill, and capped.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog.validators import is_credential_name

from .destinations import Destination

# The settings every git run gets, whatever it does (the module's docstring says why).
FENCE = (
    "protocol.allow=never",
    "protocol.https.allow=always",
    "http.followRedirects=false",
    "credential.helper=",
    "core.askPass=",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "transfer.unpackLimit=1",
    "gc.auto=0",
    "maintenance.auto=false",
    "fetch.writeCommitGraph=false",
    "protocol.version=2",
    "init.defaultBranch=main",
)
# Passed on from the server's environment: where the system's CA certificates are.
PASSED_ON = ("PATH", "SSL_CERT_FILE", "SSL_CERT_DIR")
CREDENTIAL_USER = "x-access-token"  # GitHub's name for a token's user; others ignore it
MAX_OUTPUT = 32 << 20
FIRST_WAIT, LONGEST_WAIT = 0.002, 0.05  # seconds between looks at a running git


class GitMissing(Exception):
    """git is not installed where Pixie runs."""


class GitTimedOut(Exception):
    """git ran past its deadline and was killed."""


class GitOutputTooLarge(Exception):
    """git wrote more than its output's cap and was killed."""


class CredentialMissing(Exception):
    """The environment variable a source names for its token is not set (or not a name)."""


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: str  # decoded leniently: it is shown (bounded, made visible), never parsed strictly

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def git_executable() -> str:
    found = shutil.which("git")
    if found is None:
        raise GitMissing("git is not installed on this server; checking a source needs it")
    return found


def fence_options(destination: Destination | None) -> list[str]:
    """git's ``-c`` arguments for a run that may reach ``destination`` (None: a run that
    reads the mirror only). Pure."""
    settings = list(FENCE)
    if destination is not None:
        if destination.scheme != "https":
            settings.append(f"protocol.{destination.scheme}.allow=always")
        if destination.pin:
            settings.append(f"http.curloptResolve={destination.pin}")
    return [argument for setting in settings for argument in ("-c", setting)]


def credential_header(value: str) -> str:
    """The Authorization header for a token (``user:token``, or a token alone, whose user
    is GitHub's ``x-access-token``). Pure."""
    user_and_token = value if ":" in value else f"{CREDENTIAL_USER}:{value}"
    return "Authorization: Basic " + base64.b64encode(user_and_token.encode()).decode()


def fence_environment(
    destination: Destination | None = None, *, credential_variable: str | None = None
) -> dict[str, str]:
    """The whole environment of a git run: nothing inherited but PASSED_ON; the token, when
    a source names the variable holding it, as configuration only this run reads, sent
    only with requests under the repository's own URL."""
    environment = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    environment.setdefault("PATH", "/usr/bin:/bin")
    environment.update(
        HOME=os.devnull,
        LANG="C",
        LC_ALL="C",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_LFS_SKIP_SMUDGE="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_LITERAL_PATHSPECS="1",
        GIT_PROTOCOL_FROM_USER="0",
    )
    if credential_variable:
        if not is_credential_name(credential_variable):
            raise CredentialMissing(
                f"{credential_variable!r} is not an environment variable's name "
                "(capitals, digits and _, as egress credentials are named)"
            )
        value = os.environ.get(credential_variable, "")
        if not value:
            raise CredentialMissing(
                f"The environment variable {credential_variable}, which holds this source's "
                "token, is not set on this server"
            )
        # Only requests under the repository's own URL carry it.
        where = f"http.{destination.url}.extraHeader" if destination else "http.extraHeader"
        environment.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0=where,
            GIT_CONFIG_VALUE_0=credential_header(value),
        )
    return environment


def git_run(
    arguments: Sequence[str],
    *,
    cwd: Path,
    deadline: float,
    destination: Destination | None = None,
    environment: dict[str, str] | None = None,
    max_output: int = MAX_OUTPUT,
    keep_first: bool = False,
    watch: Callable[[], Exception | None] | None = None,
) -> GitResult:
    """Run ``git <fence> <arguments>`` in ``cwd`` until it ends or ``deadline`` (a
    time.monotonic() value) passes.

    While it runs, ``watch`` is asked now and then: an exception it returns is raised once
    git is killed. Output past ``max_output`` bytes kills git too: GitOutputTooLarge, or,
    with ``keep_first``, the first ``max_output`` bytes as if git had stopped there.
    """
    command = [git_executable(), *fence_options(destination), *arguments]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # The arguments are Pixie's own; every value from upstream was checked before
        # it got here (pixie.sources.destinations, git_mirror.ref_problem).
        process = subprocess.Popen(  # noqa: S603
            command,
            cwd=cwd,
            env=environment if environment is not None else fence_environment(destination),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group, killed as one
        )
        truncated = False
        try:
            wait = FIRST_WAIT
            while True:
                try:
                    process.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    pass
                wait = min(wait * 2, LONGEST_WAIT)
                if os.fstat(out.fileno()).st_size > max_output:
                    if not keep_first:
                        raise GitOutputTooLarge(f"git wrote more than {max_output:,} bytes")
                    truncated = True
                    _kill(process)
                    break
                if time.monotonic() > deadline:
                    raise GitTimedOut
                if watch is not None and (stop := watch()) is not None:
                    raise stop
        except BaseException:
            _kill(process)
            raise
        out.seek(0)
        stdout = out.read(max_output + 1)
        if len(stdout) > max_output:
            if not keep_first:
                raise GitOutputTooLarge(f"git wrote more than {max_output:,} bytes")
            stdout, truncated = stdout[:max_output], True
        err.seek(0)
        stderr = err.read(64 * 1024).decode("utf-8", errors="replace")
    return GitResult(0 if truncated else process.returncode, stdout, stderr)


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group already ended
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
