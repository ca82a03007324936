"""The run cache: every run computed once, kept as one file, and found again by what determines it.

A run is keyed (`run_key`) by a SHA-256 of its resolved scenario (every default filled in, as
`fairstream._core.validate` returns it), the seed it runs with, the contents of the files it reads
(frame traces and videos named by a ``trace`` key), and the build of fairstream that runs it: the
core's version and `fairstream._core.build_id`, a hash of the compiled extension, so that a rebuild
of any crate computes everything again. ``run``, ``sweep`` and ``reproduce`` look every run up
before running it and store it after (`RunCache.get`, `RunCache.put`); ``--no-cache`` computes
again (and stores the new result). An evaluated experiment of ``reproduce`` (its result.json,
dataset and figures) is kept the same way, keyed by its runs' keys and the code that evaluates them
(`experiment entries`, see `fairstream.reproduce.campaign`).

Where: `root()`: ``$FAIRSTREAM_CACHE`` if set, else ``$XDG_CACHE_HOME/fairstream``, else
``~/.cache/fairstream``. Under it::

    runs/<k[:2]>/<key>.run             one finished run (`fairstream.runfile`)
    experiments/<k[:2]>/<key>/         one evaluated experiment (manifest.json lists its files)
    plans/<k[:2]>/<key>.json           what validation made of an experiment's scenarios
    tmp/                               entries being written, by process (``<name>.<pid>@<host>``)

No database: an entry is a file (or a directory) written under ``tmp/`` and renamed into place
whole. A rename is atomic on a POSIX file system (NFS and Lustre included), so a reader finds no
entry or a whole one, and processes on many machines can share one cache on a shared file system:
two that compute the same run both rename, the last one's identical entry stays. What a killed
process left in ``tmp/`` is removed by the next writer on the same host once that process is gone
(`prune` removes it too).

A run entry is one file (`fairstream.runfile`): ``summary.json``, ``scenario.resolved.toml``, one
member per table the run recorded and ``pcap/<link>.pcap``, then a manifest (the key, what the
run was computed from, each member's offset, size and CRC-32, the run's wall time and events). A
run that recorded no metrics and no packet trace keeps its tables as Arrow IPC streams, the
fastest to write and read; one that did keeps them as the Parquet files (snappy) its run
directory has. An entry is checked whole whenever it is looked up (`RunCache.get`: the manifest,
the lengths, every member's CRC): a truncated, corrupt or foreign entry is removed and the run
computed again, never served.

**Bundles.** A worker stores the small runs of one call together (`RunCache.bundling`): one file,
a bundle (`fairstream.runfile`), holds their run files, and each run's ``runs/<k[:2]>/<key>.run``
is a hard link to it, checked as above with the bundle's record of that run alone. Creating a
file costs a file system far more than naming one (up to a millisecond of the kernel's time on
a freshly booted VM, a round trip to the server on a network file system; a link takes about
0.02 ms), and a sweep of one-second runs stores a thousand. A run is still one name, found,
removed and pruned by itself; its size is the bundle's shared among its names, and a bundle's
space is freed with its last name.

Last use is the entry's modification time (a hit touches it): `prune` removes entries by age of
last use, down to a size (least recently used first), or those of other builds (`stale`), which
this build can never use.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import output, runfile

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    import polars as pl

#: The environment variable naming the cache directory.
ENV = "FAIRSTREAM_CACHE"

#: Bumped when what an entry holds, or how a key is computed, changes: older entries are then
#: never found (and `prune --stale` removes them).
FORMAT = 1

RUNS, EXPERIMENTS, PLANS, TMP = "runs", "experiments", "plans", "tmp"
MANIFEST = "manifest.json"

#: The largest run (its members' bytes) `RunCache.bundling` keeps for a bundle; a larger one is
#: stored at once, in a file of its own.
BUNDLED_MAX_BYTES = 1 << 20

#: Files of a run directory that a run entry keeps besides its summary, scenario, tables and
#: pcaps: an emulated run's ``emu.json`` (`fairstream.emulation`).
EXTRA_MEMBERS = ("emu.json",)


def root() -> Path:
    """The cache directory: ``$FAIRSTREAM_CACHE``, else ``$XDG_CACHE_HOME/fairstream``, else
    ``~/.cache/fairstream`` (created when first written)."""
    given = os.environ.get(ENV)
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "fairstream"


@dataclass(frozen=True)
class Build:
    """Which fairstream computes: the core's version and the extension's build id."""

    version: str
    id: str


_BUILD: Build | None = None


def build() -> Build:
    """This process's build (computed once)."""
    global _BUILD
    if _BUILD is None:
        from . import _core

        _BUILD = Build(_core.__version__, _core.build_id())
    return _BUILD


