#!/usr/bin/env python3
"""Run ns-2.35's RAP beside TCP NewReno (rap-tcp.tcl), without and with fine-grain adaptation,
and write rap-results.json.

usage: python3 validation/ns2/rap.py [--seeds 1 2 3]

Needs `ns` (Debian package ns2, 2.35) on PATH; standard library only. Per seed and flow: the
bytes and packets that left the bottleneck queue in the 60 s run, as a rate, and the drops there
as a fraction of the packets that arrived at it. fairstream's side is
`fairstream/rap-tcp.toml`; `tests/python/test_ns2_agreement.py` compares the two.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
from pathlib import Path

from run import ns2_version  # the TFRC driver beside this file

HERE = Path(__file__).resolve().parent
DURATION_S = 60.0
FLOWS = {1: "rap", 2: "tcp"}
#: The configurations: name, and rap-tcp.tcl's fine-grain argument.
CONFIGS = {"plain": "0", "fine_grain": "1"}
RE_FLOW = re.compile(r"^flow (\d+) departures (\d+) bytes (\d+) drops (\d+) arrivals (\d+)$")


def run(seed: int, fine_grain: str) -> dict[str, float]:
    """One run of rap-tcp.tcl with TCP's window 20 (ns-2's default): each flow's numbers."""
    out = subprocess.run(
        ["ns", "rap-tcp.tcl", str(seed), "20", "1", fine_grain],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    row: dict[str, float] = {"seed": seed}
    for line in out.splitlines():
        m = RE_FLOW.match(line.strip())
        if not m:
            continue
        name = FLOWS[int(m[1])]
        _, byts, drops, arrivals = (int(m[i]) for i in range(2, 6))
        row[f"{name}_bps"] = byts * 8 / DURATION_S
        row[f"{name}_loss"] = drops / arrivals if arrivals else 0.0
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    configs = {}
    for name, fine_grain in CONFIGS.items():
        runs = [run(s, fine_grain) for s in args.seeds]
        keys = [k for k in runs[0] if k != "seed"]
        configs[name] = {
            "script": f"rap-tcp.tcl <seed> 20 1 {fine_grain}",
            "runs": runs,
            "mean": {k: statistics.fmean(r[k] for r in runs) for k in keys},
        }
    result = {"ns2": ns2_version(), "duration_s": DURATION_S, "configs": configs}
    (HERE / "rap-results.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({name: c["mean"] for name, c in configs.items()}, indent=1))


if __name__ == "__main__":
    main()
