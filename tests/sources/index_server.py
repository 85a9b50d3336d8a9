"""A site on loopback serving an Agent Skills discovery index (v0.2.0) and its entries,
from files a test writes: SKILL.md files, .zip and .tar.gz archives, and the index that
names them with their digests (right, or wrong on purpose). It can also redirect, answer
slowly, and it records every path asked for."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urljoin

SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
INDEX = ".well-known/agent-skills/index.json"


def skill_md(name: str, body: str = "Do the thing, step by step.") -> bytes:
    description = f"Use when {name.replace('-', ' ')} is asked for."
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n".encode()


def a_zip(files: dict[str, bytes], *, deflated: bool = False) -> bytes:
    out = io.BytesIO()
    compression = zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            info.compress_type = compression
            archive.writestr(info, data)
    return out.getvalue()


def a_tar_gz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755 if path.endswith(".sh") else 0o644
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def sha256(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


@dataclass
class Site:
    base_url: str  # http://127.0.0.1:<port>
    files: dict[str, bytes] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)  # paths answered a byte at a time
    requests: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def index_url(self) -> str:
        return self.url(INDEX)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path}"

    def put(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def publish(self, entries: list[dict], *, schema: str = SCHEMA) -> bytes:
        """The index at INDEX. Each entry's ``data`` is served where its ``url`` (relative
        to the index's, by default ``<name>/SKILL.md`` or ``<name>.zip``) points on this
        site, and its digest is the data's unless the entry gives one."""
        skills = []
        for entry in entries:
            entry = dict(entry)
            data = entry.pop("data", None)
            default = f"{entry['name']}/SKILL.md" if entry["type"] == "skill-md" else "x.zip"
            entry.setdefault("url", default.replace("x.zip", f"{entry['name']}.zip"))
            if data is not None:
                self.put(urljoin(f"/{INDEX}", entry["url"]).lstrip("/"), data)
                entry.setdefault("digest", sha256(data))
            entry.setdefault("description", f"The {entry['name']} skill.")
            skills.append(entry)
        body = json.dumps({"$schema": schema, "skills": skills}, indent=1).encode()
        self.put(INDEX, body)
        return body


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        site = self.server.site
        path = self.path.lstrip("/").split("?")[0]
        site.requests.append(path)
        if path in site.redirects:
            self.send_response(302)
            self.send_header("Location", site.redirects[path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = site.files.get(path)
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if path in site.slow:
            for byte in data:
                if site.release.wait(0.2):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            return
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: Site


@contextmanager
def site_serving() -> Iterator[Site]:
    """A site on 127.0.0.1 over plain http:// (which only PIXIE_SOURCES_ALLOW_PRIVATE
    lets a source reach), until the block ends."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.site = Site(base_url=f"http://127.0.0.1:{server.server_port}")
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server.site
    finally:
        server.site.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
