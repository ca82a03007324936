"""The emulator (issue 21): `fairstream emulate` runs a scenario in real time through the
simulator's own links between network namespaces, and leaves nothing behind however it ends.

Checked: a short run writes what `run` writes, marked emulated, plus emu.json; Ctrl-C and SIGTERM
stop it with exit 130 and the results so far marked incomplete; after those and after SIGKILL no
network namespace the run made is left (each is held only by the emulator's descriptors and
threads, so the kernel frees it with the process) and no device appears in the host's own
namespace; the simulator refuses a linux-tcp flow at its line; without the capabilities to make
namespaces the command exits 2 naming what is missing; the short run is made on each kind of
device (veth pairs, the default, and TUN devices), and a device kind the command does not know
is refused. Needs root, network namespaces, veth pairs and `ip`; skips, saying which is missing,
without them. About 25 s in all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import fairstream
import pytest
from fairstream.cli import main

UNAVAILABLE = fairstream.emulator_unavailable()
needs_emulator = pytest.mark.skipif(UNAVAILABLE is not None, reason=f"{UNAVAILABLE}")

SCENARIO = """
name = "emu-test"
duration = "{duration}"
[topology]
kind = "dumbbell"
hosts = 2
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ kind = "droptail", limit = "30 packets" }} }}
[[flow]]
protocol = "linux-tcp"
congestion = "reno"
from = "left0"
to = "right0"
[[flow]]
protocol = "cbr"
rate = "2Mbps"
from = "left1"
to = "right1"
"""


def _write(tmp_path: Path, duration: str) -> Path:
    path = tmp_path / "emu.toml"
    path.write_text(SCENARIO.format(duration=duration))
    return path


def _net_namespaces_of(pid: int) -> set[str]:
    """The network namespaces process `pid` holds: its threads' and its open descriptors'."""
    found = set()
    proc = Path(f"/proc/{pid}")
    for link in [*proc.glob("task/*/ns/net"), *proc.glob("fd/*")]:
        try:
            target = os.readlink(link)
        except OSError:
            continue
        if target.startswith("net:["):
            found.add(target)
    return found


def _held_anywhere(namespaces: set[str]) -> set[str]:
    """Which of `namespaces` any process still holds (a thread in it, or a descriptor of it)."""
    held = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            held |= _net_namespaces_of(int(proc.name)) & namespaces
    mounts = Path("/run/netns")
    if mounts.is_dir():  # a namespace kept by a bind mount (`ip netns add`) would be there
        for m in mounts.iterdir():
            held |= {f"named:{m.name}"} & namespaces
    return held


def _own_links() -> set[str]:
    done = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False)
    return {line.split(":")[1].strip() for line in done.stdout.splitlines() if ":" in line}


def _start(tmp_path: Path, duration: str) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fairstream", "emulate", str(_write(tmp_path, duration)), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, out


def _wait_for_live_line(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the first live line: the emulation runs
    assert "delivered" in line, line


@needs_emulator
@pytest.mark.parametrize("device", ["veth", "tun"])
def test_a_short_emulation_writes_the_tables_marked_emulated(tmp_path: Path, device: str) -> None:
    result = fairstream.emulate(_write(tmp_path, "3s"), output_dir=tmp_path / "out", device=device)
    summary = result.summary
    assert summary["emulated"] is True
    assert summary["complete"] is True
    flows = {f["name"]: f for f in summary["flows"]}
    assert flows["linux-tcp0"]["protocol"] == "linux-tcp-reno"
    # The kernel TCP gets most of what the CBR flow leaves of 10 Mbit/s, the CBR its 2 Mbit/s.
    assert flows["linux-tcp0"]["goodput_bps"] > 4e6
    assert 1.8e6 < flows["cbr1"]["throughput_bps"] < 2.2e6
    emu = json.loads((tmp_path / "out" / "emu.json").read_text())
    assert emu["emulated"] is True
    assert emu["device"] == device
    assert emu["device_drops"] == 0
    assert emu["largest_packet_bytes"] <= emu["mtu"], "a queue saw a packet larger than the MTU"
    assert emu["oversize_packets"] == 0
    assert {link["name"] for link in emu["links"]} >= {"router_left->router_right"}
    assert summary["emulation_accurate"] == emu["accurate"]
    assert (tmp_path / "out" / "flow_series.parquet").is_file()


@needs_emulator
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_emulation_keeps_what_ran_and_leaves_nothing(tmp_path: Path, sig: int) -> None:
    links_before = _own_links()
    proc, out = _start(tmp_path, "60s")
    try:
        _wait_for_live_line(proc)
        namespaces = _net_namespaces_of(proc.pid) - _net_namespaces_of(os.getpid())
        assert len(namespaces) >= 4, "one namespace per host"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert (out / "INCOMPLETE").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["emulated"] is True
    time.sleep(0.2)
    assert _held_anywhere(namespaces) == set()
    assert _own_links() == links_before


@needs_emulator
def test_a_killed_emulation_leaves_nothing(tmp_path: Path) -> None:
    links_before = _own_links()
    proc, _ = _start(tmp_path, "60s")
    try:
        _wait_for_live_line(proc)
        namespaces = _net_namespaces_of(proc.pid) - _net_namespaces_of(os.getpid())
        assert len(namespaces) >= 4
        proc.kill()  # SIGKILL: no handler runs
        proc.wait(timeout=10)
    finally:
        proc.kill()
    deadline = time.monotonic() + 5
    while _held_anywhere(namespaces) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _held_anywhere(namespaces) == set()
    assert _own_links() == links_before


def test_the_simulator_refuses_a_linux_tcp_flow_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(fairstream.ScenarioError, match=r"emu\.toml:10:12: field `flow\[0\]\.protocol`"):
        fairstream.run(_write(tmp_path, "1s"))


def test_without_the_means_to_emulate_the_command_says_what_is_missing(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "fairstream",
        "emulate",
        str(_write(tmp_path, "1s")),
        "-o",
        str(tmp_path / "o"),
    ]
    if os.geteuid() == 0:  # root without the capabilities that make network namespaces
        if subprocess.run(["which", "setpriv"], capture_output=True, check=False).returncode != 0:
            pytest.skip("needs setpriv to drop root's capabilities")
        cmd = ["setpriv", "--bounding-set", "-sys_admin,-net_admin", *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        "fairstream emulate: error: the emulator cannot run here: network namespaces"
    )
    assert "root" in done.stderr
    assert not (tmp_path / "o").exists()


def test_an_emulated_experiment_is_skipped_saying_why_where_it_cannot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairstream import emulation

    monkeypatch.setattr(emulation, "emulator_unavailable", lambda: "no TUN device (for this test)")
    code = main(["reproduce", "friendly-linux", "-o", str(tmp_path / "rep"), "--quick", "--quiet"])
    assert code == 0
    res = json.loads((tmp_path / "rep" / "friendly-linux" / "result.json").read_text())
    assert res["skipped"] == "no TUN device (for this test)"
    assert res["checks"] == [] and "Not run on this machine: no TUN device" in res["explanation"]
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Not run on this machine: no TUN device (for this test)" in html


def test_an_unknown_device_kind_is_refused_naming_the_kinds(tmp_path: Path) -> None:
    assert fairstream.emu_devices() == ["veth", "tun"], "the default first"
    with pytest.raises(ValueError, match='expected "veth" or "tun"'):
        fairstream.emulate(_write(tmp_path, "1s"), device="tap")
    with pytest.raises(SystemExit):
        main(["emulate", _write(tmp_path, "1s").as_posix(), "-o", str(tmp_path / "o"), "--device", "tap"])
