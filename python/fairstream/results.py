"""`RunResult`: the results of one run, with its tables read lazily as polars DataFrames: from
its output directory, or, for a run that wrote none, straight from the simulator's memory as Arrow
record batches (the Arrow PyCapsule stream interface; nothing goes through a file), or from
where a campaign keeps it: a point of a dataset (``RunResult(DIR/<key>)`` with DIR a dataset
directory, see `fairstream.dataset`) or an entry of the run cache (`fairstream.cache`).

polars is imported on the first table access, not with this module: printing a run's summary
(summary.json) needs only `json`, and keeps ``fairstream run`` light.
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import tempfile
    from typing import Any

    import polars as pl

#: Table name -> Parquet file in the output directory.
TABLES = {
    "flow_series": "flow_series.parquet",
    "flow_summary": "flow_summary.parquet",
    "link_series": "link_series.parquet",
    "port_series": "port_series.parquet",
    "metrics": "metrics.parquet",
    "packets": "packets.parquet",
}

#: Columns and polars dtype names of the (possibly empty) metrics table.
_METRICS_SCHEMA = {
    "t": "Float64",
    "flow_id": "UInt32",
    "flow": "String",
    "metric": "String",
    "value": "Float64",
}


#: The polars dtype of each kind of declared column (`_core.schema`).
_KIND_DTYPES = {"count": "UInt64", "real": "Float64", "text": "String", "flag": "Boolean"}


def _declared_series_schema(name: str) -> dict[str, str]:
    """Columns and polars dtype names of the (possibly empty) series `name` a queue discipline
    declares (``port_series``: an ERICA port's), as the run writes it."""
    from . import _core

    head = {"link_id": "UInt32", "link": "String", "t_start": "Float64", "t_end": "Float64"}
    columns = _core.schema()["queue_series"][name]
    return head | {c["name"]: _KIND_DTYPES[c["kind"]] for c in columns}


#: Columns and polars dtype names of the (possibly empty) per-packet trace, as
#: crates/results/src/tables.rs writes it.
_PACKETS_SCHEMA = {
    "t": "Float64",
    "t_ns": "UInt64",
    "packet_id": "UInt64",
    "event": "String",
    "link_id": "UInt32",
    "flow_id": "UInt32",
    "seq": "Int64",
    "size": "UInt32",
    "reverse": "Boolean",
}


class RunResult:
    """The results of one run, read from `output_dir` on first access.

    Tables: ``flow_series``, ``flow_summary``, ``link_series``, ``port_series`` (ERICA ports;
    empty without them), ``metrics`` (empty when the run
    recorded none), ``packets`` (empty when not recorded) and ``link_summary`` (from summary.json).
    A run that wrote no directory (``fairstream.run`` without ``output_dir``) has ``output_dir``
    None: its tables come from the simulator's memory, which this object keeps alive.
    """

    output_dir: Path | None

    def __init__(
        self, output_dir: str | os.PathLike[str], *, _tempdir: tempfile.TemporaryDirectory | None = None
    ):
        self.output_dir = Path(output_dir)
        self._tempdir = _tempdir
        self._sim: Any = None
        self._source: Any = None
        if not (self.output_dir / "summary.json").is_file():
            from .dataset import find

            self._source = find(self.output_dir)  # a point of a dataset
            if self._source is None:
                raise FileNotFoundError(f"{self.output_dir} holds no run results (no summary.json)")

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"RunResult(name={s.get('name')!r}, seed={s.get('seed')}, duration_s={s.get('duration_s')}, "
            f"flows={len(s.get('flows', []))}, output_dir='{self.output_dir}')"
        )

    @classmethod
    def _in_memory(cls, sim: Any) -> RunResult:
        """The results of finished simulation `sim` (a `fairstream._core.Simulation`), read from
        its memory: nothing is written."""
        self = cls.__new__(cls)
        self.output_dir = None
        self._tempdir = None
        self._sim = sim
        self._source = None
        return self

    @classmethod
    def _of(cls, source: Any) -> RunResult:
        """The results `source` holds: anything with ``summary()``, ``resolved()`` and
        ``table(name)`` (a DataFrame, or None for a table the run did not record), such as a run
        cache entry (`fairstream.cache.RunEntry`); ``output_dir`` is None."""
        self = cls._in_memory(None)
        self._source = source
        return self

    @cached_property
    def summary(self) -> dict[str, Any]:
        """summary.json as a dict."""
        if self._sim is not None:
            return self._sim.summary()
        if self._source is not None:
            return self._source.summary()
        return json.loads((self._dir / "summary.json").read_text(encoding="utf-8"))

    @cached_property
    def emu(self) -> dict[str, Any] | None:
        """emu.json as a dict, for a run of the emulator (`fairstream.emulate`): each link's
        departure errors, packets forwarded late, the flows' ends' own reports; None otherwise."""
        if self._sim is not None:
            stats = getattr(self._sim, "emu_stats", None)
            return stats() if stats is not None else None
        if self._source is not None:  # a run cache entry, a dataset point
            emu = getattr(self._source, "emu", None)
            return emu() if emu is not None else None
        path = self._dir / "emu.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    @cached_property
    def resolved_toml(self) -> str:
        """The scenario with every default filled in."""
        if self._sim is not None:
            return self._sim.resolved_toml()
        if self._source is not None:
            return self._source.resolved()
        return (self._dir / "scenario.resolved.toml").read_text(encoding="utf-8")

    @property
    def _dir(self) -> Path:
        assert self.output_dir is not None
        return self.output_dir

    @cached_property
    def flow_series(self) -> pl.DataFrame:
        """One row per flow per recording interval."""
        return self._read("flow_series")

    def flow_rows(self, flow: str) -> pl.DataFrame:
        """`flow_series`'s rows of the flow called `flow`, in the table's order (none, with its
        columns, for a flow the run does not have). The table is split by flow once, on the first
        call: an evaluation that asks for each flow's rows many times filters it once."""
        part = self._flow_parts.get(flow)
        return part if part is not None else self.flow_series.clear()

    @cached_property
    def _flow_parts(self) -> dict[str, pl.DataFrame]:
        parts = self.flow_series.partition_by("flow", as_dict=True)
        return {str(key[0]): part for key, part in parts.items()}

    @cached_property
    def flow_summary(self) -> pl.DataFrame:
        """One row per flow."""
        return self._read("flow_summary")

    @cached_property
    def link_series(self) -> pl.DataFrame:
        """One row per link per recording interval: queue, forwarded, dropped, utilisation."""
        return self._read("link_series")

    @cached_property
    def port_series(self) -> pl.DataFrame:
        """One row per ERICA port per recording interval: target, z, fair share, active VCs,
        cells waiting; empty (with its columns) when no link runs ERICA."""
        return self._read("port_series", empty_schema=_declared_series_schema("port_series"))

    @cached_property
    def metrics(self) -> pl.DataFrame:
        """Protocol metric records (cwnd, rtt, rate, ...); empty unless ``[record] metrics = true``."""
        return self._read("metrics", empty_schema=_METRICS_SCHEMA)

    @cached_property
    def packets(self) -> pl.DataFrame:
        """Per-packet trace; empty (with its columns) unless ``[record] packets = true``."""
        return self._read("packets", empty_schema=_PACKETS_SCHEMA)

    @cached_property
    def link_summary(self) -> pl.DataFrame:
        """One row per link, from summary.json."""
        import polars as pl

        return pl.DataFrame(self.summary.get("links", []))

    def lazy(self, name: str) -> pl.LazyFrame:
        """Table `name` as a LazyFrame: a run directory's Parquet file is scanned (a filter reads
        only what it needs of a large packet trace), anything else is the table itself."""
        if self._sim is None and self._source is None and name in TABLES:
            path = self._dir / TABLES[name]
            if path.is_file():
                import polars as pl

                return pl.scan_parquet(path)
        if self._source is not None and hasattr(self._source, "lazy") and name not in self.__dict__:
            return self._source.lazy(name)  # not kept in memory with the run
        return self.table(name).lazy()

    def table(self, name: str) -> pl.DataFrame:
        """A table by name (see `TABLES`, plus ``link_summary``)."""
        if name not in TABLES and name != "link_summary":
            raise KeyError(f"no table {name!r}; tables: {', '.join([*TABLES, 'link_summary'])}")
        return getattr(self, name)

    def to_pandas(self, name: str):
        """A table as a pandas DataFrame (needs pandas and pyarrow: ``pip install 'fairstream[pandas]'``)."""
        return self.table(name).to_pandas()

    def _read(self, name: str, empty_schema: dict[str, str] | None = None) -> pl.DataFrame:
        """Reads a table; an empty one with `empty_schema` (column -> dtype name) when the run
        did not record it."""
        if self._sim is not None:
            table = self._sim.table(name)  # Arrow data, handed over without a file
            if table is not None:
                import polars as pl

                return pl.DataFrame(table)
        elif self._source is not None:
            frame = self._source.table(name)
            if frame is not None:
                return frame
        else:
            path = self._dir / TABLES[name]
            if path.is_file():
                import polars as pl

                return pl.read_parquet(path)
        if empty_schema is not None:
            import polars as pl

            return pl.DataFrame(schema={col: getattr(pl, dtype) for col, dtype in empty_schema.items()})
        raise FileNotFoundError(f"{self.output_dir or 'the run'}: table {name} is missing")
