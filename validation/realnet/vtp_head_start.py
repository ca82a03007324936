"""How fast two VTP flows even out a head start, in the simulator: the table of VALIDATION.md
("The simulator evens out a head start as slowly").

Two paths, each from a scenario file of the project, with its flows set to two VTP flows, the
second started late, and run for 60 s (seed 1):

- ``tbf-10mbit.toml``: the path of tests/python/test_netns_tbf.py (a 10 Mbit/s token bucket
  behind a veth-like 1 Gbit/s link);
- ``004-vtp-fair.toml`` at PER 0: paper 004's T-WIRELESS path (72 ms, 11 Mbit/s, 99 packets).

For each start, Jain's index of the two flows' bytes over the 8 s after the second flow's first
whole second, over the 10 s after that and over 30-60 s, and after how many seconds the two
one-second rates are within 10 % of each other for three seconds in a row.

Then, on ``tbf-10mbit.toml``, how the first seconds depend on the path's round trip: Jain over
[2 s, 10 s] (the test's window) of two flows started 1-41 ms apart, with the veth pair's delay
each way set from 0.01 ms (the file's value before 2026-11-29) to 2 ms.

Last, beside ``vtp_head_start_kernel.py`` (the kernel's side): Jain over the same seconds for
head starts of 0, 1 and 2 s, each 1-29 ms late (five offsets), with the file's delay.

    python validation/realnet/vtp_head_start.py
"""

from __future__ import annotations

from pathlib import Path

import fairstream
import polars as pl
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "python" / "fairstream" / "scenarios" / "papers"
PATHS = {
    "tbf-10mbit": (ROOT / "validation" / "realnet" / "tbf-10mbit.toml", (0.01, 0.37, 1.37, 2.37, 5.37)),
    "004-vtp-fair, PER 0": (PAPERS / "004-vtp-fair.toml", (1.37, 5.37)),
}
DURATION_S = 60


#: The second flow's starts and the one-way delays of the round-trip table.
CLOSE_STARTS = (0.001, 0.003, 0.007, 0.010, 0.019, 0.041)
DELAYS = ("0.01ms", "0.1ms", "0.25ms", "0.5ms", "1ms", "2ms")
#: The head starts (whole seconds) and the offsets after them of the kernel's comparison.
HEAD_STARTS = (0, 1, 2)
OFFSETS = (0.001, 0.003, 0.007, 0.013, 0.029)


def scenario(path: Path, start2: float, delay: str | None = None) -> dict:
    """The scenario of `path` with two VTP flows, the second starting at `start2` seconds, and
    no random loss; with `delay`, every link's delay set to it."""
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    first = {k: v for k, v in doc["flow"][0].items() if k != "start"}
    first.update(protocol="vtp", name="vtp0")
    doc["flow"] = [first, {**first, "name": "vtp1", "start": f"{start2}s"}]
    doc["duration"] = f"{DURATION_S}s"
    doc["seed"] = 1
    doc["record"] = {"interval": "1s"}  # one row a second: the windows below count seconds
    for link in doc["topology"].get("link", []):
        link.pop("loss", None)
        if delay is not None:
            link["delay"] = delay
    return doc


def jain(a: float, b: float) -> float:
    return (a + b) ** 2 / (2 * (a * a + b * b))


def rates(doc: dict) -> tuple[list[float], list[float]]:
    """The two flows' rates in each second of the run of `doc`, bit/s."""
    series = fairstream.run(doc).flow_series
    a, b = (
        series.filter(pl.col("flow") == f).sort("t_start")["throughput_bps"].to_list()
        for f in ("vtp0", "vtp1")
    )
    return a, b


def row(path: Path, start2: float) -> str:
    a, b = rates(scenario(path, start2))
    first = int(start2) + 1  # the second flow's first whole second

    def over(lo: int, hi: int) -> float:
        return jain(sum(a[lo:hi]), sum(b[lo:hi]))

    close = [abs(x - y) <= 0.1 * max(x, y) for x, y in zip(a, b, strict=True)]
    even = next((t for t in range(first, len(close) - 2) if all(close[t : t + 3])), None)
    after = f"{even - start2:.0f} s" if even is not None else f"> {DURATION_S - start2:.0f} s"
    return (
        f"| {start2:.2f} s | {over(first + 1, first + 9):.3f} | {over(first + 9, first + 19):.3f} "
        f"| {over(30, 60):.3f} | {after} |"
    )


def close_start_jain(delay: str | None, start2: float) -> float:
    """Jain over the 8 s from the second whole second after `start2` (for a start under 1 s,
    [2 s, 10 s]: the test's window) of two flows on the test's path, the second started at
    `start2`; every link's delay `delay` (None: the file's)."""
    doc = scenario(PATHS["tbf-10mbit"][0], start2, delay)
    doc["duration"] = f"{int(start2) + 10}s"
    a, b = rates(doc)
    lo = int(start2) + 2
    return jain(sum(a[lo : lo + 8]), sum(b[lo : lo + 8]))


def main() -> None:
    for name, (path, starts) in PATHS.items():
        print(f"\n{name}\n")
        print("| second flow starts | Jain, 8 s after | the 10 s after that | 30-60 s | within 10 % after |")
        print("|---|---|---|---|---|")
        for start2 in starts:
            print(row(path, start2))
    print("\ntbf-10mbit, Jain over [2 s, 10 s] by one-way delay and the second flow's start\n")
    print("| delay each way | " + " | ".join(f"{s * 1000:g} ms" for s in CLOSE_STARTS) + " |")
    print("|---" * (len(CLOSE_STARTS) + 1) + "|")
    for delay in DELAYS:
        print(f"| {delay} | " + " | ".join(f"{close_start_jain(delay, s):.3f}" for s in CLOSE_STARTS) + " |")
    print("\ntbf-10mbit, Jain over the 8 s after the second whole second, by head start and offset\n")
    print("| head start | " + " | ".join(f"+{s * 1000:g} ms" for s in OFFSETS) + " |")
    print("|---" * (len(OFFSETS) + 1) + "|")
    for head in HEAD_STARTS:
        print(
            f"| {head} s | " + " | ".join(f"{close_start_jain(None, head + s):.3f}" for s in OFFSETS) + " |"
        )


if __name__ == "__main__":
    main()
