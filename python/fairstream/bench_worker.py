"""The child process of one benchmark run: ``python -m fairstream.bench_worker``.

Reads ``{"text": ..., "filename": ...}`` (a scenario) as JSON on stdin, builds and runs it with
`fairstream._core` alone (no polars, no Parquet written), and prints one JSON line on stdout:

- wall_s (build + run, the in-process simulation time `fairstream bench` compares with ns-3's
  set-up + ``Simulator::Run()``), build_s, events, sim_duration_s, finished;
- packets (sent by all flows), and what the ns-3 comparison needs: the resolved scenario
  (``resolved_toml``), the per-flow results of the summary (``flows``: name, src, dst, start_s,
  stop_s, packet sizes, goodput, retransmits, drops), its links (``links``, as in summary.json)
  and the drops at the dumbbell's bottleneck
  (``bottleneck_drops``, the link ``router_left->router_right``; None without one);
- memory from /proc/self/status (Linux; None elsewhere): ``vmhwm_kib``, this process's peak
  resident memory since it started, and ``rss_imported_kib`` / ``rss_end_kib``, its resident
  memory after importing the extension and after the run. The parent's ``wait4`` ru_maxrss is not
  used for the peak on Linux: it also counts the parent's memory, which the child shared between
  fork and exec.
"""

from __future__ import annotations

import json
import sys
import time

from fairstream import _core
from fairstream.procstatus import status_kib

#: The dumbbell's bottleneck link, whose drops are compared with ns-3's.
BOTTLENECK = "router_left->router_right"

#: Per-flow fields of the summary passed on to the parent.
FLOW_FIELDS = (
    "flow_id",
    "name",
    "protocol",
    "src",
    "dst",
    "start_s",
    "stop_s",
    "packet_size_bytes",
    "header_bytes",
    "payload_bytes",
    "goodput_bps",
    "goodput_bytes",
    "packets_sent",
    "packets_dropped",
    "retransmits",
)


def main() -> int:
    job = json.load(sys.stdin)
    rss_imported = status_kib("VmRSS")
    started = time.perf_counter()
    sim = _core.Simulation(job["text"], job["filename"], job.get("seed"))
    built = time.perf_counter()
    finished = sim.advance(sim.duration_s)
    wall = time.perf_counter() - started
    rss_end = status_kib("VmRSS")
    summary = sim.summary()
    flows = summary.get("flows", [])
    drops = [link["packets_dropped"] for link in summary.get("links", []) if link.get("name") == BOTTLENECK]
    report = {
        "wall_s": wall,
        "build_s": built - started,
        "events": sim.events,
        "sim_duration_s": sim.duration_s,
        "packets": sum(int(f.get("packets_sent", 0)) for f in flows),
        "finished": bool(finished),
        "resolved_toml": sim.resolved_toml(),
        "flows": [{k: f.get(k) for k in FLOW_FIELDS} for f in flows],
        "links": summary.get("links", []),
        "bottleneck_drops": drops[0] if drops else None,
        "rss_imported_kib": rss_imported,
        "rss_end_kib": rss_end,
        "vmhwm_kib": status_kib("VmHWM"),
    }
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
