"""Datasets: the runs of a sweep or an experiment kept as one set of Parquet tables, one file per
table, instead of a directory of tables per run.

A dataset directory holds ``dataset.json`` (what it holds), ``runs.parquet`` (one row per point:
its index, key, parameters, the run's cache key, seed, events, wall time, whether it came from the
cache, its summary as JSON, its resolved scenario and, for a run through the emulator, its
``emu.json``) and one file per table of the runs
(``flow_summary``, ``link_summary``, ``flow_series``, ``link_series``, ``port_series`` when a link
runs ERICA; ``metrics`` and ``packets`` when kept), each row led by the point's index columns
(``point``, ``key``, and ``replica`` in a reproduction) and its parameters, one column each (a
parameter named like a column of the tables, or of the runs table, gets the prefix ``param.``).
Rows are in point order, so each point is a contiguous run of rows: a filter on ``point`` reads
only the row groups that hold it, by the Parquet statistics, and `Dataset.point` takes a point's
rows as a slice of the table read once.

`RunResult` reads a point of a dataset as it reads a run directory: ``RunResult(DIR/<key>)`` (or
``DIR/r<n>/<key>`` for replica n of a reproduction) where DIR holds ``dataset.json``. A table the
dataset did not keep (a reproduction keeps no metrics or packet trace by default) is read from the
run cache, which holds every run whole, while it still holds that run (`fairstream.cache`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    import polars as pl

DATASET_FILE = "dataset.json"
RUNS_TABLE = "runs"
FORMAT = 1

#: Tables a dataset keeps by default; the others only when asked (``--keep-runs``, or for a sweep,
#: the scenario's ``[record]`` table).
SMALL_TABLES = ("flow_summary", "link_summary", "flow_series", "link_series", "port_series")
LARGE_TABLES = ("metrics", "packets")

#: The runs table's columns after the index and the parameters.
RUN_COLUMNS = (
    "run_key",
    "cached",
    "seed",
    "complete",
    "events",
    "wall_time_s",
    "summary",
    "scenario",
    "emu",
)

#: Rows per Parquet row group (statistics per group find a point's rows).
ROW_GROUP = 1 << 16


def _scalar(value: Any) -> Any:
    """A parameter as a column value: scalars as they are, anything else as compact JSON."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class DatasetWriter:
    """Collects the runs of a sweep or an experiment and writes them as one dataset (`close`).

    `params`: the parameter names, in column order; `tables`: the tables kept; `replicas`: whether
    points carry a replica number (a reproduction); `cache`: the run cache the runs are in (where
    a point's tables not kept are read from later). Points may be added in any order; the files
    hold them in (replica, point) order, whatever order they finished in.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        params: Sequence[str],
        tables: Iterable[str] = SMALL_TABLES,
        *,
        replicas: bool = False,
        cache: str | os.PathLike[str] | None = None,
    ):
        self.directory = Path(directory)
        self.cache = None if cache is None else str(cache)
        self.params = list(params)
        self.tables = [t for t in (*SMALL_TABLES, *LARGE_TABLES) if t in set(tables)]
        self.replicas = replicas
        self._rows: dict[tuple[int, int], dict[str, Any]] = {}
        #: Each point's parameters, apart from its row: a parameter may be named as a column of
        #: the runs table (``seed``), whose value is then the parameter's in its own column.
        self._params: dict[tuple[int, int], dict[str, Any]] = {}
        self._frames: dict[str, dict[tuple[int, int], pl.DataFrame | bytes]] = {t: {} for t in self.tables}
        self._links: dict[tuple[int, int], list[dict[str, Any]]] = {}  # link_summary, from summaries
        #: Each table's frames read so far, in point order, and (point, rows) of each point in them.
        self._read: dict[str, tuple[list[pl.DataFrame], list[tuple[tuple[int, int], int]]]] = {
            t: ([], []) for t in self.tables
        }
        self._folded = 0  # the points (0, 0), (0, 1), ... read into `_read`
        self._ready = 0  # the points (0, 0), (0, 1), ... added
        self._pcaps: list[tuple[str, Path]] = []

    def add(
        self,
        index: int,
        key: str,
        params: Mapping[str, Any],
        summary: Mapping[str, Any],
        tables: Mapping[str, pl.DataFrame | bytes | None],
        *,
        replica: int = 0,
        run: Mapping[str, Any] | None = None,
        pcaps: Sequence[Path] = (),
    ) -> None:
        """One point: its index and key, its parameters, the run's summary (a dict, as
        summary.json) and tables (by name, as DataFrames or their bytes; a table it did not record
        may be missing or None),
        and `run`: what else the runs table records of it (cache key, wall time, events, cached,
        scenario, and the summary's own JSON text, kept as it is when given)."""

        import polars  # noqa: F401  (for `close`: imported here, while the workers still run)

        at = (replica, index)
        if at in self._rows:
            raise ValueError(f"point {index} (replica {replica}) was added already")
        row = {"point": index, "key": key, **({"replica": replica} if self.replicas else {})}
        self._params[at] = {p: _scalar(params.get(p)) for p in self.params}
        info = dict(run or {})
        row.update(
            {
                "run_key": info.get("run_key"),
                "cached": bool(info.get("cached", False)),
                "seed": summary.get("seed"),
                "complete": summary.get("complete", True),
                "events": info.get("events", summary.get("events")),
                "wall_time_s": info.get("wall_time_s", summary.get("wall_time_s")),
                "summary": info.get("summary_json") or json.dumps(summary),
                "scenario": info.get("scenario"),
                "emu": info.get("emu_json"),
            }
        )
        self._rows[at] = row
        for name in self.tables:
            frame = tables.get(name)
            if name == "link_summary" and frame is None:
                self._links[at] = list(summary.get("links", []))
            elif isinstance(frame, bytes) or (frame is not None and frame.height):
                self._frames[name][at] = frame
        self._pcaps.extend((key if not replica else f"r{replica}/{key}", p) for p in pcaps)
        while (0, self._ready) in self._rows:
            self._ready += 1
        if self._ready - self._folded >= self.fold_points:
            self._fold([(0, i) for i in range(self._folded, self._ready)])
            self._folded = self._ready

    #: Points read at once, while the runs go on: the first points, in order, once this many have
    #: been added (what is left is read by `close`). The frames then hold the tables' rows in
    #: point order, and most of the reading is done by the time the last run ends.
    fold_points = 256

    def _fold(self, ats: list[tuple[int, int]]) -> None:
        """The tables of points `ats` (in order, following those read before) read into `_read`:
        the IPC streams among them joined and read at once."""
        self._link_frames(ats)
        for name in self.tables:
            items = self._frames[name]
            present = [at for at in ats if at in items]
            pieces, heights = _read_in_order([items.pop(at) for at in present])
            frames, rows = self._read[name]
            frames.extend(pieces)
            rows.extend((at, n) for at, n in zip(present, heights, strict=True) if n)

    def _link_frames(self, ats: list[tuple[int, int]]) -> None:
        """link_summary of points `ats` made from their summaries' links: one frame of all their
        rows, built column by column, read as it is (or, where some of the points brought a
        link_summary of their own, each point's rows a slice of it, to be read in order)."""
        import polars as pl

        links = [(at, self._links.pop(at)) for at in ats if at in self._links]
        if not links or "link_summary" not in self._frames:
            return
        rows = [link for _, every in links for link in every]
        if not rows:
            return
        names = dict.fromkeys(name for link in rows for name in link)
        every = pl.DataFrame({name: [link.get(name) for link in rows] for name in names}, strict=False)
        items = self._frames["link_summary"]
        if not any(at in items for at in ats):  # one piece: concatenating a slice per point is slow
            frames, read = self._read["link_summary"]
            frames.append(every)
            read.extend((at, len(its)) for at, its in links if its)
            return
        start = 0
        for at, its in links:
            if its:
                items[at] = every.slice(start, len(its))
            start += len(its)

    def _columns(self, tables: Iterable[pl.DataFrame]) -> dict[str, str]:
        """Parameter name -> column name (prefixed where a table, the runs table included, has a
        column of that name)."""
        taken = {"point", "key", "replica", *RUN_COLUMNS}
        for frame in tables:
            taken.update(frame.columns)
        return {p: f"param.{p}" if p in taken else p for p in self.params}

    def close(self) -> Path:
        """Writes the dataset; returns its directory."""
        import polars as pl

        self.directory.mkdir(parents=True, exist_ok=True)
        order = sorted(self._rows)
        self._fold(order[self._folded :])
        tables = {
            name: (pl.concat(frames, how="diagonal_relaxed", rechunk=False), rows)
            for name, (frames, rows) in self._read.items()
            if rows
        }
        columns = self._columns(rows for rows, _ in tables.values())
        index_cols = ["point", "key", *(["replica"] if self.replicas else [])]
        lead = [*index_cols, *columns.values()]

        def lead_of(at: tuple[int, int]) -> dict[str, Any]:
            row, params = self._rows[at], self._params[at]
            return {**{c: row[c] for c in index_cols}, **{columns[p]: params[p] for p in self.params}}

        lead_frame = _frame([lead_of(at) for at in order], lead)
        position = {at: i for i, at in enumerate(order)}
        run_cols = [*lead, *RUN_COLUMNS]
        runs = _frame([{**lead_of(at), **self._rows[at]} for at in order], run_cols)
        runs = runs.with_columns(pl.col("emu").cast(pl.String))  # null but for emulated runs
        _write(runs, self.directory / f"{RUNS_TABLE}.parquet")
        for name, (rows, heights) in tables.items():
            # each row's point: its position, repeated over the point's rows
            at = pl.Series([position[a] for a, _ in heights], dtype=pl.UInt32).repeat_by(
                pl.Series([n for _, n in heights], dtype=pl.UInt32)
            )
            heads = lead_frame.select(pl.all().gather(at.explode()))
            _write(
                heads.hstack(rows.drop([c for c in lead if c in rows.columns])),
                self.directory / f"{name}.parquet",
            )
        pcap = []
        for where, path in self._pcaps:
            target = self.directory / "pcap" / where / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy(path, target)
            pcap.append(target.relative_to(self.directory).as_posix())
        meta = {
            "format": FORMAT,
            "points": len(order),
            "index": index_cols,
            "params": columns,
            "tables": list(tables),
            "kept": self.tables,
            "pcap": pcap,
            "cache": self.cache,
        }
        (self.directory / DATASET_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return self.directory


def _split_by(frame: pl.DataFrame, by: list[str]) -> dict[tuple[Any, ...], pl.DataFrame]:
    """`frame`'s rows by their values of the columns `by`, as `partition_by` gives them (in
    order, keyed by tuples): slices of it where each value's rows are consecutive, as a dataset's
    files hold a point's (read in no time, where partitioning a long series takes a good part of
    a second); else `partition_by`'s own."""
    import polars as pl

    if frame.height == 0:
        return {}
    keys = frame.select(by)
    changed = pl.any_horizontal(pl.col(c).ne_missing(pl.col(c).shift(1)) for c in by)
    starts = keys.select(pl.int_range(pl.len()).filter(changed))[:, 0].to_list()
    if starts[:1] != [0]:  # a first row whose values are all null is not `changed`
        starts.insert(0, 0)
    addresses = keys[starts].rows()
    if len(set(addresses)) != len(addresses):  # some value's rows are not together
        return frame.partition_by(by, as_dict=True, maintain_order=True)
    ends = [*starts[1:], frame.height]
    return {a: frame.slice(i, j - i) for a, i, j in zip(addresses, starts, ends, strict=True)}


def _read_in_order(items: Sequence[pl.DataFrame | bytes]) -> tuple[list[pl.DataFrame], list[int]]:
    """Tables (frames, or their bytes: Arrow IPC streams or Parquet files) read as a few frames
    holding their rows in order (empty ones left out), and the rows of each. Consecutive IPC
    streams are joined first (`fairstream._core.join_ipc_streams`) and read at once: reading a
    thousand small streams one by one costs a thousand reads' overhead."""
    from . import _core
    from .cache import read_table

    pieces: list[pl.DataFrame] = []
    heights: list[int] = []
    streams: list[bytes] = []

    def flush() -> None:
        for joined, rows in _core.join_ipc_streams(streams) if streams else ():
            if sum(rows):
                pieces.append(read_table(joined))
            heights.extend(rows)
        streams.clear()

    for item in items:
        if isinstance(item, bytes) and item[:4] != b"PAR1":
            streams.append(item)
            continue
        flush()
        frame = read_table(item) if isinstance(item, bytes) else item
        if frame.height:
            pieces.append(frame)
        heights.append(frame.height)
    flush()
    return pieces, heights


def _copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copyfile(src, dst)


def _frame(rows: list[dict[str, Any]], columns: list[str] | None) -> pl.DataFrame:
    """Rows as a frame; a column whose values mix types becomes text."""
    import polars as pl

    if not rows:
        return pl.DataFrame(schema={c: pl.String for c in columns or []})
    names = columns or list(rows[0])
    mixed = {c for c in names if len({_kind(r.get(c)) for r in rows if r.get(c) is not None}) > 1}
    fixed = [
        {c: str(r.get(c)) if c in mixed and r.get(c) is not None else r.get(c) for c in names} for r in rows
    ]
    return pl.DataFrame(fixed, infer_schema_length=None)


def _kind(value: Any) -> str:
    """Ints and floats are one kind (a column of both is a float column); others by type."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "number"
    return type(value).__name__


def _write(frame: pl.DataFrame, path: Path) -> None:
    frame.write_parquet(
        path, compression="zstd", compression_level=1, statistics=True, row_group_size=ROW_GROUP
    )


# --------------------------------------------------------------------------- reading


class Dataset:
    """A dataset directory, read lazily: `table` (with the index and parameter columns), `frame`
    (the same, tidy: one column per parameter), `point` (one run, as a `RunResult` source) and
    `to_xarray`."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        path = self.directory / DATASET_FILE
        try:
            self.meta = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.directory} is no dataset (no {DATASET_FILE})") from None
        self._tables: dict[str, pl.DataFrame] = {}
        self._parts: dict[str, dict[tuple[Any, ...], pl.DataFrame]] = {}

    def __repr__(self) -> str:
        return f"Dataset('{self.directory}', points={self.meta['points']}, tables={self.meta['tables']})"

    @property
    def index(self) -> list[str]:
        return list(self.meta["index"])

    @property
    def params(self) -> dict[str, str]:
        """Parameter name -> its column."""
        return dict(self.meta["params"])

    @cached_property
    def runs(self) -> pl.DataFrame:
        """One row per point: index, parameters, run_key, cached, seed, complete, events,
        wall_time_s, summary (JSON), scenario (the resolved TOML), emu (an emulated run's
        emu.json, else null)."""
        import polars as pl

        return pl.read_parquet(self.directory / f"{RUNS_TABLE}.parquet")

    def table(self, name: str) -> pl.DataFrame:
        """Table `name` of every point, led by the index and parameter columns; an empty frame
        (index and parameters only) when no point has rows of it. KeyError for a table the
        dataset did not keep."""
        if name == RUNS_TABLE:
            return self.runs
        if name not in self.meta["kept"]:
            raise KeyError(
                f"{self.directory}: table {name} was not kept (kept: {', '.join(self.meta['kept'])}); "
                "run again with --keep-runs to keep it"
            )
        if name not in self._tables:
            import polars as pl

            path = self.directory / f"{name}.parquet"
            if path.is_file():
                self._tables[name] = pl.read_parquet(path)
            else:
                lead = [*self.index, *self.params.values()]
                self._tables[name] = self.runs.select(lead).clear()
        return self._tables[name]

    def frame(self, name: str = "flow_summary") -> pl.DataFrame:
        """Table `name` as a tidy frame: one row per observation, one column per parameter
        (named as the parameter, unless the table has a column of that name: then as in the
        file, ``param.<name>``)."""
        table = self.table(name)
        names = self._param_names(table.columns)
        return table.rename({col: names[p] for p, col in self.params.items() if names[p] != col})

    def _param_names(self, columns: Sequence[str]) -> dict[str, str]:
        """Parameter -> its column in `frame` of a table with `columns`."""
        return {p: p if col == p or p not in columns else col for p, col in self.params.items()}

    def _address(self, replica: int, key: str) -> tuple[Any, ...]:
        return (key, replica) if "replica" in self.index else (key,)

    def point(self, key: str, replica: int = 0) -> DatasetRun:
        """The run of point `key` (of replica `replica`) as a `RunResult` source."""
        runs = self._partition(RUNS_TABLE)
        address = self._address(replica, key)
        if address not in runs:
            where = f"replica {replica} of " if replica else ""
            raise FileNotFoundError(f"{self.directory}: {where}no point {key!r}")
        return DatasetRun(self, address, runs[address].row(0, named=True))

    def _partition(self, name: str) -> dict[tuple[Any, ...], pl.DataFrame]:
        if name not in self._parts:
            frame = self.runs if name == RUNS_TABLE else self.table(name)
            by = ["key", "replica"] if "replica" in self.index else ["key"]
            self._parts[name] = _split_by(frame, by)
        return self._parts[name]

    def rows_of(self, name: str, address: tuple[Any, ...]) -> pl.DataFrame:
        """The rows of table `name` of one point, without the index and parameter columns."""
        lead = [*self.index, *self.params.values()]
        part = self._partition(name).get(address)
        if part is None:
            part = self.table(name).clear()
        return part.drop([c for c in lead if c in part.columns])

    def to_xarray(self, name: str = "flow_summary", variables: Sequence[str] | None = None) -> Any:
        """Table `name` as an `xarray.Dataset` (needs ``pip install 'fairstream[xarray]'``).

        Dimensions: the parameters when the points form a full grid of them (a sweep), else
        ``point`` with each parameter as a coordinate along it; then ``replica`` in a
        reproduction; then the table's own: ``name`` (the flow or link, in the summaries),
        ``flow`` or ``link`` and ``t_start`` (the series), ``flow``, ``metric`` and ``t`` (the
        metrics). Coordinates keep the order values first appear in. One variable per numeric
        (or boolean) column, or those in `variables`; a cell no row fills is NaN.
        """
        try:
            import numpy as np
            import xarray as xr
        except ImportError as err:
            raise RuntimeError("to_xarray needs xarray: pip install 'fairstream[xarray]'") from err
        import polars as pl

        frame = self.frame(name)
        names = self._param_names(self.table(name).columns)
        params = [names[p] for p in self.params]
        own = _own_dims(name, frame.columns)
        # The points' parameters, named as in `frame`: every point a coordinate, rows or none.
        every = self.runs.select(
            "point", *self.index[2:], *(pl.col(col).alias(names[p]) for p, col in self.params.items())
        )
        points = every.filter(pl.col("replica") == 0) if "replica" in self.index else every
        grid = bool(params) and _is_grid(points, params)
        dims = [*(params if grid else ["point"]), *(["replica"] if "replica" in self.index else []), *own]
        skip = {"point", "key", "replica", *params, *own, "flow_id", "link_id"}
        numeric = [
            c for c, t in frame.schema.items() if c not in skip and (t.is_numeric() or t == pl.Boolean)
        ]
        keep = [c for c in (variables or numeric) if c in frame.columns]
        coords = {
            d: (every if d not in own else frame)[d].unique(maintain_order=True).to_list() for d in dims
        }
        where = tuple(
            np.array([{v: i for i, v in enumerate(coords[d])}[v] for v in frame[d].to_list()], dtype=np.intp)
            for d in dims
        )
        shape = tuple(len(coords[d]) for d in dims)
        cells = np.unique(np.ravel_multi_index(where, shape)).size if frame.height else 0
        if cells != frame.height:
            raise ValueError(
                f"{self.directory}: table {name} has {frame.height} rows for {cells} cells of "
                f"({', '.join(dims)}); it is no array along them: read it with frame({name!r})"
            )
        data = {}
        for column in keep:
            values = np.full(shape, np.nan)
            values[where] = frame[column].cast(pl.Float64).fill_null(float("nan")).to_numpy()
            data[column] = (dims, values)
        ds = xr.Dataset(data, coords=coords)
        if not grid:  # each parameter's value along `point`
            along = points.unique("point", maintain_order=True)
            order = {p: i for i, p in enumerate(along["point"].to_list())}
            for p in params:
                values = along[p].to_list()
                ds = ds.assign_coords({p: ("point", [values[order[q]] for q in coords["point"]])})
        ds.attrs.update({"dataset": str(self.directory), "table": name})
        return ds


def _own_dims(name: str, columns: Sequence[str]) -> list[str]:
    if name in ("flow_summary", "link_summary"):
        return ["name"] if "name" in columns else []
    if name == "flow_series":
        return ["flow", "t_start"]
    if name in ("link_series", "port_series"):
        return ["link", "t_start"]
    if name == "metrics":
        return ["flow", "metric", "t"]
    return []


def _is_grid(points: pl.DataFrame, columns: list[str]) -> bool:
    """Whether the points are every combination of their parameters' values, each once."""
    sizes = [points[c].cast(str).n_unique() for c in columns]
    distinct = points.select(columns).cast({c: str for c in columns}).unique().height
    return distinct == points.height and math.prod(sizes) == points.height


class DatasetRun:
    """One point of a dataset, read as a run (a `RunResult` source): its summary and resolved
    scenario from the runs table, its tables from the dataset's, and a table the dataset did not
    keep from the run cache."""

    def __init__(self, dataset: Dataset, address: tuple[Any, ...], row: dict[str, Any]):
        self.dataset = dataset
        self.address = address
        self.row = row

    def summary(self) -> dict[str, Any]:
        return json.loads(self.row["summary"])

    def summary_text(self) -> str:
        return self.row["summary"]

    def resolved(self) -> str:
        return self.row.get("scenario") or ""

    def emu(self) -> dict[str, Any] | None:
        """An emulated run's ``emu.json``; None for a simulated one (or a dataset written before
        the column existed)."""
        text = self.row.get("emu")
        return json.loads(text) if text else None

    def table(self, name: str) -> pl.DataFrame | None:
        if name in self.dataset.meta["kept"]:
            if name not in self.dataset.meta["tables"]:
                return None  # kept, and no point recorded it
            frame = self.dataset.rows_of(name, self.address)
            return frame if frame.height or name != "port_series" else None
        return self._from_cache(name)

    def _from_cache(self, name: str) -> pl.DataFrame | None:
        from .cache import RunCache

        key = self.row.get("run_key")
        where = self.dataset.meta.get("cache")  # the cache the runs went to, wherever it is now set
        entry = RunCache(where).get(key) if key else None
        if entry is None:
            raise FileNotFoundError(
                f"{self.dataset.directory}: point {self.row['key']!r} keeps no {name} table (the output "
                "keeps it with --keep-runs) and the run cache no longer holds its run; run the "
                "command again to compute it"
            )
        return entry.table(name)


def find(path: str | os.PathLike[str]) -> DatasetRun | None:
    """The dataset point a path names (``DIR/<key>`` or ``DIR/r<n>/<key>`` with DIR a dataset
    directory), or None when it names none."""
    p = Path(path)
    parts: list[str] = []
    for _ in range(3):
        if (p / DATASET_FILE).is_file():
            break
        parts.insert(0, p.name)
        if p.parent == p:
            return None
        p = p.parent
    else:
        return None
    if len(parts) == 1:
        replica, key = 0, parts[0]
    elif len(parts) == 2 and parts[0][:1] == "r" and parts[0][1:].isdigit():
        replica, key = int(parts[0][1:]), parts[1]
    else:
        return None
    return _open(p).point(key, replica)


_OPEN: dict[tuple[str, float], Dataset] = {}


def _open(directory: Path) -> Dataset:
    """The `Dataset` at `directory`, shared by the points read from it (read once)."""
    try:
        stamp = (directory / DATASET_FILE).stat().st_mtime
    except OSError:
        stamp = 0.0
    memo = (str(directory.resolve()), stamp)
    if memo not in _OPEN:
        if len(_OPEN) > 8:
            _OPEN.clear()
        _OPEN[memo] = Dataset(directory)
    return _OPEN[memo]


def open_dataset(directory: str | os.PathLike[str]) -> Dataset:
    """The dataset at `directory` (``DIR/data`` of a sweep, ``DIR/<id>/data`` of a reproduction)."""
    return Dataset(directory)
