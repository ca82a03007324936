"""Output directories: where ``run``, ``sweep`` and ``reproduce`` put their results, and what
they may replace.

Every command that writes a directory follows the same rules (docs/results.md, "Output
directories"):

- The target is checked before anything runs (`prepare`): an empty path, a regular file and a
  symbolic link to nowhere are refused; a symbolic link to a directory is followed (the results
  go to its target and the link stays), never replaced.
- An absent or empty target is written. A target fairstream wrote earlier, recognised by the
  marker file `MARKER` it leaves in every directory it writes, is replaced whole, so no stale
  run of an earlier sweep survives beside the new ones. Anything else, a non-empty directory
  fairstream did not write, or one it wrote that now holds other files too, or one another
  command wrote, is refused unless ``force`` (``--force``) is given, and then replaced whole.
  Even with ``force``, the directory you are in, your home directory and their ancestors are
  never replaced, nor is a directory that is or holds the run cache the command stores in.
- The results are written into a hidden sibling, ``.NAME.partial-PID@HOST``, and renamed into
  place only when complete (`staged`); on any error the sibling is removed and the target is
  left as it was. On Ctrl-C what ran so far is put in place all the same, its marker saying
  ``"complete": false`` (and the results ``INCOMPLETE``, see `fairstream.interrupt`). A
  sibling left behind by a process that was killed holds no marker,
  so it is never taken for results, and the next write into the same parent directory on the
  same host removes it once its process is gone.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .interrupt import Interrupted

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

#: The marker file fairstream writes, last, into every directory it writes: JSON with the command,
#: the fairstream version, whether the results are complete and the entries it wrote.
MARKER = ".fairstream"

#: A staging, set-aside, probing or capturing sibling: ``.NAME.partial-PID@HOST``,
#: ``.NAME.old-PID@HOST``, ``.NAME.probe-PID@HOST`` (`prepare`'s check that a directory can be
#: made there) or ``.NAME.capture-PID@HOST`` (a run's pcap captures as it goes:
#: `fairstream.api.captures_in`).
_SIBLING = re.compile(r"^\..+\.(?:partial|old|probe|capture)-(?P<pid>[0-9]+)@(?P<host>[^/@]+)$")


class OutputError(ValueError):
    """An output directory that cannot be written, or must not be replaced; the message says
    why and what to do. A ValueError: bad input, checked before anything runs."""


def prepare(
    path: str | os.PathLike[str],
    command: str,
    force: bool = False,
    *,
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Checks that `command`'s results may go to `path`, before anything runs; returns the
    directory they will go to (`path` made absolute, a symbolic link followed). `cache`: the run
    cache the command stores its runs in, which the directory may not be or hold.

    Raises `OutputError` naming the path and the reason (see the module's rules).
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputError("an empty path is no output directory; name one, such as `-o results`")
    given = Path(text)
    if given.is_symlink():
        try:
            target = given.resolve(strict=True)
        except (OSError, RuntimeError):
            raise OutputError(
                f"{given} is a symbolic link to nowhere; point it at a directory or remove it"
            ) from None
    else:
        target = Path(os.path.abspath(given))
        for above in target.parents:  # resolving would make the directories it names
            if above.is_symlink() and not above.exists():
                raise OutputError(
                    f"{given}: {above} is a symbolic link to nowhere; point it at a directory or remove it"
                )
        # A symbolic link among the parents is followed too, so the rename stays in one directory.
        target = target.parent.resolve() / target.name
    if target.exists() and not target.is_dir():
        raise OutputError(f"{given} is a file, not a directory; results are a directory of files")
    if cache is not None:
        _refuse_holding_cache(given, target, cache)
    if target.is_dir():
        _check_replaceable(given, target, command, force)
    _check_writable(given, target)
    return target


def _check_writable(given: Path, target: Path) -> None:
    """Refuses (OutputError) a target whose results could not be written: the staging directory
    is made beside it, so a directory is made, and removed at once, in the nearest directory
    that exists on its way (permissions alone do not tell: root may write anywhere by them, and
    still not in /proc or on a read-only mount)."""
    above = target.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    probe = above / sibling_name(target.name, "probe")
    try:
        probe.mkdir()
    except FileExistsError:  # one of this very process's, never live
        pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise OutputError(f"{given}: no directory can be made in {above} ({reason})") from None
    with contextlib.suppress(OSError):
        probe.rmdir()


def _check_replaceable(given: Path, target: Path, command: str, force: bool) -> None:
    """Refuses (OutputError) to replace the non-empty directory `target` unless the rules allow it."""
    entries = sorted(os.listdir(target))
    if not entries:
        return
    _refuse_precious(given, target)
    if force:
        return
    again = f"choose another directory, or give --force to replace {given} whole"
    marker = read_marker(target)
    if marker is None:  # whatever its files are called, fairstream cannot tell it wrote them
        raise OutputError(
            f"{given} exists and holds files fairstream did not write (e.g. `{entries[0]}`); {again}"
        )
    if marker.get("command") != command:
        raise OutputError(
            f"{given} holds the results of `fairstream {marker.get('command')}`, not of "
            f"`fairstream {command}`; {again}"
        )
    foreign = [e for e in entries if e != MARKER and e not in set(marker.get("entries", []))]
    if foreign:
        raise OutputError(
            f"{given} holds results of `fairstream {command}` and also `{foreign[0]}`, which "
            f"fairstream did not write; move it out, or {again}"
        )


def _holds(directory: Path, place: Path) -> bool:
    """Whether `directory` is `place` or holds it (both absolute, symbolic links resolved)."""
    return place == directory or directory in place.parents


def _refuse_holding_cache(given: Path, target: Path, cache: str | os.PathLike[str]) -> None:
    """Refuses a target that is or holds the run cache, whatever `force` says: results replace
    their directory whole, the cache with it, and a directory that did not exist before the runs
    would hold the cache they stored in it when the results came to take its place."""
    if _holds(Path(os.path.realpath(target)), Path(os.path.realpath(cache))):
        raise OutputError(
            f"{given} is or holds the run cache ({cache}), which results written there would "
            "replace; keep the cache elsewhere (FAIRSTREAM_CACHE, docs/cache.md) or name another "
            "directory for the results"
        )


def _refuse_precious(given: Path, target: Path) -> None:
    """Never replaces the working directory, the home directory or a directory holding either."""
    for what, where in [("the directory you are in", Path.cwd), ("your home directory", Path.home)]:
        try:
            place = where().resolve()
        except (OSError, RuntimeError):  # a removed working directory, no home
            continue
        if _holds(target, place):
            raise OutputError(
                f"{given} is or holds {what}; fairstream never replaces it, even with --force: "
                "name a new directory for the results"
            )


def read_marker(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The marker of a directory fairstream wrote, or None (no marker, or not one of ours)."""
    try:
        marker = json.loads((Path(directory) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and "command" in marker else None


def add_entries(directory: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Records `names` as written by fairstream in `directory`'s marker (a report written into a
    reproduction's directory later); a directory without a marker is left as it is."""
    marker = read_marker(directory)
    if marker is None:
        return
    marker["entries"] = sorted(set(marker.get("entries", [])) | set(names))
    _write_marker(Path(directory), marker)


@contextmanager
def staged(
    path: str | os.PathLike[str],
    command: str,
    force: bool = False,
    *,
    target: Path | None = None,
    complete: bool = True,
) -> Iterator[Path]:
    """Yields an empty staging directory for `command`'s results; when the block completes, the
    marker is written and the staging directory replaces the target (`prepare`, checked again
    now: files may have appeared during the run). On any exception the staging directory is
    removed and the target is left as it was, except on Ctrl-C (`fairstream.interrupt.Interrupted`):
    the results so far are then put in place, the marker saying ``"complete": false``.

    `target`: what `prepare` returned before the run (saves resolving the path again).
    `complete`: False when what the block writes is known to be partial (an interrupted run's
    results so far, written after the interruption): the marker then says so.
    """
    target = prepare(path, command, force) if target is None else target
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_siblings(parent)
    tmp = parent / sibling_name(target.name, "partial")
    _rmtree(tmp)  # one of this very process (pid reused), never live
    tmp.mkdir()
    try:
        yield tmp
        _put_in_place(tmp, target, Path(path), command, force, complete=complete)
    except Interrupted as stop:
        # Ctrl-C (fairstream.interrupt): what ran so far goes into place all the same, marked
        # incomplete, and the exception names where it went.
        try:
            _put_in_place(tmp, target, Path(path), command, force, complete=False)
        except BaseException:
            _rmtree(tmp)
            raise
        stop.relocate(tmp, target)
        raise
    except BaseException:
        _rmtree(tmp)
        raise


def _put_in_place(tmp: Path, target: Path, given: Path, command: str, force: bool, complete: bool) -> None:
    """Writes the marker into `tmp` and swaps it in at `target` (checked again: files may have
    appeared during the run)."""
    if target.is_dir():
        _check_replaceable(given, target, command, force)
    marker = _marker(command, sorted(os.listdir(tmp)))
    marker["complete"] = complete
    _write_marker(tmp, marker)
    _swap(tmp, target)


def _marker(command: str, entries: list[str]) -> dict[str, Any]:
    # The core's version, as summary.json has it (the package's would scan the installed
    # distributions through importlib.metadata on every run).
    from ._core import __version__

    return {"command": command, "fairstream_version": __version__, "complete": True, "entries": entries}


def _write_marker(directory: Path, marker: dict[str, Any]) -> None:
    (directory / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def _swap(tmp: Path, target: Path) -> None:
    """Puts the complete results of `tmp` at `target`. An absent target is `tmp` renamed; an
    existing empty one receives `tmp`'s entries, the marker last (it stays the same directory:
    the one you are in, a mount point); a non-empty one is set aside, replaced by `tmp` and
    then removed."""
    if not target.exists():
        os.rename(tmp, target)
        return
    if not any(target.iterdir()):
        for entry in sorted(os.listdir(tmp), key=lambda e: e == MARKER):
            os.rename(tmp / entry, target / entry)
        tmp.rmdir()
        return
    old = target.parent / sibling_name(target.name, "old")
    _rmtree(old)
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except OSError:
        os.rename(old, target)  # put the earlier results back
        raise
    _rmtree(old)


def sibling_name(name: str, kind: str) -> str:
    """The name of this process's `kind` sibling of directory `name` (see `_SIBLING`)."""
    return f".{name}.{kind}-{os.getpid()}@{_host()}"


@functools.cache
def _host() -> str:
    """This machine's name, as it may stand in a file name (os.uname: no `socket` import)."""
    try:
        name = os.uname().nodename
    except AttributeError:  # not POSIX
        import socket

        name = socket.gethostname()
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "localhost"


def _rmtree(path: Path) -> None:
    """Removes what is at `path`, if anything: a directory with all it holds, or a file or a
    symbolic link (`shutil`, and with it bz2, lzma and zlib, is imported only when a directory
    is to be removed: a plain run removes nothing)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        with contextlib.suppress(OSError):
            path.unlink()
    elif path.exists():
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def link_or_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Makes `target` the file `source`: a hard link where the file system allows one (the same
    file system, and a link permitted), else a copy. A file already at `target` is removed first,
    never written through (it may be a link to a cache entry's file).

    The run cache and the outputs restored from it share files this way (docs/cache.md): an
    unchanged reproduction's 100 MB of results are linked, not copied. A file changed in place
    afterwards changes both; the cache checks every file against its SHA-256 before serving it,
    so such an entry is found corrupt and computed again, never served."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not permitted there
        import shutil

        shutil.copyfile(source, target)


def remove_stale_siblings(parent: Path) -> list[Path]:
    """Removes the staging and set-aside directories in `parent` left by processes of this host
    that no longer run (a run that was killed); returns them. Those of live processes, and of
    other hosts (a shared file system: their processes cannot be seen from here), stay."""
    removed = []
    host = _host()
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        match = _SIBLING.match(name)
        if match is None or match["host"] != host or _alive(int(match["pid"])):
            continue
        path = parent / name
        if path.is_dir() and not path.is_symlink():
            _rmtree(path)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (one owned by another user counts). Off POSIX, always: there
    `os.kill(pid, 0)` would end the process rather than look for it."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
