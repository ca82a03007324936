"""Two VTP flows through the kernel's token bucket, the second started late: the kernel's side of
``vtp_head_start.py`` (docs/VALIDATION.md, "The simulator evens out a head start slowly too").

The path of tests/python/test_netns_tbf.py (``netns_tbf.py``: a 10 Mbit/s kernel token bucket
between two network namespaces). One ``fairstream recv`` per flow; one process sends both flows
(``netns_tbf.send_together``), the second after sleeping the head start. Each flow runs 12 s
after its start. Printed per run: the two flows' rates over the same wall-clock seconds the
simulator's script uses ([d + 2 s, d + 10 s) of the first flow, [2 s, 10 s) of the second, for a
whole-second head start d: each receiver's clock starts at its own flow's first datagram), Jain's
index of the two, and each flow's rate per second.

Needs root, ``ip``, ``tc`` and the ``tbf`` qdisc; the namespaces are removed at the end.

    python validation/realnet/vtp_head_start_kernel.py 0,1,2 4    # head starts (s), runs of each
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
from netns_tbf import Flow, Namespaces, Unavailable, finish, receivers, send_together, tbf_path

PORT = 47100
#: Each flow's length after its own start, in seconds.
FLOW_S = 12


def per_second(run_dir: Path) -> list[float]:
    """The flow's delivered rate in each whole second of its receiver's clock, Mbit/s."""
    series = pl.read_parquet(run_dir / "flow_series.parquet")
    by_second = series.group_by(pl.col("t_start").floor().alias("s")).agg(pl.col("bytes_delivered").sum())
    return [b * 8 / 1e6 for b in by_second.sort("s")["bytes_delivered"].to_list()]


def run(ns: Namespaces, head_start: int, tmp: Path) -> tuple[list[float], list[float]]:
    """One run: each flow's per-second rates."""
    listening = receivers(ns, [PORT, PORT + 1], [tmp / "r0", tmp / "r1"])
    time.sleep(1.5)  # the receivers listening
    flows = [
        Flow(PORT, "vtp", tmp / "s0", 0.0, f"{FLOW_S + head_start}s"),
        Flow(PORT + 1, "vtp", tmp / "s1", float(head_start), f"{FLOW_S}s"),
    ]
    finish([send_together(ns, flows), *listening], FLOW_S + head_start + 30)
    return per_second(tmp / "r0"), per_second(tmp / "r1")


def jain(a: float, b: float) -> float:
    return (a + b) ** 2 / (2 * (a * a + b * b))


def main() -> None:
    head_starts = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [0, 1, 2]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    try:
        with tbf_path() as ns:
            for d in head_starts:
                for k in range(runs):
                    tmp = Path(tempfile.mkdtemp(prefix="vtp-head-start-"))
                    try:
                        first, second = run(ns, d, tmp)
                    finally:
                        shutil.rmtree(tmp)
                    a, b = sum(first[d + 2 : d + 10]) / 8, sum(second[2:10]) / 8
                    print(f"head start {d} s, run {k}: {a:.2f} + {b:.2f} Mbit/s, Jain {jain(a, b):.3f}")
                    print("  first: ", " ".join(f"{x:.1f}" for x in first))
                    print("  second:", " ".join(f"{x:.1f}" for x in second))
    except Unavailable as why:
        raise SystemExit(str(why)) from None


if __name__ == "__main__":
    main()