def build_inputs() -> dict[str, str]:
    """What every cache entry's manifest records of the build that computed it (``inputs``)."""
    b = build()
    return {"version": b.version, "build": b.id}


def run_key(resolved: str, of: Build | None = None, *, emulated: bool = False) -> str:
    """The key of a run of the resolved scenario `resolved` (which holds its seed, whether the
    file or ``--seed`` gave it), by build `of` (default this one's): 64 hex digits.

    `emulated`: a run through the emulator (`fairstream.emulate`) rather than the simulator. It is
    a measurement in real time, not a computation: the same scenario emulated twice gives two
    different results, and neither is the simulation's. So it is keyed apart (never served for a
    simulation of the same scenario, nor the other way round), and by the kernel it ran on too
    (`emulation_host`), whose TCP it measured."""
    of = of or build()
    doc = {
        "format": FORMAT,
        "version": of.version,
        "build": of.id,
        "scenario": resolved,
        "files": read_files(resolved),
    }
    if emulated:
        doc["emulated"] = emulation_host()
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def emulation_host() -> dict[str, str]:
    """What an emulated run's key holds besides the scenario: the kernel (its release and
    version: its TCP is what a ``linux-tcp`` flow measures) and the machine's architecture."""
    u = os.uname()
    return {"kernel": u.release, "kernel_version": u.version, "machine": u.machine}


def read_files(resolved: str) -> dict[str, str]:
    """The files a resolved scenario reads (every ``trace = "file"`` or ``trace = { video =
    "file" }``, with the absolute paths the resolved scenario holds) and the SHA-256 of each:
    a run reading a file that changed is another run."""
    if "trace" not in resolved:
        return {}
    from . import tomlio
    from .scenario import map_traces

    paths: set[str] = set()
    map_traces(tomlio.loads(resolved), lambda p: paths.add(p) or p)
    return {p: _file_digest(p) for p in sorted(paths)}


_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: str) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime) within the process."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    memo = (path, st.st_size, st.st_mtime_ns)
    if memo not in _DIGESTS:
        _DIGESTS[memo] = sha256_file(Path(path))
    return _DIGESTS[memo]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --------------------------------------------------------------------------- run entries


@dataclass(frozen=True)
class RunRecord:
    """What a finished run hands over: to the cache, and to whoever asked for it. A table is the
    bytes of an Arrow IPC stream (handed over by the core, no table library involved), or the path
    of the Parquet file a run directory holds it in (stored as it is)."""

    summary_json: str
    resolved: str
    tables: Mapping[str, bytes | Path]
    wall_time_s: float
    events: int
    pcap_dir: str | None = None
    #: Other files of the run by member name (`EXTRA_MEMBERS`: an emulation's ``emu.json``).
    extras: Mapping[str, bytes | Path] = field(default_factory=dict)

    @classmethod
    def of_dir(cls, sim: Any, directory: Path) -> RunRecord:
        """The record of finished simulation `sim` whose run directory `directory` was just
        written: its tables are the directory's Parquet files."""
        from .results import TABLES

        tables = {name: directory / file for name, file in TABLES.items() if (directory / file).is_file()}
        pcap = directory / "pcap"
        return cls(
            sim.summary_json(),
            sim.resolved_toml(),
            tables,
            sim.wall_time_s,
            sim.events,
            str(pcap) if pcap.is_dir() else None,
        )

    @classmethod
    def of(cls, sim: Any, pcap_dir: str | None = None, *, compact: bool = False) -> RunRecord:
        """The record of finished simulation `sim` (a `fairstream._core.Simulation`): its tables
        as Arrow IPC streams, from memory, written nowhere. With `compact` (long tables), the
        streams are zstd-compressed, as small as Parquet and read several times faster, and a
        packet trace is the Parquet file a run directory holds (a filter reads only part of it)."""
        from .results import TABLES

        tables = {}
        for name in TABLES:
            data = sim.table_parquet(name) if compact and name == "packets" else sim.table_ipc(name, compact)
            if data is not None:
                tables[name] = data
        return cls(sim.summary_json(), sim.resolved_toml(), tables, sim.wall_time_s, sim.events, pcap_dir)

    @classmethod
    def of_emulation(cls, run: Any, directory: Path) -> RunRecord:
        """The record of finished emulation `run` (a `fairstream._core.EmuRun`) whose run
        directory `directory` was just written: its tables are the directory's Parquet files, and
        its ``emu.json`` (departure errors, packets forwarded late) is kept with them. An
        emulation counts no events; its wall time is its summary's."""
        from .results import TABLES

        tables = {name: directory / file for name, file in TABLES.items() if (directory / file).is_file()}
        summary_json = (directory / "summary.json").read_text(encoding="utf-8")
        extras = {m: directory / m for m in EXTRA_MEMBERS if (directory / m).is_file()}
        wall = json.loads(summary_json).get("wall_time_s") or 0.0
        return cls(summary_json, run.resolved_toml(), tables, float(wall), 0, None, extras)


