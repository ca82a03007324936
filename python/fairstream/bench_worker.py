"""The child process of one benchmark run: ``python -m fairstream.bench_worker``.

Reads ``{"text": ..., "filename": ...}`` (a scenario) as JSON on stdin, builds and runs it with
`fairstream._core` alone (no polars, no Parquet written), and prints one JSON line on stdout:
wall_s (build + run), build_s, events, sim_duration_s, packets (sent by all flows), finished,
and vmhwm_kib: this process's peak resident memory since it started, from /proc/self/status
(Linux; None elsewhere). The parent's ``wait4`` ru_maxrss is not used for that on Linux: it also
counts the parent's memory, which the child shared between fork and exec.
"""

from __future__ import annotations

import json
import sys
import time

from fairstream import _core


def main() -> int:
    job = json.load(sys.stdin)
    started = time.perf_counter()
    sim = _core.Simulation(job["text"], job["filename"], job.get("seed"))
    built = time.perf_counter()
    finished = sim.advance(sim.duration_s)
    wall = time.perf_counter() - started
    summary = sim.summary()
    report = {
        "wall_s": wall,
        "build_s": built - started,
        "events": sim.events,
        "sim_duration_s": sim.duration_s,
        "packets": sum(int(f.get("packets_sent", 0)) for f in summary.get("flows", [])),
        "finished": bool(finished),
        "vmhwm_kib": _vmhwm_kib(),
    }
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


def _vmhwm_kib() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


if __name__ == "__main__":
    sys.exit(main())
