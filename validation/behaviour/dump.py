"""Dumps what a build of fairstream computes, so that two builds can be compared bit for bit.

A refactoring that must not change behaviour (issue 19) is checked with it: run ``dump`` on the
build before the change and on the build after, then ``diff`` the two files.

    python validation/behaviour/dump.py dump before.json            # B1-B7 and every quick reproduction
    python validation/behaviour/dump.py dump after.json --bench-only
    python validation/behaviour/dump.py diff before.json after.json

What is dumped, for each of the benchmarks B1-B7 (``fairstream/scenarios/bench``, run to the end
in-process) and for every run directory of ``fairstream reproduce --quick`` (each ``summary.json``
under the output, and each experiment's ``result.json``):

- the run's event and packet counts and every value of its per-flow and per-link totals;
- a digest of each table it recorded (flow, link and port series, metric records, packet trace),
  so that a change in any row shows even where the totals agree;
- an experiment's numbers and verdicts (``result.json`` without wall-clock times).

``diff`` compares every value exactly (floats bit for bit), prints each difference, and lists the
keys one side has and the other has not (columns added or removed by the change) apart from the
differences: those are reported, not counted. Exit status 1 when any value differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCHMARKS = ("B1", "B2", "B3", "B4", "B5", "B6", "B7")

#: Keys whose values are wall-clock measurements or paths, not results.
VOLATILE = {"wall_time_s", "events_per_s", "fairstream_version", "elapsed_s", "wall_s"}


def _clean(value: Any) -> Any:
    """`value` without its volatile keys, floats kept exactly (as their hex form)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float):
        return {"f": value.hex()} if math.isfinite(value) else {"f": repr(value)}
    return value


def _table_digest(frame: Any) -> dict[str, Any]:
    """Rows, and a SHA-256 of the columns' values in order, of a polars DataFrame; columns are
    digested one by one (keyed by name), so an added column does not change the others'."""
    out: dict[str, Any] = {"rows": frame.height}
    for name in frame.columns:
        h = hashlib.sha256()
        for v in frame[name].to_list():
            h.update((v.hex() if isinstance(v, float) else repr(v)).encode())
            h.update(b"\0")
        out[name] = h.hexdigest()[:16]
    return out


def _run_dir(path: Path) -> dict[str, Any]:
    import polars as pl

    summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    tables = {}
    for parquet in sorted(path.glob("*.parquet")):
        tables[parquet.stem] = _table_digest(pl.read_parquet(parquet))
    return {"summary": _clean(summary), "tables": tables}


def dump_bench() -> dict[str, Any]:
    import polars as pl
    from fairstream import _core
    from fairstream.bench import BENCHMARKS as DEFS

    out = {}
    for b in BENCHMARKS:
        path = DEFS[b].path()
        sim = _core.Simulation(path.read_text(encoding="utf-8"), str(path))
        sim.advance(sim.duration_s)
        tables = {}
        for name in ("flow_series", "flow_summary", "link_series", "port_series", "metrics", "packets"):
            t = sim.table(name)
            if t is not None:
                tables[name] = _table_digest(pl.DataFrame(t))
        out[b] = {"events": sim.events, "summary": _clean(sim.summary()), "tables": tables}
        print(f"{b}: {sim.events} events", file=sys.stderr)
    return out


def simulated_experiments() -> list[str]:
    """Every experiment id but those that run real kernels through the emulator (their numbers
    are measurements, not computations, and differ from run to run whatever the build)."""
    from fairstream.reproduce import EXPERIMENTS

    return [e for e, exp in EXPERIMENTS.items() if not exp.emulated]


def dump_reproduce(jobs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="i19-folders-behaviour-") as tmp:
        target = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "fairstream", "reproduce", "--quick", "--no-cache", "--keep-runs", "-q"]
        cmd += ["-o", str(target), "--jobs", str(jobs), *simulated_experiments()]
        done = subprocess.run(cmd, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} exited with {done.returncode}")
        out: dict[str, Any] = {}
        for result in sorted(target.glob("*/result.json")):
            exp = result.parent.name
            out[f"{exp}/result.json"] = _clean(json.loads(result.read_text(encoding="utf-8")))
        for summary in sorted(target.rglob("summary.json")):
            out[str(summary.parent.relative_to(target))] = _run_dir(summary.parent)
        return out


def _diff(a: Any, b: Any, where: str, diffs: list[str], shape: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() - b.keys():
            shape.append(f"{where}/{k}: only before")
        for k in b.keys() - a.keys():
            shape.append(f"{where}/{k}: only after")
        for k in sorted(a.keys() & b.keys()):
            _diff(a[k], b[k], f"{where}/{k}", diffs, shape)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", diffs, shape)
    elif a != b:
        diffs.append(f"{where}: {a!r} -> {b!r}")


def _shape_summary(shape: list[str]) -> list[str]:
    """Shape differences folded over runs and rows (the path from the run's ``summary`` or
    ``tables`` on, row indices dropped), each with its count."""
    import re

    counts: dict[str, int] = {}
    for s in shape:
        at = min((s.find(k) for k in ("/summary/", "/tables/", "/result.json") if k in s), default=-1)
        key = re.sub(r"\[\d+\]", "[]", s[at + 1 :] if at >= 0 else s)
        counts[key] = counts.get(key, 0) + 1
    return [f"{k}  (x{n})" for k, n in sorted(counts.items())]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--bench-only", action="store_true")
    d.add_argument("--jobs", type=int, default=2)
    c = sub.add_parser("diff")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        data = {"bench": dump_bench()}
        if not args.bench_only:
            data["reproduce"] = dump_reproduce(args.jobs)
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    before = json.loads(args.before.read_text(encoding="utf-8"))
    after = json.loads(args.after.read_text(encoding="utf-8"))
    diffs: list[str] = []
    shape: list[str] = []
    for part in sorted(before.keys() & after.keys()):
        _diff(before[part], after[part], part, diffs, shape)
    for line in _shape_summary(shape):
        print(f"shape: {line}")
    for line in diffs[:200]:
        print(f"DIFF {line}")
    n_runs = {p: len(before[p]) for p in before.keys() & after.keys()}
    print(f"{len(diffs)} values differ; compared {n_runs}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