def read_table(data: bytes) -> pl.DataFrame:
    """A table's bytes as a DataFrame: a Parquet file or an Arrow IPC stream."""
    import polars as pl

    if data[:4] == b"PAR1":
        return pl.read_parquet(io.BytesIO(data))
    return pl.read_ipc_stream(io.BytesIO(data))


class RunEntry:
    """One run in the cache (`fairstream.runfile`), read member by member. `RunCache.get` checked
    every member's CRC as it found the entry; a member read later is checked again only when the
    entry was made without that check (`verified` False)."""

    def __init__(
        self,
        path: Path,
        manifest: dict[str, Any],
        verified: bool = False,
        bundle: dict[str, Any] | None = None,
        file: BinaryIO | None = None,
    ):
        self.path = path
        self.manifest = manifest
        self.verified = verified
        #: The bundle's manifest when the run is one of a bundle's (its member named by the key).
        self.bundle = bundle
        #: The file as it was checked, kept open (`RunCache.get(pin=True)`), or None: read by path.
        self._file = file
        self._lock = threading.Lock()

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            self._file.close()  # a pinned entry's file, with the entry (no ResourceWarning)

    @contextlib.contextmanager
    def _open(self) -> Iterator[Any]:
        """The run file, open: the file, or the run's window in its bundle."""
        if self._file is not None:
            with self._lock:  # one file, one offset
                yield self._file if self.bundle is None else runfile.Window(self._file, self.bundle, self.key)
            return
        with open(self.path, "rb") as f:
            yield f if self.bundle is None else runfile.Window(f, self.bundle, self.key)

    @property
    def key(self) -> str:
        return self.manifest["key"]

    def _read(self, member: str) -> bytes:
        with self._open() as f:
            return runfile.read_member(f, self.manifest, member, check=not self.verified)

    def summary_text(self) -> str:
        return self._read("summary.json").decode("utf-8")

    def summary(self) -> dict[str, Any]:
        return json.loads(self.summary_text())

    def resolved(self) -> str:
        return self._read("scenario.resolved.toml").decode("utf-8")

    @property
    def tables(self) -> list[str]:
        return list(self.manifest["tables"])

    def tables_bytes(self, names: Iterable[str]) -> dict[str, bytes]:
        """The tables `names` the run recorded, as stored, read through one open file."""
        members = {n: self.manifest["tables"][n] for n in names if n in self.manifest["tables"]}
        with self._open() as f:
            return {
                n: runfile.read_member(f, self.manifest, m, check=not self.verified)
                for n, m in members.items()
            }

    def table_bytes(self, name: str) -> bytes | None:
        """Table `name` as stored (Parquet or an Arrow IPC stream), or None when not recorded."""
        member = self.manifest["tables"].get(name)
        return None if member is None else self._read(member)

    def table(self, name: str) -> pl.DataFrame | None:
        """Table `name`, or None when the run did not record it."""
        data = self.table_bytes(name)
        return None if data is None else read_table(data)

    def lazy(self, name: str) -> pl.LazyFrame:
        """Table `name` as a LazyFrame: a Parquet table is scanned, so a filter keeps only what
        it selects in memory."""
        import polars as pl

        data = self.table_bytes(name)
        if data is None:
            raise FileNotFoundError(f"{self.path}: the run recorded no {name} table")
        if data[:4] == b"PAR1":
            return pl.scan_parquet(io.BytesIO(data))
        return read_table(data).lazy()

    def pcaps(self) -> list[str]:
        return [m for m in self.manifest["members"] if m.startswith("pcap/")]

    def extras(self) -> list[str]:
        """The entry's members among `EXTRA_MEMBERS` (an emulated run's ``emu.json``)."""
        return [m for m in EXTRA_MEMBERS if m in self.manifest["members"]]

    def emu(self) -> dict[str, Any] | None:
        """An emulated run's ``emu.json`` as a dict; None for a simulated run."""
        if "emu.json" not in self.manifest["members"]:
            return None
        return json.loads(self._read("emu.json"))

    def materialize(
        self, directory: str | os.PathLike[str], *, force: bool = False, target: Path | None = None
    ) -> None:
        """Writes the run as the run directory `directory`, as `fairstream run -o` writes one:
        staged beside it and put in place with its marker (`fairstream.output.staged`, whose
        `force` and `target` these are); a table stored as Parquet is written as it is."""
        with output.staged(directory, "run", force, target=target) as out:
            self._write_files(out)

    def _write_files(self, out: Path) -> None:
        """The run's files, written into the empty directory `out`."""
        from .results import TABLES

        with self._open() as f:
            for member in ("scenario.resolved.toml", "summary.json", *self.extras(), *self.pcaps()):
                target = out / member
                target.parent.mkdir(exist_ok=True)
                runfile.copy_member(f, self.manifest, member, target)
            for name, member in self.manifest["tables"].items():
                data = runfile.read_member(f, self.manifest, member)
                if data[:4] == b"PAR1":
                    (out / TABLES[name]).write_bytes(data)
                else:
                    read_table(data).write_parquet(out / TABLES[name], compression="snappy")


