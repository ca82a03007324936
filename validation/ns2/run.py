#!/usr/bin/env python3
"""Run the ns-2.35 TFRC reference scenarios and write results.json and series.json.

usage: python3 validation/ns2/run.py [--seeds 1 2 3] [--keep DIR]

Needs `ns` (Debian package ns2, 2.35) on PATH; standard library only. Every number is
explained in README.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

T0, T1 = 20.0, 300.0  # measurement window, as lib.tcl
WINDOW = T1 - T0
TFRC_PAYLOAD = 1000  # Agent/TFRC packetSize_: the s of the equation and of rate_
TFRC_WIRE = 1032  # + headersize_ 32 (useHeaders_ true): hdr_cmn size on the wire
TCP_PAYLOAD = 1000  # Agent/TCP packetSize_ (+ tcpip_base_hdr_size_ 40 = 1040 on the wire)

SCENARIOS = [
    # (scenario, script, extra args before the seed, label)
    ("tfrc-loss", "tfrc-loss.tcl", ["0.01"], "tfrc-loss-1pct"),
    ("tfrc-loss", "tfrc-loss.tcl", ["0.05"], "tfrc-loss-5pct"),
    ("tfrc-loss", "tfrc-loss.tcl", ["0.10"], "tfrc-loss-10pct"),
    ("tfrc-tcp-droptail", "tfrc-tcp-droptail.tcl", [], "tfrc-tcp-droptail"),
    ("tfrc-tcp-red", "tfrc-tcp-red.tcl", [], "tfrc-tcp-red"),
]

RE_RESULT = re.compile(r"^RESULT (\S+) (\S+)$")
RE_SERIES = re.compile(r"^SERIES (\S+) (.*)$")
RE_RATE = re.compile(r"^time:\s*(\S+) rate:\s*(\S+)$")
RE_PKTRATE = re.compile(r"^time:\s*(\S+) packetrate:\s*(\S+)$")
RE_LOSS = re.compile(r"^time:\s*(\S+) loss_rate:\s*(\S+)\s*$")


def ns2_version() -> str:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return f"ns2 {out} (Debian)"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def num(s: str) -> float | int:
    try:
        return int(s)
    except ValueError:
        return float(s)


def step_time_average(points: list[tuple[float, float]], t0: float, t1: float) -> float | None:
    """Time average over [t0, t1] of the step function that takes value v from time t on."""
    points = sorted(points)
    before = [v for t, v in points if t <= t0]
    if not before:
        return None
    cur, last_t, area = before[-1], t0, 0.0
    for t, v in points:
        if t <= t0:
            continue
        if t >= t1:
            break
        area += cur * (t - last_t)
        cur, last_t = v, t
    area += cur * (t1 - last_t)
    return area / (t1 - t0)


def parse(stdout: str, stderr: str) -> tuple[dict, dict]:
    res: dict = {}
    series: dict[str, list] = {}
    for line in stderr.splitlines():
        if m := RE_RESULT.match(line):
            res[m.group(1)] = num(m.group(2))
        elif m := RE_SERIES.match(line):
            series.setdefault("t", []).append(num(m.group(1)))
            for kv in m.group(2).split():
                k, v = kv.split("=")
                series.setdefault(k, []).append(round(float(v), 3))
    # Sender status after each feedback report (tfrc.cc TfrcAgent::recv, printStatus_):
    # "rate" = rate_ in bytes/s, "packetrate" = rate_ * rtt_ / size_, so rtt_ = pr * size_ / rate_.
    reports, pending = [], None
    losses = []
    for line in stdout.splitlines():
        if m := RE_RATE.match(line):
            pending = (float(m.group(1)), float(m.group(2)))
        elif (m := RE_PKTRATE.match(line)) and pending is not None:
            t, rate = pending
            if rate > 0:
                reports.append((t, rate, float(m.group(2)) * TFRC_PAYLOAD / rate))
            pending = None
        elif m := RE_LOSS.match(line):
            losses.append((float(m.group(1)), float(m.group(2))))
    res["_reports"] = reports
    res["_losses"] = losses
    return res, series


def metrics(r: dict) -> dict:
    out: dict = {}
    bits = 8.0 / WINDOW
    sent = r["tfrc_sent_pkts_t300"] - r["tfrc_sent_pkts_t20"]
    out["tfrc_send_rate_wire_bps"] = sent * TFRC_WIRE * bits
    out["tfrc_rate_var_bps"] = r["tfrc_rate_Bps_mean"] * 8
    out["tfrc_rate_var_wire_bps"] = r["tfrc_rate_Bps_mean"] * 8 * TFRC_WIRE / TFRC_PAYLOAD
    sink = r["tfrc_sink_bytes_t300"] - r["tfrc_sink_bytes_t20"]
    out["tfrc_delivered_wire_bps"] = sink * bits
    out["tfrc_goodput_bps"] = sink / TFRC_WIRE * TFRC_PAYLOAD * bits
    out["tfrc_packet_loss_fraction"] = 1 - (sink / TFRC_WIRE) / sent if sent else None
    losses = r["_losses"]
    out["tfrc_p_time_avg"] = step_time_average(losses, T0, T1)
    in_w = [p for t, p in losses if T0 <= t <= T1]
    out["tfrc_p_report_mean"] = statistics.fmean(in_w) if in_w else None
    out["tfrc_p_last"] = losses[-1][1] if losses else None
    out["tfrc_reports_in_window"] = len(in_w)
    rtts = [rtt for t, _, rtt in r["_reports"] if T0 <= t <= T1]
    out["tfrc_rtt_mean_s"] = statistics.fmean(rtts) if rtts else None
    if "tcp_delivered_bytes_t300" in r:
        tcp = r["tcp_delivered_bytes_t300"] - r["tcp_delivered_bytes_t20"]
        out["tcp_delivered_wire_bps"] = tcp * bits
        out["tcp_goodput_bps"] = (r["tcp_ack_t300"] - r["tcp_ack_t20"]) * TCP_PAYLOAD * bits
        out["tfrc_delivered_lasthop_wire_bps"] = (
            r["tfrc_delivered_bytes_t300"] - r["tfrc_delivered_bytes_t20"]
        ) * bits
        for f in ("tfrc", "tcp"):
            out[f"{f}_bottleneck_drops"] = r[f"{f}_bn_drops_t300"] - r[f"{f}_bn_drops_t20"]
        out["tcp_retransmits"] = r["tcp_rexmit_pkts_t300"] - r["tcp_rexmit_pkts_t20"]
        tot = out["tfrc_delivered_wire_bps"] + out["tcp_delivered_wire_bps"]
        out["tfrc_share_of_delivered"] = out["tfrc_delivered_wire_bps"] / tot
    return out


def summarise(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float))]
    summ = {}
    for k in keys:
        vals = [run[k] for run in runs if run.get(k) is not None]
        if not vals:
            continue
        summ[k] = {
            "mean": statistics.fmean(vals),
            "min": min(vals),
            "max": max(vals),
            "sd": statistics.stdev(vals) if len(vals) > 1 else 0.0,
        }
    return summ


def fmt(v: float, unit: str) -> str:
    if unit == "Mbps":
        return f"{v / 1e6:.4f}"
    if unit == "ms":
        return f"{v * 1e3:.2f}"
    return f"{v:.5f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--keep", type=Path, help="keep each run's raw stdout/stderr in DIR")
    args = ap.parse_args()
    if shutil.which("ns") is None:
        print("ns not found: apt-get install -y ns2", file=sys.stderr)
        return 2
    raw = args.keep or Path(tempfile.mkdtemp(prefix="ns2-tfrc-"))
    raw.mkdir(parents=True, exist_ok=True)

    results: dict = {
        "ns2": ns2_version(),
        "window_s": [T0, T1],
        "seeds": args.seeds,
        "units": "bit/s unless named otherwise; *_wire_* counts bytes on the wire "
        "(TFRC 1032 B = 1000 + 32 header, TCP 1040 B = 1000 + 40); p is a fraction; rtt in s",
        "scenarios": {},
    }
    all_series: dict = {}
    for scenario, script, extra, label in SCENARIOS:
        runs, params = [], {}
        for seed in args.seeds:
            cmd = ["ns", str(HERE / script), *extra, str(seed)]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
            (raw / f"{label}-seed{seed}.stdout").write_text(proc.stdout)
            (raw / f"{label}-seed{seed}.stderr").write_text(proc.stderr)
            if proc.returncode != 0:
                print(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}", file=sys.stderr)
                return 1
            r, series = parse(proc.stdout, proc.stderr)
            if r.get("end_time") != 300:
                print(f"{' '.join(cmd)}: did not reach 300 s", file=sys.stderr)
                return 1
            m = metrics(r)
            m["seed"] = seed
            runs.append(m)
            params = {k: v for k, v in r.items() if k.startswith(("red_", "bn_", "per"))}
            all_series[f"{label}/seed{seed}"] = series
        results["scenarios"][label] = {
            "scenario": scenario,
            "script": script,
            "args": extra,
            "params": params,
            "runs": runs,
            "summary": summarise(runs),
        }
        s = results["scenarios"][label]["summary"]
        cols = [
            ("tfrc_send_rate_wire_bps", "Mbps"),
            ("tfrc_delivered_wire_bps", "Mbps"),
            ("tcp_delivered_wire_bps", "Mbps"),
            ("tfrc_p_time_avg", "p"),
            ("tfrc_rtt_mean_s", "ms"),
        ]
        line = "  ".join(
            f"{k}={fmt(s[k]['mean'], u)} [{fmt(s[k]['min'], u)}..{fmt(s[k]['max'], u)}]"
            for k, u in cols
            if k in s
        )
        print(f"{label}: {line}")

    (HERE / "results.json").write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
    (HERE / "series.json").write_text(json.dumps(all_series, separators=(",", ":")) + "\n")
    if args.keep:
        print(f"wrote {HERE / 'results.json'} and series.json; raw output in {raw}")
    else:
        shutil.rmtree(raw)
        print(f"wrote {HERE / 'results.json'} and series.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
