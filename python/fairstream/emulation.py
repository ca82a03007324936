"""`emulate`: a scenario in real time through the emulator (the Rust `fairstream-emu` crate):
each scenario host a network namespace, the scenario's links (queues, loss models, capacity
schedules) the simulator's own, the flows real (fairstream's protocols through the real-time
driver, CBR, the kernel's TCP with ``protocol = "linux-tcp"``).

It writes what `run` writes (``summary.json`` says ``"emulated": true``) and ``emu.json``: each
link's departure error (how long after its logical instant the emulator handed a packet on),
packets forwarded late (``"accurate": false`` when any was), and the flows' ends' own reports.
It needs root, network namespaces, ``/dev/net/tun`` and ``ip`` (iproute2);
`emulator_unavailable` says which is missing. Ctrl-C (and SIGTERM from the command line) stops
the run and keeps what ran, marked incomplete; nothing of the emulation outlives its process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import cache

from . import _core, output
from .realnet import _finish
from .results import RunResult
from .scenario import ScenarioLike, load

#: A live-line callback: (seconds since the start, bit/s delivered over the last second, packets
#: dropped so far, packets forwarded late so far).
LiveCallback = Callable[[float, float, int, int], None]

#: Raised when this machine cannot emulate; the message names what is missing.
EmulatorUnavailable = _core.EmulatorUnavailable


@cache
def emulator_unavailable() -> str | None:
    """What this machine lacks to emulate (root, network namespaces, the TUN device, ``ip``), or
    None when it can. Tests and reproductions skip with this reason."""
    return _core.emulator_unavailable()


def live_line(t_s: float, delivered_bps: float, dropped: int, late: int) -> str:
    """The live line printed while an emulation runs."""
    return f"{t_s:6.1f}s  delivered {delivered_bps / 1e6:8.2f} Mbit/s  dropped {dropped:8d}  late {late:6d}"


def _live(live: bool | LiveCallback) -> LiveCallback | None:
    if live is True:

        def show(t_s: float, bps: float, dropped: int, late: int) -> None:
            print(live_line(t_s, bps, dropped, late), file=sys.stderr, flush=True)

        return show
    return live if callable(live) else None


def emulate(
    scenario: ScenarioLike,
    output_dir: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    live: bool | LiveCallback = False,
    force: bool = False,
    device: str | None = None,
) -> RunResult:
    """Emulates a scenario (path, TOML text or dict) in real time for its duration and returns
    its results as `run` does (`RunResult.emu` holds ``emu.json``). `device` is where the hosts'
    packets meet the emulator: ``"veth"`` (the default: a veth pair per host, read with
    AF_PACKET, each packet stamped by the kernel as it leaves its host) or ``"tun"`` (a TUN
    device per host; docs/VALIDATION.md compares them). Raises `ScenarioError` for a
    bad scenario, ValueError for one the emulator does not run (the simulator's TCP, ERICA ports,
    a host overhead), `EmulatorUnavailable` where it cannot run, and `fairstream.Interrupted`
    after Ctrl-C, with the results so far written (when `output_dir` is given) and marked
    incomplete.

    Unlike `run`, it neither reads nor writes the run cache: each call is a new measurement.
    (A reproduction's emulated points are cached, keyed apart from simulations: docs/cache.md.)"""
    text, filename = load(scenario)
    target = None if output_dir is None else output.prepare(output_dir, "emulate", force)
    run = _core.emulate(text, filename, seed, _live(live), device)
    return _finish(run, output_dir, "emulate", force, target)
