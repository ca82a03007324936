"""The file a run cache entry is: its members one after the other, then a manifest naming each.

::

    MAGIC | member bytes ... | manifest (JSON) | manifest's CRC-32 (4 bytes) | manifest length (8)
          | MAGIC                                            (integers big-endian)

The manifest (the caller's fields, plus ``members``: name -> [offset, size, CRC-32]) comes last,
so a member is written as it is read (a pcap capture streams through) and the file is written in
one pass. A file cut short (a writer killed part-way) has no trailer, or one whose lengths do not
add up to the file's size; a member or the manifest altered since fails its CRC-32. Each is a
`CorruptEntry`,
never data. (A ZIP would do the same; this is one ``open`` and one ``write`` per small run, which
matters when a sweep stores thousands of one-second runs.)

A *bundle* is a run file whose members are whole run files (`encode`), one per run, named by
the run's key: a worker stores the small runs of one call as one file, and each run's name in the
cache is a hard link to it (`fairstream.cache`). A `Window` reads one of them as the run file it
is.
"""

from __future__ import annotations

import io
import json
import os
import zlib
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, BinaryIO

#: A file of the format before the manifest had a CRC-32 starts ``FSRUN01``: it is no run file
#: to this one, and computed again.
MAGIC = b"FSRUN02\n"
_TRAILER = 4 + 8 + len(MAGIC)
_BLOCK = 1 << 20


class CorruptEntry(ValueError):
    """A run file cut short, altered, or not one at all."""


def write(
    path: Path, members: Iterable[tuple[str, bytes | Path]], manifest: dict[str, Any]
) -> dict[str, Any]:
    """Writes the run file `path` of `members` (name, bytes or a file to copy) and `manifest`;
    returns the manifest as written (with ``members``)."""
    with open(path, "wb") as f:
        return _write_to(f, members, manifest)


def encode(members: Iterable[tuple[str, bytes]], manifest: dict[str, Any]) -> bytes:
    """The run file of `members` (name, bytes) and `manifest`, as bytes (a bundle's record)."""
    f = io.BytesIO()
    _write_to(f, members, manifest)
    return f.getvalue()


def _write_to(
    f: BinaryIO, members: Iterable[tuple[str, bytes | Path]], manifest: dict[str, Any]
) -> dict[str, Any]:
    index: dict[str, list[int]] = {}
    offset = 0
    f.write(MAGIC)
    for name, data in members:
        if isinstance(data, Path):
            size, crc = 0, 0
            with open(data, "rb") as src:
                while block := src.read(_BLOCK):
                    f.write(block)
                    crc = zlib.crc32(block, crc)
                    size += len(block)
        else:
            f.write(data)
            size, crc = len(data), zlib.crc32(data)
        index[name] = [offset, size, crc]
        offset += size
    written = {**manifest, "members": index}
    text = json.dumps(written, separators=(",", ":")).encode()
    f.write(text)
    f.write(zlib.crc32(text).to_bytes(4, "big"))
    f.write(len(text).to_bytes(8, "big"))
    f.write(MAGIC)
    return written


class Window:
    """A run file held in a larger one: member `name` of the open run file `f` (a bundle holds
    each of its runs' run files as a member). Reads as the run file alone would."""

    def __init__(self, f: BinaryIO, manifest: dict[str, Any], name: str):
        offset, size, _ = manifest["members"][name]
        self.f, self.start, self.size = f, len(MAGIC) + offset, size

    def seek(self, position: int) -> None:
        self.f.seek(self.start + position)

    def read(self, n: int) -> bytes:
        return self.f.read(max(0, min(n, self.start + self.size - self.f.tell())))


def _size(f: BinaryIO | Window) -> int:
    return f.size if isinstance(f, Window) else os.fstat(f.fileno()).st_size


def read_manifest(f: BinaryIO | Window) -> dict[str, Any]:
    """The manifest of an open run file, its lengths checked against the file's size."""
    size = _size(f)
    if size < len(MAGIC) + _TRAILER:
        raise CorruptEntry("shorter than an empty run file")
    f.seek(0)
    if f.read(len(MAGIC)) != MAGIC:
        raise CorruptEntry("not a run file (no magic at its start)")
    f.seek(size - _TRAILER)
    trailer = f.read(_TRAILER)
    if trailer[12:] != MAGIC:
        raise CorruptEntry("cut short (no trailer)")
    length = int.from_bytes(trailer[4:12], "big")
    if length > size - len(MAGIC) - _TRAILER:
        raise CorruptEntry("cut short (its manifest is longer than the file)")
    f.seek(size - _TRAILER - length)
    text = f.read(length)
    if zlib.crc32(text) != int.from_bytes(trailer[:4], "big"):
        raise CorruptEntry("its manifest fails its CRC")
    try:
        manifest = json.loads(text)
    except ValueError as err:
        raise CorruptEntry(f"its manifest is not JSON ({err})") from None
    members = manifest.get("members") if isinstance(manifest, dict) else None
    if not isinstance(members, dict):
        raise CorruptEntry("its manifest names no members")
    data = sum(m[1] for m in members.values())
    if len(MAGIC) + data + length + _TRAILER != size:
        raise CorruptEntry("its members and manifest do not add up to its size")
    return manifest


def read_member(f: BinaryIO | Window, manifest: dict[str, Any], name: str, *, check: bool = True) -> bytes:
    """Member `name`'s bytes, its CRC checked (unless `check` is False: the file was just
    `verify`-ed whole)."""
    offset, size, crc = manifest["members"][name]
    f.seek(len(MAGIC) + offset)
    data = f.read(size)
    if len(data) != size or (check and zlib.crc32(data) != crc):
        raise CorruptEntry(f"member {name} fails its CRC")
    return data


def copy_member(f: BinaryIO | Window, manifest: dict[str, Any], name: str, target: Path) -> None:
    """Writes member `name` to the file `target` in blocks, its CRC checked."""
    offset, size, crc = manifest["members"][name]
    with open(target, "wb") as out:
        if _member_crc(f, offset, size, out) != crc:
            raise CorruptEntry(f"member {name} fails its CRC")


def verify(f: BinaryIO | Window, manifest: dict[str, Any]) -> str | None:
    """The first member whose bytes fail their CRC, or None when all hold."""
    for name, (offset, size, crc) in manifest["members"].items():
        if _member_crc(f, offset, size) != crc:
            return name
    return None


def _member_crc(f: BinaryIO | Window, offset: int, size: int, out: BinaryIO | None = None) -> int | None:
    """The CRC-32 of the `size` bytes of the member at `offset`, read in blocks (each also written
    to `out`, when given), or None when the file ends before them."""
    f.seek(len(MAGIC) + offset)
    crc, left = 0, size
    while left:
        block = f.read(min(_BLOCK, left))
        if not block:
            return None
        if out is not None:
            out.write(block)
        crc = zlib.crc32(block, crc)
        left -= len(block)
    return crc
