"""What an uploaded archive's own headers say, read before zipfile or tarfile reads it.

zipfile reads a zip's whole table of contents when it opens the file, and tarfile
decompresses a GNU long-name or pax header whole, however long it says it is, to name
the next member: a few kilobytes of upload could make megabytes of name, echoed into
the error page. These two checks read only the headers, in a bounded amount of memory,
and refuse an archive whose headers pass the limits before either library starts.

Pure standard library; the limits are the caller's.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

EOCD = b"PK\x05\x06"
ZIP64_LOCATOR = b"PK\x06\x07"
ZIP64_EOCD = b"PK\x06\x06"
EOCD_SIZE = 22  # the end of central directory record, less its comment
MAX_COMMENT = 65_535
BLOCK = 512
# GNU long names and links ('L', 'K') and pax headers ('x', 'g', 'X'): their data is
# read whole by tarfile.
NAME_HEADERS = frozenset(b"LKxgX")


class ArchiveRefused(Exception):
    """The archive's headers pass a limit: a message, the entry it was found at (if
    known), and which of ``Limits`` it passes."""

    def __init__(self, message: str, *, limit: str, entry: str = ""):
        super().__init__(message)
        self.limit = limit
        self.entry = entry


@dataclass(frozen=True)
class Limits:
    entries: int  # members, of any kind
    name_bytes: int  # one long-name or pax header's data
    declared_bytes: int  # the members' declared sizes, together (tar: what is decompressed)


def zip_directory_check(path, limits: Limits) -> None:
    """Count a zip's entries in its table of contents, header by header (46 bytes each,
    the rest skipped), and refuse past ``limits.entries`` entries or a name longer than
    ``limits.name_bytes``, before zipfile reads the whole table into memory. The table is
    found as zipfile finds it: just before the end record (or zip64's)."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        tail_size = min(size, EOCD_SIZE + MAX_COMMENT)
        f.seek(size - tail_size)
        tail = f.read(tail_size)
        at = tail.rfind(EOCD)
        if at < 0 or at + EOCD_SIZE > len(tail):
            return  # not a zip zipfile can open: it says so itself
        end_at = size - tail_size + at
        (directory_size,) = struct.unpack("<I", tail[at + 12 : at + 16])
        if directory_size == 0xFFFFFFFF or tail[at + 10 : at + 12] == b"\xff\xff":
            end_at, directory_size = _zip64_end(f, end_at, directory_size)
        f.seek(max(0, end_at - directory_size))
        _count_directory(f, directory_size, limits)


def _zip64_end(f, end_at: int, directory_size: int) -> tuple[int, int]:
    """(where zip64's end record starts, the table's size), or the plain record's."""
    if end_at < 20:
        return end_at, directory_size
    f.seek(end_at - 20)
    locator = f.read(20)
    if not locator.startswith(ZIP64_LOCATOR):
        return end_at, directory_size
    record_at = end_at - 20 - 56
    f.seek(max(0, record_at))
    record = f.read(56)
    if len(record) < 56 or not record.startswith(ZIP64_EOCD):
        return end_at, directory_size
    (size,) = struct.unpack("<Q", record[40:48])
    return record_at, size


def _count_directory(f, directory_size: int, limits: Limits) -> None:
    entries = read = 0
    while read + 46 <= directory_size:
        header = f.read(46)
        if len(header) < 46 or not header.startswith(b"PK\x01\x02"):
            return  # damaged: zipfile names it
        name, extra, comment = struct.unpack("<HHH", header[28:34])
        entries += 1
        if entries > limits.entries:
            raise ArchiveRefused(
                f"the archive holds more than {limits.entries:,} entries, the limit for one "
                "bundle", limit="entries",
            )  # fmt: skip
        if name > limits.name_bytes:
            raise ArchiveRefused(
                f"an entry's name is {name:,} bytes long; the limit is {limits.name_bytes:,}",
                limit="name_bytes",
            )
        f.seek(name + extra + comment, 1)
        read += 46 + name + extra + comment


def tar_gz_headers_check(path, limits: Limits) -> None:
    """Walk a .tar.gz's headers in a bounded buffer: refuse more than ``limits.entries``
    members, a long-name or pax header longer than ``limits.name_bytes``, or members
    declaring more than ``limits.declared_bytes`` together, before tarfile reads it.
    Data is decompressed and dropped as it passes (never more than is declared)."""
    stream = _Inflated(path)
    try:
        _walk(stream, limits)
    finally:
        stream.close()


def _walk(stream, limits: Limits) -> None:
    entries = declared = 0
    while True:
        header = stream.read(BLOCK)
        if len(header) < BLOCK or header == bytes(BLOCK):
            return  # the end (two zero blocks), or a damaged archive tarfile names
        kind = header[156]
        size = _octal(header[124:136])
        if size is None:
            return  # a size tarfile cannot read either: it says so itself
        entries += 1
        entry = _header_name(header)
        if entries > limits.entries:
            raise ArchiveRefused(
                f"the archive holds more than {limits.entries:,} entries, the limit for one "
                "bundle", limit="entries", entry=entry,
            )  # fmt: skip
        if kind in NAME_HEADERS and size > limits.name_bytes:
            raise ArchiveRefused(
                f"a header of the archive holds a name or attributes of {size:,} bytes; the "
                f"limit is {limits.name_bytes:,}", limit="name_bytes",
            )  # fmt: skip
        declared += size
        if declared > limits.declared_bytes:
            raise ArchiveRefused(
                f"the archive says it holds more than {limits.declared_bytes:,} bytes",
                limit="declared_bytes", entry=entry,
            )
        stream.skip(-(-size // BLOCK) * BLOCK)


def _header_name(header: bytes) -> str:
    """A ustar header's own name (its prefix, '/', its name), as far as it goes."""
    name = header[0:100].split(b"\x00", 1)[0]
    prefix = header[345:500].split(b"\x00", 1)[0] if header[257:262] == b"ustar" else b""
    joined = prefix + b"/" + name if prefix else name
    return joined.decode("utf-8", "replace")


def _octal(field: bytes) -> int | None:
    if field[:1] in (b"\x80", b"\xff"):  # base-256 (GNU): a size past 8 GB
        return int.from_bytes(field[1:], "big") if field[:1] == b"\x80" else None
    text = field.split(b"\x00", 1)[0].strip()
    try:
        return int(text, 8) if text else 0
    except ValueError:
        return None


class _Inflated:
    """A gzip file's decompressed bytes, read forward in bounded chunks, member after
    member as gzip reads them; a damaged stream simply ends (tarfile then names it)."""

    CHUNK = 64 * 1024

    def __init__(self, path):
        self.file = open(path, "rb")  # noqa: SIM115 - closed when the stream ends
        self.inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""  # compressed input not yet decompressed
        self.buffer = b""
        self.done = False

    def _fill(self, want: int) -> None:
        while len(self.buffer) < want and not self.done:
            if self.inflate.eof:  # the next gzip member, if any
                self.pending = self.inflate.unused_data
                self.inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data = self.pending or self.file.read(self.CHUNK)
            if not data:
                self._end()
                break
            try:
                self.buffer += self.inflate.decompress(data, want - len(self.buffer))
            except zlib.error:
                self._end()
                break
            self.pending = self.inflate.unconsumed_tail

    def _end(self) -> None:
        self.done = True
        self.file.close()

    def read(self, n: int) -> bytes:
        self._fill(n)
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def skip(self, n: int) -> None:
        while n > 0:
            got = self.read(min(n, self.CHUNK))
            if not got:
                return
            n -= len(got)

    def close(self) -> None:
        if not self.done:
            self._end()
