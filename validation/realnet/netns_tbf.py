"""The real path of tests/python/test_netns_tbf.py and of the scripts beside this file: two network
namespaces joined by a veth pair, the sender's side shaped by the kernel's
``tbf rate 10mbit burst 16kb latency 50ms`` (``tbf-10mbit.toml`` is the simulator's model of it);
``fairstream recv`` in one namespace, the senders in the other.

- `tbf_path`: the namespaces, set up and removed whatever happens (`Unavailable` when the machine
  cannot: not root, no ``ip``/``tc``, no namespaces, no ``tbf``);
- `receivers`: one ``fairstream recv`` per flow, as processes of their own;
- `send_together`: several flows from one process, a thread each, released by one barrier, each
  after its own delay, so that they start within milliseconds of each other (or as far apart as
  asked).

Needs root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The kernel's token bucket, as `tc qdisc add ... tbf` takes it.
TBF = ("rate", "10mbit", "burst", "16kb", "latency", "50ms")
ADDR_A, ADDR_B = "10.77.0.1", "10.77.0.2"


class Unavailable(Exception):
    """The machine cannot build the path; the message says what is missing."""


@dataclass(frozen=True)
class Namespaces:
    """The two namespaces: the sender's (`ns_a`, shaped) and the receivers' (`ns_b`)."""

    ns_a: str
    ns_b: str


def _sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)


@contextmanager
def tbf_path() -> Iterator[Namespaces]:
    """The namespaces, named by this process's id, removed on leaving (or on `Unavailable`)."""
    if os.geteuid() != 0:
        raise Unavailable("needs root to create network namespaces")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        raise Unavailable("needs iproute2 (`ip` and `tc`)")
    pid = os.getpid()
    path = Namespaces(f"fsrn-a{pid}", f"fsrn-b{pid}")
    va, vb = f"fsva{pid % 100000}", f"fsvb{pid % 100000}"
    steps = [
        ("ip", "netns", "add", path.ns_a),
        ("ip", "netns", "add", path.ns_b),
        ("ip", "link", "add", va, "netns", path.ns_a, "type", "veth", "peer", "name", vb, "netns", path.ns_b),
        ("ip", "-n", path.ns_a, "addr", "add", f"{ADDR_A}/24", "dev", va),
        ("ip", "-n", path.ns_b, "addr", "add", f"{ADDR_B}/24", "dev", vb),
        ("ip", "-n", path.ns_a, "link", "set", va, "up"),
        ("ip", "-n", path.ns_b, "link", "set", vb, "up"),
    ]
    try:
        for step in steps:
            done = _sh(*step)
            if done.returncode != 0:
                raise Unavailable(
                    f"network namespaces unavailable: `{' '.join(step)}` said {done.stderr.strip()}"
                )
        done = _sh("ip", "netns", "exec", path.ns_a, "tc", "qdisc", "add", "dev", va, "root", "tbf", *TBF)
        if done.returncode != 0:
            raise Unavailable(f"the kernel's tbf qdisc is unavailable: {done.stderr.strip()}")
        yield path
    finally:
        for ns in (path.ns_a, path.ns_b):
            _sh("ip", "netns", "del", ns)


def fairstream_in(ns: str) -> list[str]:
    """The ``fairstream`` command run inside namespace `ns`."""
    return ["ip", "netns", "exec", ns, sys.executable, "-m", "fairstream"]


def receivers(path: Namespaces, ports: Sequence[int], outputs: Sequence[Path]) -> list[subprocess.Popen[str]]:
    """One ``fairstream recv`` per port, listening in the receivers' namespace, each writing its
    results to its output directory (stderr kept, for the caller's error messages)."""
    return [
        subprocess.Popen(
            [*fairstream_in(path.ns_b), "recv", "--listen", f"{ADDR_B}:{port}", "-o", str(out), "-q"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for port, out in zip(ports, outputs, strict=True)
    ]


#: Sends each of argv[1]'s (receiver, protocol, output directory, delay s, duration) flows, a
#: thread each, all released by one barrier; each sleeps its delay first.
_TOGETHER = """
import json, sys, threading, time
import fairstream
jobs = json.loads(sys.argv[1])
barrier, failed = threading.Barrier(len(jobs)), []
def send(to, protocol, out, delay, duration):
    barrier.wait()
    time.sleep(delay)
    try:
        fairstream.send(to, protocol, duration, output_dir=out)
    except BaseException as err:
        failed.append(f"{protocol} to {to}: {err!r}")
threads = [threading.Thread(target=send, args=job) for job in jobs]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.exit("; ".join(failed) or None)
"""


@dataclass(frozen=True)
class Flow:
    """One flow `send_together` sends: to `port`, its results into `output`, starting `delay_s`
    after the others are released, running for `duration` (``"10s"``)."""

    port: int
    protocol: str
    output: Path
    delay_s: float
    duration: str


def send_together(path: Namespaces, flows: Sequence[Flow]) -> subprocess.Popen[str]:
    """Starts one process in the sender's namespace sending every flow (see the module's doc)."""
    jobs = [(f"{ADDR_B}:{f.port}", f.protocol, str(f.output), f.delay_s, f.duration) for f in flows]
    argv = ["ip", "netns", "exec", path.ns_a, sys.executable, "-c", _TOGETHER, json.dumps(jobs)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(processes: Sequence[subprocess.Popen[str]], timeout_s: float) -> None:
    """Waits for every process; any that fails is an AssertionError with its stderr; any still
    running after `timeout_s` (or after another failed) is killed."""
    try:
        for p in processes:
            _, err = p.communicate(timeout=timeout_s)
            assert p.returncode == 0, err
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
