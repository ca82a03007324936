"""`send` and `recv`: the protocols over real UDP sockets (the Rust real-time driver), with the
same result tables as `run`.

Each end writes its own results: the sender what it sent (rate, RTT, pacing), the receiver what
it received (delivered, lost). Output directories follow `fairstream.output` as for `run`: checked
before anything is sent, staged, and put in place whole. Ctrl-C stops the run cleanly; the results
so far are written, marked incomplete, and `fairstream.Interrupted` is raised.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from . import _core, output
from .interrupt import Interrupted
from .results import RunResult

#: A live-line callback: (seconds since the flow started, rate bit/s, RTT s or None, loss fraction).
LiveCallback = Callable[[float, float, "float | None", float], None]

#: The protocols `send` runs: those the core's protocol list marks for the real-time driver.
PROTOCOLS: tuple[str, ...] = tuple(_core.real_time_protocols())


def live_line(t_s: float, rate_bps: float, rtt_s: float | None, loss: float) -> str:
    """The live line printed while a real run goes."""
    rtt = "   -   " if rtt_s is None else f"{rtt_s * 1e3:6.2f}ms"
    return f"{t_s:6.1f}s  rate {rate_bps / 1e6:8.2f} Mbit/s  rtt {rtt}  loss {loss * 100:5.2f}%"


def _printer(stream: object = None) -> LiveCallback:
    def show(t_s: float, rate_bps: float, rtt_s: float | None, loss: float) -> None:
        print(live_line(t_s, rate_bps, rtt_s, loss), file=stream or sys.stderr, flush=True)

    return show


def _live(live: bool | LiveCallback) -> LiveCallback | None:
    if live is True:
        return _printer()
    return live if callable(live) else None


def _finish(
    real: object, output_dir: str | os.PathLike[str] | None, command: str, force: bool, target: Path | None
) -> RunResult:
    """Writes `real` (a `_core.RealRun`) into `output_dir`, or keeps it in memory; raises
    `Interrupted` when the run was stopped by Ctrl-C."""
    complete = real.complete  # type: ignore[attr-defined]
    if output_dir is None:
        if not complete:
            raise Interrupted(f"{command} interrupted; no output directory, nothing written")
        return RunResult._in_memory(real)
    with output.staged(output_dir, command, force, target=target) as tmp:
        real.write_results(str(tmp))  # type: ignore[attr-defined]
        if not complete:  # staged puts the results so far in place, marked incomplete
            raise Interrupted(
                f"{command} interrupted; the results so far are in {tmp}, marked incomplete", str(tmp)
            )
    return RunResult(output_dir)


def send(
    to: str,
    protocol: str,
    duration: str = "30s",
    rate_cap: str | None = None,
    output_dir: str | os.PathLike[str] | None = None,
    live: bool | LiveCallback = False,
    force: bool = False,
) -> RunResult:
    """Sends a flow of `protocol` (one of `PROTOCOLS`; surestream, the media streamer with its
    default clip, takes no rate cap) to a `recv` at `to`
    (``host:port``) for `duration` (``"30s"``), at most `rate_cap` (``"50Mbps"``); returns the
    sender's results as `run` does. `live`: True prints a line of rate, RTT and loss on stderr
    about once a second; a callable gets its numbers. Bad arguments (an unresolvable address, a
    protocol the receiver does not speak, another wire version, no receiver) raise ValueError
    before anything is written.
    """
    target = None if output_dir is None else output.prepare(output_dir, "send", force)
    real = _core.real_send(to, protocol, duration, rate_cap, _live(live))
    return _finish(real, output_dir, "send", force, target)


def recv(
    listen: str,
    output_dir: str | os.PathLike[str] | None = None,
    live: bool | LiveCallback = False,
    force: bool = False,
    idle_timeout_s: float = 3.0,
    wait_s: float | None = None,
) -> RunResult:
    """Receives one sender's flow on `listen` (``host:port``) until the sender has been silent for
    `idle_timeout_s` (or Ctrl-C); `wait_s`: how long to wait for a sender at all (None: forever).
    Returns the receiver's results as `run` does. A port in use raises ValueError before anything
    is written."""
    target = None if output_dir is None else output.prepare(output_dir, "recv", force)
    real = _core.real_recv(listen, _live(live), idle_timeout_s, wait_s)
    return _finish(real, output_dir, "recv", force, target)