class RunCache:
    """The run cache at `directory` (default `root()`). `refresh`: never serve an entry
    (``--no-cache``), but store what is computed. `hits`, `misses` and `stored` count this
    object's lookups and writes; `discarded` names the corrupt entries it removed."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, refresh: bool = False):
        self.root = Path(directory) if directory is not None else root()
        self.refresh = refresh
        self.hits = 0
        self.misses = 0
        self.stored = 0
        self.discarded: list[str] = []
        self._cleared = False  # whether this object has cleared tmp/ of dead processes' files
        self._not_storing = False  # whether this object has warned that it could not store
        self._made: set[Path] = set()
        #: Per thread (a Dask worker runs calls in threads), while `bundling`: the small runs
        #: to be written as one bundle, (key, run file).
        self._bundles = threading.local()

    def __reduce__(self) -> tuple[Any, ...]:  # to a worker: where, and how (not what was made here)
        return (_in_this_process, (self.root, self.refresh, self._not_storing))

    def path(self, key: str) -> Path:
        return self.root / RUNS / key[:2] / f"{key}.run"

    def _dir(self, path: Path) -> Path:
        """`path`, created once per process."""
        if path not in self._made:
            path.mkdir(parents=True, exist_ok=True)
            self._made.add(path)
        return path

    def staging(self, name: str) -> Path:
        """This thread's staging path for `name` under tmp/ (an entry's file as it is written, a
        run's scratch directory), not made; `clear_staging` removes it once the process is gone.
        Two threads of a Dask worker storing the same run at once write apart."""
        if not self._cleared:  # what killed processes left: removed by the next writer
            self._cleared = True
            clear_staging(self.root)
        return self._dir(self.root / TMP) / f"{name}~{threading.get_ident()}.{os.getpid()}@{output._host()}"

    def get(self, key: str, *, pin: bool = False) -> RunEntry | None:
        """The entry of run `key`, checked whole (its manifest, the lengths, every member's CRC),
        or None. A corrupt or partial entry is removed (and named in `discarded`). Touches the
        entry (its last use). `pin`: the entry keeps the file it checked open, and reads it, not
        its name: what it reads stays what was checked whatever another process does to the
        cache meanwhile (stores the run again, prunes it), for as long as the entry lives."""
        if self.refresh:
            self.misses += 1
            return None
        path = self.path(key)
        bundle = None
        problem: str | None = None
        f = None
        try:
            f = open(path, "rb")  # noqa: SIM115  (kept open when pinned)
            manifest = runfile.read_manifest(f)
            if manifest.get("bundle"):
                if key not in manifest["members"]:
                    raise runfile.CorruptEntry("a bundle that does not hold this run")
                # The bundle's CRC of the run's record covers every byte of it, the record's own
                # manifest and member CRCs too: checking those members again would read the
                # record twice.
                runfile.read_member(f, manifest, key)
                bundle = manifest
                manifest = runfile.read_manifest(runfile.Window(f, manifest, key))
                problem = _check(manifest, key)
            else:
                problem = _check(manifest, key) or _crc(runfile.verify(f, manifest))
        except (FileNotFoundError, NotADirectoryError):  # no entry, or no cache there at all
            self.misses += 1
            return None
        except (OSError, runfile.CorruptEntry) as err:
            problem = str(err)
        finally:
            if f is not None and not (pin and problem is None):
                f.close()
        if problem:
            self._discard(path, problem)
            self.misses += 1
            return None
        _touch(path)
        self.hits += 1
        return RunEntry(path, manifest, verified=True, bundle=bundle, file=f if pin else None)

    def _discard(self, path: Path, why: str) -> None:
        """Removes the damaged entry at `path` (whatever is there: a file, or a directory where a
        file should be), says so, and records it in `discarded`."""
        self._damaged(path, why)
        output._rmtree(path)

    def _damaged(self, path: Path, why: str) -> None:
        import warnings

        self.discarded.append(f"{path}: {why}")
        warnings.warn(
            DamagedEntryWarning(f"{path}: a damaged run cache entry ({why}); removed, computed again"),
            stacklevel=3,
        )

    def put_or_warn(self, key: str, record: RunRecord, inputs: Mapping[str, Any] | None = None) -> None:
        """`put`, where a cache that cannot be written (a read-only mount, a path below a file)
        costs a warning, not the run, whose results its caller has either way."""
        try:
            self.put(key, record, inputs)
        except OSError as err:
            self._not_stored("a run", err)

    def check_writable(self) -> bool:
        """Whether a file can be made in the cache (in its staging directory); if not, the
        `CacheWriteWarning` is said now, once for this object and the copies it sends to workers
        (a batch's workers would each say it once)."""
        probe = None
        try:
            probe = self.staging("probe")
            probe.open("wb").close()
        except OSError as err:
            self._not_stored("runs", err)
            return False
        finally:
            if probe is not None:
                with contextlib.suppress(OSError):
                    probe.unlink()
        return True

    def _not_stored(self, what: str, err: OSError) -> None:
        """Warns (`CacheWriteWarning`) the first time this object could not store; the runs
        after it go on quietly (a worker process keeps one object per cache, so a sweep's worker
        warns once, not once per call)."""
        if self._not_storing:
            return
        self._not_storing = True
        import warnings

        warnings.warn(
            CacheWriteWarning(
                f"the run cache ({self.root}) could not store {what}: {err}; runs go on uncached"
            ),
            stacklevel=4,
        )

    def put(self, key: str, record: RunRecord, inputs: Mapping[str, Any] | None = None) -> Path:
        """Stores run `key` from `record`, atomically (written under tmp/ and renamed into
        place), its manifest's inputs this process's build (`build_inputs`) and `inputs` (the
        seed, ...); returns the entry's path (written when a `bundling` that keeps it ends)."""
        members: list[tuple[str, bytes | Path]] = [
            ("summary.json", record.summary_json.encode("utf-8")),
            ("scenario.resolved.toml", record.resolved.encode("utf-8")),
        ]
        tables = {}
        for name, data in record.tables.items():
            member = f"{name}.parquet" if isinstance(data, Path) or data[:4] == b"PAR1" else f"{name}.arrows"
            members.append((member, data))
            tables[name] = member
        members += [(name, data) for name, data in record.extras.items() if name in EXTRA_MEMBERS]
        if record.pcap_dir is not None:
            members += [(f"pcap/{p.name}", p) for p in sorted(Path(record.pcap_dir).glob("*.pcap"))]
        manifest = {
            "format": FORMAT,
            "key": key,
            "inputs": {**build_inputs(), **(inputs or {})},
            "tables": tables,
            "wall_time_s": record.wall_time_s,
            "events": record.events,
            "created": time.time(),
            "host": output._host(),
        }
        bundle = getattr(self._bundles, "runs", None)
        small = all(isinstance(data, bytes) for _, data in members)
        if bundle is not None and small and sum(len(d) for _, d in members) <= BUNDLED_MAX_BYTES:
            bundle.append((key, runfile.encode(members, manifest)))  # type: ignore[arg-type]
            return self.path(key)
        return self._store(key, lambda tmp: runfile.write(tmp, members, manifest))

    def _store(self, key: str, write: Callable[[Path], Any]) -> Path:
        """Stores run `key`'s file: `write(path)` writes it under tmp/, then it is renamed into
        place; returns the entry's path."""
        target = self.path(key)
        tmp = self.staging(target.name)
        try:
            write(tmp)
            os.replace(tmp, self._dir(target.parent) / target.name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.stored += 1
        return target

    @contextlib.contextmanager
    def bundling(self) -> Iterator[None]:
        """Within it, `put` (from this thread) keeps the small runs (tables in memory, up to
        `BUNDLED_MAX_BYTES`) and stores them when it ends, however it ends: two or more as one
        bundle (see the module's doc), each under its own name. Nothing is in the cache before
        then: a process killed within it loses them, and they run again."""
        if getattr(self._bundles, "runs", None) is not None:  # already bundling: the outer one stores them
            yield
            return
        self._bundles.runs = []
        try:
            yield
        finally:
            runs, self._bundles.runs = self._bundles.runs, None
            try:
                self._store_bundle(runs)
            except OSError as err:  # as `put_or_warn`: a warning, not the runs
                self._not_stored(f"{len(runs)} runs" if len(runs) > 1 else "a run", err)

    def _store_bundle(self, runs: list[tuple[str, bytes]]) -> None:
        """Writes `runs` (key, run file) as one bundle under tmp/, links each run's name to it
        (as atomic as any entry: `_link_into_place`), then drops tmp/'s name."""
        if not runs:
            return
        if len(runs) == 1:  # one run: its run file alone
            key, data = runs[0]
            self._store(key, lambda tmp: tmp.write_bytes(data))
            return
        bundle = self.staging(f"bundle-{runs[0][0]}")
        try:
            runfile.write(bundle, runs, {"format": FORMAT, "bundle": True, "inputs": build_inputs()})
            for key, _ in runs:
                self._link_into_place(bundle, key)
                self.stored += 1
        finally:
            bundle.unlink(missing_ok=True)

    def _link_into_place(self, written: Path, key: str) -> None:
        """Gives the whole file `written` run `key`'s name. A new name is one link, made at once
        (no reader sees it before the file is whole); a name already there (an entry stored
        again, or a corrupt one) is replaced by a link under tmp/ renamed over it."""
        target = self.path(key)
        self._dir(target.parent)
        try:
            os.link(written, target)
        except FileExistsError:
            link = self.staging(target.name)
            link.unlink(missing_ok=True)
            os.link(written, link)
            os.replace(link, target)

    # ----------------------------------------------------------------------- small JSON entries

    def json_path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get_json(self, kind: str, key: str) -> Any:
        """The JSON entry `key` of `kind` (a reproduction's planned scenarios), or None (also for
        one whose header does not parse or whose value fails its SHA-256: it is computed again).
        Not read under ``refresh``."""
        if self.refresh:
            return None
        path = self.json_path(kind, key)
        try:
            head, _, value = path.read_bytes().partition(b"\n")
            doc = json.loads(head)
            if not isinstance(doc, dict) or doc.get("key") != key or doc.get("format") != FORMAT:
                return None
            if doc.get("sha256") != hashlib.sha256(value).hexdigest():
                self._damaged(path, "its value fails its SHA-256")
                return None
            found = json.loads(value)
        except (OSError, ValueError):
            return None
        _touch(path)
        return found

    def put_json(self, kind: str, key: str, value: Any) -> None:
        """Stores `value` as the JSON entry `key` of `kind`, atomically: a line of JSON saying
        what it is (with the value's SHA-256, which `get_json` checks), then the value's JSON."""
        target = self.json_path(kind, key)
        tmp = self.staging(target.name)
        text = json.dumps(value).encode()
        digest = hashlib.sha256(text).hexdigest()
        head = {"format": FORMAT, "key": key, "inputs": build_inputs(), "sha256": digest}
        try:
            tmp.write_bytes(json.dumps(head).encode() + b"\n" + text)
            os.replace(tmp, self._dir(target.parent) / target.name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    # ----------------------------------------------------------------------- experiment entries

    def dir_path(self, key: str) -> Path:
        return self.root / EXPERIMENTS / key[:2] / key

    def get_dir(self, key: str) -> Path | None:
        """The directory entry `key` (an evaluated experiment), every file checked against its
        manifest (size and SHA-256), or None; a corrupt or partial one is removed."""
        if self.refresh:
            return None
        path = self.dir_path(key)
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            if path.exists():
                self._discard(path, "no manifest")
            return None
        except (OSError, ValueError) as err:
            self._discard(path, str(err))
            return None
        files = manifest.get("files") if manifest.get("key") == key else None
        problem = "foreign manifest" if not isinstance(files, dict) else None
        for name, (size, digest) in (files or {}).items():
            file = path / name
            try:
                if file.stat().st_size != size or sha256_file(file) != digest:
                    problem = f"{name} differs from the manifest"
            except OSError as err:
                problem = f"{name}: {err}"
            if problem:
                break
        if problem:
            self._discard(path, problem)
            return None
        _touch(path / MANIFEST)
        return path

    def put_dir(
        self, key: str, source: Path, names: list[str], extra: Mapping[str, Any] | None = None
    ) -> None:
        """Stores the files `names` (relative paths under `source`) as directory entry `key`,
        hard-linked where the file system allows (`fairstream.output.link_or_copy`)."""
        target = self.dir_path(key)
        tmp = self.staging(key)
        try:
            files = {}
            for name in names:
                dst = tmp / name
                dst.parent.mkdir(parents=True, exist_ok=True)
                output.link_or_copy(source / name, dst)
                files[name] = [dst.stat().st_size, sha256_file(dst)]
            manifest = {
                "format": FORMAT,
                "key": key,
                "inputs": build_inputs(),
                "files": files,
                "created": time.time(),
                **(extra or {}),
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():  # an entry found corrupt, or replaced under refresh
                output._rmtree(target)
            try:
                os.rename(tmp, target)
            except OSError:
                if not (target / MANIFEST).is_file():
                    raise
                output._rmtree(tmp)  # another process stored the same key meanwhile: theirs stays
        except BaseException:
            output._rmtree(tmp)
            raise
        self.stored += 1

    # ----------------------------------------------------------------------- info and pruning

    def entries(self) -> Iterator[tuple[str, Path, os.stat_result]]:
        """(kind, path, stat) of every entry: kind ``run``, ``experiment`` or ``plan``."""
        for kind, sub in (("run", RUNS), ("experiment", EXPERIMENTS), ("plan", PLANS)):
            base = self.root / sub
            if not base.is_dir():
                continue
            for shard in sorted(base.iterdir()):
                if not shard.is_dir():
                    continue
                for path in sorted(shard.iterdir()):
                    try:
                        st = (path / MANIFEST).stat() if kind == "experiment" else path.stat()
                    except OSError:
                        continue
                    yield kind, path, st

    def _inventory(self) -> tuple[list[_Entry], dict[tuple[int, int], int]]:
        """Every entry with its files, and how many names each file (device, inode) has among
        the entries: a bundle is named by each of its runs, and the ``h2h-*`` experiments'
        entries link one dataset. Names outside the cache (an output directory's links) are not
        counted: to the cache such a file is its own."""
        found = []
        names: dict[tuple[int, int], int] = {}
        for kind, path, st in self.entries():
            if kind == "experiment":
                files = []
                for f in path.rglob("*"):
                    fst = f.lstat()
                    if stat.S_ISREG(fst.st_mode):
                        files.append(((fst.st_dev, fst.st_ino), fst.st_size))
            else:
                files = [((st.st_dev, st.st_ino), st.st_size)]
            for inode, _ in files:
                names[inode] = names.get(inode, 0) + 1
            found.append(_Entry(kind, path, st, files))
        return found, names

    def _sized_entries(self) -> list[tuple[str, Path, os.stat_result, float]]:
        """(kind, path, stat, bytes) of every entry, a file with several names in the cache
        shared among them (`_inventory`): the entries' bytes add up to the space the cache
        takes."""
        found, names = self._inventory()
        return [(e.kind, e.path, e.st, sum(n / names[i] for i, n in e.files)) for e in found]

    def entry_build(self, kind: str, path: Path) -> str | None:
        """The build id an entry was computed by (None when unreadable)."""
        try:
            if kind == "run":
                with open(path, "rb") as f:
                    manifest = runfile.read_manifest(f)
            elif kind == "plan":
                with open(path, "rb") as f:
                    manifest = json.loads(f.readline())
            else:
                manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError):
            return None
        if manifest.get("format") != FORMAT:
            return None
        return (manifest.get("inputs") or {}).get("build")

    def info(self, *, builds: bool = True) -> dict[str, Any]:
        """What the cache holds: its place, entries and bytes of each kind, the oldest and most
        recent last use, and (with `builds`) how many entries this build can use."""
        found: dict[str, dict[str, Any]] = {}
        current = build().id if builds else None
        for kind, path, st, size in self._sized_entries():
            k = found.setdefault(
                kind, {"entries": 0, "bytes": 0.0, "usable": 0, "oldest": None, "newest": None}
            )
            k["entries"] += 1
            k["bytes"] += size
            k["oldest"] = st.st_mtime if k["oldest"] is None else min(k["oldest"], st.st_mtime)
            k["newest"] = st.st_mtime if k["newest"] is None else max(k["newest"], st.st_mtime)
            if builds and self.entry_build(kind, path) == current:
                k["usable"] += 1
        total = sum(k["bytes"] for k in found.values())
        for k in found.values():
            k["bytes"] = round(k["bytes"])
        tmp = self.root / TMP
        return {
            "root": str(self.root),
            "build": current,
            "kinds": found,
            "bytes": round(total),
            "staging": len(os.listdir(tmp)) if tmp.is_dir() else 0,
        }

    def prune(
        self,
        *,
        older_than_s: float | None = None,
        max_bytes: int | None = None,
        stale: bool = False,
        now: float | None = None,
    ) -> tuple[int, int]:
        """Removes entries last used more than `older_than_s` ago, those of other builds
        (`stale`), then the least recently used until the cache holds at most `max_bytes`, and
        what dead processes left in tmp/; returns (entries removed, bytes freed)."""
        now = time.time() if now is None else now
        found, names = self._inventory()
        total = sum({inode: size for e in found for inode, size in e.files}.values())
        removed = freed = 0

        def remove(entry: _Entry) -> None:
            # The space comes back with a file's last name in the cache.
            nonlocal removed, freed
            output._rmtree(entry.path)  # whatever is at its name, a directory put there by hand too
            removed += 1
            for inode, size in entry.files:
                names[inode] -= 1
                freed += 0 if names[inode] else size

        keep = []
        current = build().id if stale else None
        for entry in found:
            old = older_than_s is not None and now - entry.st.st_mtime > older_than_s
            if old or (stale and self.entry_build(entry.kind, entry.path) != current):
                remove(entry)
            else:
                keep.append(entry)
        if max_bytes is not None:
            for entry in sorted(keep, key=lambda e: e.st.st_mtime):
                if total - freed <= max_bytes:
                    break
                remove(entry)
        clear_staging(self.root)
        return removed, freed


@dataclass(frozen=True)
class _Entry:
    """An entry as `RunCache._inventory` finds it: its files as ((device, inode), bytes)."""

    kind: str
    path: Path
    st: os.stat_result
    files: list[tuple[tuple[int, int], int]]


def _check(manifest: dict[str, Any], key: str) -> str | None:
    """Why a run entry's manifest cannot be served (None when it can): it must be this format's
    and key's, and name the summary and the resolved scenario among its members."""
    if manifest.get("format") != FORMAT or manifest.get("key") != key:
        return "a manifest of another format or key"
    members = manifest["members"]
    if "summary.json" not in members or "scenario.resolved.toml" not in members:
        return "no summary or resolved scenario"
    if any(m not in members for m in manifest.get("tables", {}).values()):
        return "a table the manifest names is not among its members"
    return None


def _crc(member: str | None) -> str | None:
    return None if member is None else f"member {member} fails its CRC"


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only cache still serves
        os.utime(path)


#: The caches workers received, by (root, refresh): one object per process.
_RECEIVED: dict[tuple[Path, bool], RunCache] = {}


def _in_this_process(root: Path, refresh: bool, not_storing: bool = False) -> RunCache:
    """The cache at `root` as a worker process receives it with each call: the same object every
    time, so that the directories it makes (a shard per entry) are made once per process, not
    once per call. `not_storing`: the sender has warned that it cannot store (`check_writable`),
    so this object does not warn again."""
    cache = _RECEIVED.get((root, refresh))
    if cache is None:
        cache = _RECEIVED[(root, refresh)] = RunCache(root, refresh=refresh)
    cache._not_storing = cache._not_storing or not_storing
    return cache


def clear_staging(base: Path) -> list[Path]:
    """Removes what processes of this host that no longer run left in `base`/tmp/."""
    removed = []
    tmp = base / TMP
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    host = output._host()
    for name in names:
        stem, _, owner = name.rpartition(".")
        pid, _, where = owner.partition("@")
        if not stem or where != host or not pid.isdigit() or output._alive(int(pid)):
            continue
        path = tmp / name
        output._rmtree(path)
        removed.append(path)
    return removed


class CacheWriteWarning(UserWarning):
    """The run cache could not store a run (a read-only mount, a path below a file): the runs
    go on, their results in hand, uncached. Warned once per `RunCache` object."""


class DamagedEntryWarning(UserWarning):
    """A run cache entry was found damaged (cut short, altered, of the wrong kind), removed, and
    its result computed again; `RunCache.discarded` lists them."""


def parse_age(text: str) -> float:
    """Seconds in an age such as ``30d``, ``12h``, ``90min`` or ``3600s``; ValueError otherwise."""
    units = {"s": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
    t = text.strip().lower()
    for unit in sorted(units, key=len, reverse=True):
        if t.endswith(unit):
            number = t[: -len(unit)].strip()
            try:
                value = float(number)
            except ValueError:
                break
            if value >= 0:
                return value * units[unit]
            break
    raise ValueError(f"`{text}` is not an age; expected a number and a unit: 30d, 12h, 90min, 3600s, 2w")
