"""Two VTP flows through the kernel's token bucket, the second started late: the kernel's side of
``vtp_head_start.py`` (docs/VALIDATION.md, "The simulator evens out a head start slowly too").

The path of tests/python/test_netns_tbf.py: two network namespaces joined by a veth pair, the
sender's side shaped by ``tbf rate 10mbit burst 16kb latency 50ms``. One ``fairstream recv`` per
flow in one namespace; in the other, one process sends both flows (``fairstream.send`` in a thread
each), released by one barrier, the second flow after sleeping the head start. Each flow runs 12 s
after its start. Printed per run: the two flows' rates over the same wall-clock seconds the
simulator's script uses ([d + 2 s, d + 10 s) of the first flow, [2 s, 10 s) of the second, for a
whole-second head start d: each receiver's clock starts at its own flow's first datagram), Jain's
index of the two, and each flow's rate per second.

Needs root, ``ip``, ``tc`` and the ``tbf`` qdisc; the namespaces are removed at the end.

    python validation/realnet/vtp_head_start_kernel.py 0,1,2 4    # head starts (s), runs of each
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

NS_A, NS_B = f"fshs-a{os.getpid()}", f"fshs-b{os.getpid()}"
VETH_A, VETH_B = f"fshsa{os.getpid() % 100000}", f"fshsb{os.getpid() % 100000}"
ADDR_A, ADDR_B = "10.78.0.1", "10.78.0.2"
PORT = 47100
#: Each flow's length after its own start, in seconds.
FLOW_S = 12

#: Sends argv[1]'s (receiver, output directory, delay s, duration) flows, a thread each, released
#: by one barrier; each sleeps its delay first.
_SEND = """
import json, sys, threading, time
import fairstream
jobs = json.loads(sys.argv[1])
barrier = threading.Barrier(len(jobs))
def send(to, out, delay, duration):
    barrier.wait()
    time.sleep(delay)
    fairstream.send(to, "vtp", duration, output_dir=out)
threads = [threading.Thread(target=send, args=job) for job in jobs]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def _sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def set_up() -> None:
    steps = [
        ("ip", "netns", "add", NS_A),
        ("ip", "netns", "add", NS_B),
        ("ip", "link", "add", VETH_A, "netns", NS_A, "type", "veth", "peer", "name", VETH_B, "netns", NS_B),
        ("ip", "-n", NS_A, "addr", "add", f"{ADDR_A}/24", "dev", VETH_A),
        ("ip", "-n", NS_B, "addr", "add", f"{ADDR_B}/24", "dev", VETH_B),
        ("ip", "-n", NS_A, "link", "set", VETH_A, "up"),
        ("ip", "-n", NS_B, "link", "set", VETH_B, "up"),
        ("ip", "netns", "exec", NS_A, "tc", "qdisc", "add", "dev", VETH_A, "root", "tbf")
        + ("rate", "10mbit", "burst", "16kb", "latency", "50ms"),
    ]
    for step in steps:
        done = _sh(*step)
        if done.returncode != 0:
            raise SystemExit(f"`{' '.join(step)}` said {done.stderr.strip()}")


def tear_down() -> None:
    for ns in (NS_A, NS_B):
        _sh("ip", "netns", "del", ns)


def per_second(run_dir: Path) -> list[float]:
    """The flow's delivered rate in each whole second of its receiver's clock, Mbit/s."""
    series = pl.read_parquet(run_dir / "flow_series.parquet")
    by_second = series.group_by(pl.col("t_start").floor().alias("s")).agg(pl.col("bytes_delivered").sum())
    return [b * 8 / 1e6 for b in by_second.sort("s")["bytes_delivered"].to_list()]


def run(head_start: int, tmp: Path) -> tuple[list[float], list[float]]:
    """One run: each flow's per-second rates."""
    fs = [sys.executable, "-m", "fairstream"]
    receivers = [
        subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                NS_B,
                *fs,
                "recv",
                "--listen",
                f"{ADDR_B}:{PORT + i}",
                "-o",
                str(tmp / f"r{i}"),
            ]
            + ["-q"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(2)
    ]
    time.sleep(1.5)  # the receivers listening
    jobs = [
        (f"{ADDR_B}:{PORT}", str(tmp / "s0"), 0.0, f"{FLOW_S + head_start}s"),
        (f"{ADDR_B}:{PORT + 1}", str(tmp / "s1"), float(head_start), f"{FLOW_S}s"),
    ]
    try:
        subprocess.run(
            ["ip", "netns", "exec", NS_A, sys.executable, "-c", _SEND, json.dumps(jobs)],
            check=True,
            capture_output=True,
        )
        for r in receivers:
            r.wait(timeout=FLOW_S + head_start + 30)
    finally:
        for r in receivers:
            if r.poll() is None:
                r.kill()
    return per_second(tmp / "r0"), per_second(tmp / "r1")


def jain(a: float, b: float) -> float:
    return (a + b) ** 2 / (2 * (a * a + b * b))


def main() -> None:
    head_starts = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [0, 1, 2]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    tear_down()
    set_up()
    try:
        for d in head_starts:
            for k in range(runs):
                tmp = Path(tempfile.mkdtemp(prefix="vtp-head-start-"))
                try:
                    first, second = run(d, tmp)
                finally:
                    shutil.rmtree(tmp)
                a, b = sum(first[d + 2 : d + 10]) / 8, sum(second[2:10]) / 8
                print(f"head start {d} s, run {k}: {a:.2f} + {b:.2f} Mbit/s, Jain {jain(a, b):.3f}")
                print("  first: ", " ".join(f"{x:.1f}" for x in first))
                print("  second:", " ".join(f"{x:.1f}" for x in second))
    finally:
        tear_down()


if __name__ == "__main__":
    main()
