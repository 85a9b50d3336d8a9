"""Real git repositories, served over HTTP on loopback by git's own ``git http-backend``,
and the upstream side of a test: a working repository that commits skill folders and
pushes them into the served bare repository (by path, not over HTTP: only Pixie's side
goes through the server).

The server is a small threaded http.server that runs the CGI once per request, so
the smart protocol (v2 included: the Git-Protocol header is passed on) and its POST
bodies (chunked or gzipped, as the client sends them) work as against a real host. It
can also answer a redirect, stall, or ask for credentials, for the refusals to test.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

GIT = shutil.which("git") or "git"
HTTP_BACKEND = str(Path(subprocess.check_output([GIT, "--exec-path"], text=True).strip())
                   / "git-http-backend")  # fmt: skip
AUTHOR = ("Ada Upstream", "ada@example.com")
DATE = "2024-05-01T10:00:00+00:00"


def git_environment(home: Path) -> dict[str, str]:
    """The test's own git: nobody's ~/.gitconfig, and a fixed default identity."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
    }


def run_git(*args: str, cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> str:
    done = subprocess.run(
        [GIT, *args], cwd=cwd, env=env, input=stdin, capture_output=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode(errors="replace").strip()


@dataclass
class GitServer:
    """A folder of bare repositories served at ``base_url``; each request is recorded."""

    root: Path
    base_url: str
    requests: list[str] = field(default_factory=list)  # "METHOD path" of each request
    # repository name -> the Authorization header it asks for
    authorization: dict[str, str] = field(default_factory=dict)
    stalled: set[str] = field(default_factory=set)  # repository names that never answer
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}.git"

    def redirect_url(self, name: str) -> str:
        """A URL that answers 301 to the repository's own."""
        return f"{self.base_url}/moved/{name}.git"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self):  # noqa: N802 (the stdlib's name)
        self._answer(b"")

    def do_POST(self):  # noqa: N802 (the stdlib's name)
        self._answer(self._body())

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer(self, body: bytes) -> None:
        git = self.server.git
        path, _, query = self.path.partition("?")
        git.requests.append(f"{self.command} {path}")
        name = path.lstrip("/").split(".git/")[0]
        if path.startswith("/moved/"):
            self._plain(301, location=f"{git.base_url}{path.removeprefix('/moved')}?{query}")
            return
        if name in git.stalled:
            git.release.wait(30)
            return
        wanted = git.authorization.get(name)
        if wanted is not None and self.headers.get("Authorization") != wanted:
            self._plain(401, authenticate=True)
            return
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(git.root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_PROJECT_ROOT": str(git.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        done = subprocess.run(
            [HTTP_BACKEND], input=body, env=environment, capture_output=True, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        # A client stopped by a limit's test reads no more.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)

    def _plain(self, status: int, *, location: str = "", authenticate: bool = False) -> None:
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        if authenticate:
            self.send_header("WWW-Authenticate", 'Basic realm="upstream"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    git: GitServer


@contextmanager
def git_server_running(root: Path) -> Iterator[GitServer]:
    root.mkdir(parents=True, exist_ok=True)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.git = GitServer(root=root, base_url=f"http://127.0.0.1:{server.server_port}")
    # shutdown() waits for the loop's next poll: 0.5 s by default, at every server's end.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server.git
    finally:
        server.git.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def git_server(tmp_path, settings) -> Iterator[GitServer]:
    """Bare repositories served on 127.0.0.1 over plain http://, which only
    PIXIE_SOURCES_ALLOW_PRIVATE lets a source reach (a test of the refusal turns it off)."""
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = True
    with git_server_running(tmp_path / "served") as server:
        yield server


class Upstream:
    """A publisher's working repository, pushing into ``<name>.git`` on the server."""

    def __init__(self, server: GitServer, name: str, home: Path):
        self.server = server
        self.name = name
        self.bare = server.root / f"{name}.git"
        self.work = home / f"{name}-work"
        self.env = git_environment(home)
        self.gitlinks: list[str] = []
        self.work.mkdir(parents=True)
        run_git("init", "--quiet", "--bare", "--initial-branch=main", str(self.bare),
                cwd=home, env=self.env)  # fmt: skip
        self.git("init", "--quiet", "--initial-branch=main")

    @property
    def url(self) -> str:
        return self.server.url(self.name)

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        return run_git(*args, cwd=self.work, env=self.env, stdin=stdin)

    def served(self, *args: str) -> str:
        """git run in the served bare repository itself."""
        return run_git(*args, cwd=self.bare, env=self.env)

    # Writing the working tree

    def write(self, path: str, content: str | bytes, *, executable: bool = False) -> None:
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
        target.chmod(0o755 if executable else 0o644)

    def skill(self, name: str, body: str = "Do the thing, step by step.", *,
              folder: str = "skills", description: str = "") -> str:  # fmt: skip
        """A minimal Agent Skills folder ``<folder>/<name>/SKILL.md``; its path."""
        description = description or f"Use when {name.replace('-', ' ')} is asked for."
        path = f"{folder}/{name}" if folder else name
        self.write(
            f"{path}/SKILL.md",
            f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n",
        )
        return path

    def link(self, path: str, target: str) -> None:
        where = self.work / path
        where.parent.mkdir(parents=True, exist_ok=True)
        where.symlink_to(target)

    def remove(self, path: str) -> None:
        self.git("rm", "-r", "--quiet", "--", path)

    def submodule(self, path: str, commit: str = "1" * 40) -> None:
        """A gitlink (a submodule's pinned commit) at ``path``, with nothing behind it."""
        self.git("update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
        self.gitlinks.append(path)

    def commit(self, message: str = "Update the skills", *, author: tuple[str, str] = AUTHOR,
               date: str = DATE, allow_empty: bool = False) -> str:  # fmt: skip
        # Not the gitlinks: with no checkout behind them, --all would stage their removal.
        self.git("add", "--all", "--", ".", *(f":(exclude){path}" for path in self.gitlinks))
        env = {**self.env, "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}  # fmt: skip
        args = ["commit", "--quiet", "--cleanup=verbatim", "--no-verify", "-m", message]
        run_git(*args, *(["--allow-empty"] if allow_empty else []), cwd=self.work, env=env)
        return self.head()

    def raw_commit(self, header_author: str, message: bytes, *, parent: str | None = None) -> str:
        """A commit object written byte for byte (what a hostile upstream can push: any
        author name, any message), on top of ``parent`` (the head by default) with the
        same tree; the branch moves to it."""
        parent = parent or self.head()
        tree = self.git("rev-parse", f"{parent}^{{tree}}")
        stamp = "1714557600 +0000"
        raw = (
            f"tree {tree}\nparent {parent}\n"
            f"author {header_author} <ada@example.com> {stamp}\n"
            f"committer Ada Upstream <ada@example.com> {stamp}\n\n"
        ).encode() + message
        sha = self.git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", stdin=raw)
        self.git("update-ref", "refs/heads/main", sha)
        return sha

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def tag(self, name: str, *, commit: str = "HEAD", annotated: bool = False) -> None:
        if annotated:
            self.git("tag", "--annotate", "--message", f"Release {name}", name, commit)
        else:
            self.git("tag", name, commit)

    def reset(self, commit: str) -> None:
        self.git("reset", "--quiet", "--hard", commit)

    def push(self, *, force: bool = False, branch: str = "main") -> None:
        self.git("push", "--quiet", *(["--force"] if force else []), "--tags", str(self.bare),
                 f"HEAD:refs/heads/{branch}")  # fmt: skip

    def delete_branch(self, branch: str = "main") -> None:
        self.served("update-ref", "-d", f"refs/heads/{branch}")


@pytest.fixture
def upstream(git_server, tmp_path) -> Upstream:
    """An empty repository ``skills`` on the git server, and its working copy."""
    return Upstream(git_server, "skills", tmp_path / "upstream")
