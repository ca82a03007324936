"""`fairstream.send` / `recv` and the `send` / `recv` commands over loopback, bounded in time:
results as `run` writes them on both sides, the receiver running in a thread of this process
while the sender runs (both release the GIL), and bad arguments as one line, exit 2, nothing
written."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import fairstream
import pytest
from fairstream.cli import BAD_INPUT, main


def _reap(*procs: subprocess.Popen[Any]) -> None:
    """Kills whatever of `procs` still runs: a failed test must not leave a command behind (one
    that never saw its SIGINT would run on, waiting for a sender, after the test session)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("protocol", ["tfrc", "vtp"])
def test_send_to_recv_writes_the_same_tables_on_both_sides(tmp_path: Path, protocol: str) -> None:
    port = _free_port()
    got: dict[str, fairstream.RunResult] = {}

    def receive() -> None:
        got["recv"] = fairstream.recv(
            f"127.0.0.1:{port}", output_dir=tmp_path / "recv", idle_timeout_s=0.5, wait_s=10
        )

    rx = threading.Thread(target=receive)
    rx.start()
    lines: list[tuple[float, float, float | None, float]] = []
    sent = fairstream.send(
        f"127.0.0.1:{port}",
        protocol,
        "2s",
        "20Mbps",
        output_dir=tmp_path / "send",
        live=lambda *line: lines.append(line),
    )
    rx.join(timeout=30)
    received = got["recv"]
    assert lines, "a live line came about once a second"
    for result in (sent, received):
        assert result.flow_series.height > 10
        assert set(result.flow_summary["protocol"]) == {protocol}
    rate = sent.flow_summary["throughput_bps"][0]
    assert 0.5 * 20e6 < rate <= 20e6 * 1.05
    assert received.flow_summary["packets_delivered"][0] > 1000
    stats = json.loads((tmp_path / "send" / "rt.json").read_text())
    assert stats["stop_reason"] == "finished"
    assert stats["pacing"]["sends"] > 1000


def test_the_media_streamer_runs_with_its_defaults_and_proves_its_reports(tmp_path: Path) -> None:
    port = _free_port()
    got: dict[str, fairstream.RunResult] = {}

    def receive() -> None:
        got["recv"] = fairstream.recv(
            f"127.0.0.1:{port}", output_dir=tmp_path / "recv", idle_timeout_s=0.5, wait_s=10
        )

    rx = threading.Thread(target=receive)
    rx.start()
    sent = fairstream.send(f"127.0.0.1:{port}", "surestream", "3s", output_dir=tmp_path / "send")
    rx.join(timeout=30)
    received = got["recv"]
    for result in (sent, received):
        assert result.flow_series.height > 10
        assert set(result.flow_summary["protocol"]) == {"surestream"}
    # Prebuffering at its top level (450 kbit/s) times its speed-up (6): about 2.7 Mbit/s of
    # 1500-byte packets, some 225 a second.
    assert received.flow_summary["packets_delivered"][0] > 300
    assert 1e6 < sent.flow_summary["throughput_bps"][0] < 4e6
    stats = json.loads((tmp_path / "send" / "rt.json").read_text())
    assert stats["stop_reason"] == "finished"
    # A report every 500 ms, each proving its claim of no loss over loopback.
    assert stats["feedback_reports"] >= 4
    assert stats["lying_reports"] == 0
    assert json.loads((tmp_path / "recv" / "rt.json").read_text())["protocol"] == "surestream"


def test_bad_arguments_get_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["send", "--to", "no-such-host.invalid:9", "--protocol", "tfrc", "-o", str(out)]) == BAD_INPUT
    err = capsys.readouterr().err
    assert "cannot resolve `no-such-host.invalid:9`" in err and len(err.strip().splitlines()) == 1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as busy:
        busy.bind(("127.0.0.1", 0))
        port = busy.getsockname()[1]
        assert main(["recv", "--listen", f"127.0.0.1:{port}", "-o", str(out)]) == BAD_INPUT
        err = capsys.readouterr().err
        assert f"cannot bind 127.0.0.1:{port}" in err and len(err.strip().splitlines()) == 1
    assert main(["send", "--to", "127.0.0.1:9", "--protocol", "tcp", "-o", str(out)]) == BAD_INPUT
    assert "unknown protocol `tcp`" in capsys.readouterr().err
    capped = ["send", "--to", "127.0.0.1:9", "--protocol", "surestream", "--rate-cap", "5Mbps"]
    assert main([*capped, "-o", str(out)]) == BAD_INPUT
    assert "surestream takes no rate cap" in capsys.readouterr().err
    assert (
        main(["send", "--to", "127.0.0.1:9", "--protocol", "vtp", "--duration", "soon", "-o", str(out)])
        == BAD_INPUT
    )
    assert "duration `soon`" in capsys.readouterr().err
    assert not out.exists()


def test_ctrl_c_stops_both_ends_with_results_written_and_exit_130(tmp_path: Path) -> None:
    import signal
    import sys
    import time

    port = _free_port()
    fs = [sys.executable, "-m", "fairstream"]
    recv = subprocess.Popen([*fs, "recv", "--listen", f"127.0.0.1:{port}", "-q", "-o", str(tmp_path / "r")])
    time.sleep(1.0)
    send = subprocess.Popen(
        [*fs, "send", "--to", f"127.0.0.1:{port}", "--protocol", "tfrc", "--duration", "60s"]
        + ["--rate-cap", "10Mbps", "-q", "-o", str(tmp_path / "s")],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.5)
    start = time.monotonic()
    send.send_signal(signal.SIGINT)
    recv.send_signal(signal.SIGINT)
    try:
        _, err = send.communicate(timeout=20)
        assert recv.wait(timeout=20) == 130
    finally:
        _reap(send, recv)
    assert send.returncode == 130, err
    assert time.monotonic() - start < 5
    assert "interrupted" in err and len(err.strip().splitlines()) == 1
    for side in ("s", "r"):
        assert (tmp_path / side / "INCOMPLETE").is_file()
        summary = json.loads((tmp_path / side / "summary.json").read_text())
        assert summary["flows"][0]["packets_sent" if side == "s" else "packets_delivered"] > 100


def test_a_receiver_waiting_for_its_sender_sleeps_rather_than_spins(tmp_path: Path) -> None:
    """Its CPU time over a second of waiting, read from /proc: a receiver that spun would use
    the whole second (it did, before it slept while no sender was connected)."""
    import signal
    import sys
    import time

    stat = Path("/proc/self/stat")
    if not stat.is_file():
        pytest.skip("needs /proc to read a process's CPU time")
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_s(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    port = _free_port()
    recv = subprocess.Popen(
        [sys.executable, "-m", "fairstream", "recv", "--listen", f"127.0.0.1:{port}", "-q"]
        + ["-o", str(tmp_path / "r")]
    )
    try:
        time.sleep(1.5)  # past the interpreter's start and the first live-line time
        before, start = cpu_s(recv.pid), time.monotonic()
        time.sleep(1.0)
        used, waited = cpu_s(recv.pid) - before, time.monotonic() - start
    finally:
        recv.send_signal(signal.SIGINT)
        try:
            recv.wait(timeout=20)
        finally:
            _reap(recv)
    assert used < 0.5 * waited, f"{used:.2f} s of CPU in {waited:.2f} s of waiting"
