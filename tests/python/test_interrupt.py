"""Ctrl-C stops `run`, `sweep`, `reproduce` and `bench` promptly: exit 130, no traceback, no
process left behind, and the results so far kept and marked incomplete.

Each test starts the command as a subprocess (``python -m fairstream``), waits until its
simulations are under way, sends SIGINT to the command's process alone (the command must then
stop its workers itself) or, for `run` and `sweep` also, to its whole process group (as a
terminal's Ctrl-C does: every worker gets the signal too), and measures the time from the signal
to the command's exit. The measured latency is printed (``pytest -s`` shows it;
docs/cli.md records typical figures); the bound asserted is `BOUND_S`.
"""

from __future__ import annotations

import _thread
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import small_scenario
from fairstream import cache, tomlio

pytestmark = pytest.mark.skipif(
    os.name != "posix" or not hasattr(signal, "SIGINT"), reason="needs POSIX signals"
)

#: The bound asserted on the time from SIGINT to the command's exit. The target, and what an idle
#: machine shows (docs/cli.md), is under 0.2 s; the bound leaves a loaded CI machine room (a
#: process exit and a few file writes) while still failing on the old behaviour (the next of 200
#: chunks: seconds to minutes). FAIRSTREAM_INTERRUPT_BOUND_S sets it.
BOUND_S = float(os.environ.get("FAIRSTREAM_INTERRUPT_BOUND_S", "1.0"))

#: Simulated length of the runs that are interrupted: far longer than any test waits.
LONG = "1000000s"


@pytest.fixture(autouse=True)
def python_handles_sigint() -> Iterator[None]:
    """Ctrl-C as an interactive Python sees it, however the tests were started: a shell that runs a
    command in the background (`.ci/run &`, `nohup ... &`) starts it with SIGINT ignored, and a
    Python started so installs no handler of its own, so no KeyboardInterrupt would ever be raised
    (three of these tests failed so in a fresh-clone CI run launched in the background)."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def long_scenario(path: Path) -> Path:
    """The small two-flow scenario, simulated for `LONG` (it never finishes in a test)."""
    doc = small_scenario(duration=LONG)
    doc["record"] = {"interval": "100s"}
    path.write_text(tomlio.dumps(doc), encoding="utf-8")
    return path


def start(*argv: str, cwd: Path) -> subprocess.Popen[str]:
    """``python -m fairstream ARGV`` in a process group of its own (for `interrupt`'s `group`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "fairstream", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (Linux /proc), children first; [] where /proc cannot tell."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *descendants(child)]
    return found


def simulating(pid: int) -> bool:
    """Whether process `pid` has loaded the simulator (fairstream's extension module)."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
            return "_core" in f.read()
    except OSError:
        return False


def wait_until_simulating(proc: subprocess.Popen[str], in_children: int = 0, timeout_s: float = 120) -> None:
    """Waits until `proc` (or, with `in_children`, that many of its descendants) has loaded the
    simulator, then one more second, so that runs are under way when the signal comes."""
    if not Path("/proc/self/maps").exists():
        time.sleep(5.0)  # no /proc to look at: start-up takes well under this
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the command ended early: {proc.communicate()}"
        if in_children:
            ready = sum(simulating(p) for p in descendants(proc.pid)) >= in_children
        else:
            ready = simulating(proc.pid)
        if ready:
            time.sleep(1.0)
            return
        time.sleep(0.05)
    raise AssertionError("the command did not start simulating")


def interrupt(proc: subprocess.Popen[str], what: str, group: bool = False) -> tuple[float, str, list[int]]:
    """Sends SIGINT to `proc` alone (or with `group`, to its process group); returns (seconds
    until it exited, its stderr, the processes that were below it)."""
    below = descendants(proc.pid)
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"{what} did not stop within 60 s of SIGINT") from None
    latency = time.monotonic() - sent
    to = "its process group" if group else "it"
    print(f"\n{what}: exit {proc.returncode} {latency * 1000:.0f} ms after SIGINT to {to}")
    return latency, err, below


def assert_stopped(proc: subprocess.Popen[str], latency: float, err: str, below: list[int]) -> None:
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert "interrupted" in err, err
    assert latency < BOUND_S, f"stopped {latency:.3f} s after SIGINT (bound {BOUND_S} s)"
    deadline = time.monotonic() + 5.0
    alive = below
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        time.sleep(0.05)
    assert not alive, f"processes left running after the command exited: {alive}"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_ctrl_c_stops_a_long_run_promptly_and_keeps_its_results_marked(tmp_path: Path, group: bool) -> None:
    scenario = long_scenario(tmp_path / "long.toml")
    out = tmp_path / "out"
    proc = start("run", str(scenario), "-o", str(out), cwd=tmp_path)
    wait_until_simulating(proc)
    latency, err, below = interrupt(proc, "run", group)
    assert_stopped(proc, latency, err, below)
    assert str(out) in err and "INCOMPLETE" in err, err
    s = summary(out)
    assert s["complete"] is False
    assert 0 < s["stopped_at_s"] < 100000 and s["duration_s"] == s["stopped_at_s"]
    assert s["events"] > 0 and s["flows"][0]["packets_sent"] > 0
    assert "interrupted" in (out / "INCOMPLETE").read_text(encoding="utf-8")
    assert (out / "flow_series.parquet").is_file() and (out / "scenario.resolved.toml").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no staging directory left"


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_ctrl_c_stops_a_sweep_and_its_workers_and_marks_what_ran(tmp_path: Path, group: bool) -> None:
    scenario = long_scenario(tmp_path / "long.toml")
    out = tmp_path / "sweep"
    proc = start(
        "sweep", str(scenario), "--set", "seed=[1, 2, 3]", "-o", str(out), "-j", "2", "-q", cwd=tmp_path
    )
    wait_until_simulating(proc, in_children=2)
    latency, err, below = interrupt(proc, "sweep", group)
    assert_stopped(proc, latency, err, below)
    doc = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert doc["complete"] is False
    statuses = [p["status"] for p in doc["points"]]
    assert statuses == ["stopped", "stopped", "not run"], statuses
    assert not (out / "runs").exists()  # no run directory unless asked (--keep-runs)
    assert not (out / "data").exists()  # the finished points are in the run cache; a rerun writes it
    assert "2 were stopped part-way" in (out / "INCOMPLETE").read_text(encoding="utf-8")


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_ctrl_c_keeps_the_partial_runs_of_a_sweep_that_keeps_its_runs(tmp_path: Path, group: bool) -> None:
    scenario = long_scenario(tmp_path / "long.toml")
    out = tmp_path / "sweep"
    argv = ["sweep", str(scenario), "--set", "seed=[1, 2, 3]", "-o", str(out), "-j", "2", "-q", "--keep-runs"]
    proc = start(*argv, cwd=tmp_path)
    wait_until_simulating(proc, in_children=2)
    latency, err, below = interrupt(proc, "sweep --keep-runs", group)
    assert_stopped(proc, latency, err, below)
    doc = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [p["status"] for p in doc["points"]] == ["stopped", "stopped", "not run"]
    for point in doc["points"][:2]:
        run_dir = out / point["dir"]
        assert summary(run_dir)["complete"] is False and (run_dir / "INCOMPLETE").is_file()
    assert not (out / "runs" / "0002").exists()


def test_ctrl_c_stops_a_reproduction_and_marks_it_incomplete(tmp_path: Path, run_cache: Path) -> None:
    out = tmp_path / "repro"
    # Full-length (not --quick): 70 runs, several seconds of work, more than the test waits for.
    # (An experiment that records no packet trace: writing one takes seconds, see docs/cli.md.)
    argv = ["reproduce", "rtt-bias", "-o", str(out), "-j", "2", "-q"]
    proc = start(*argv, cwd=tmp_path)
    wait_until_simulating(proc, in_children=2)
    latency, err, below = interrupt(proc, "reproduce")
    assert_stopped(proc, latency, err, below)
    top = (out / "INCOMPLETE").read_text(encoding="utf-8")
    assert "no experiment was evaluated" in top and "rtt-bias:" in top, top
    assert (out / "rtt-bias" / "INCOMPLETE").is_file()
    assert not (out / "rtt-bias" / "result.json").exists()
    finished = int(re.search(r"interrupted: (\d+) of", top).group(1))
    stored = list((run_cache / cache.RUNS).rglob("*.run"))
    assert len(stored) == finished, "every run that finished is in the run cache, and only those"
    report = subprocess.run(
        [sys.executable, "-m", "fairstream", "report", str(out)], capture_output=True, text=True, check=False
    )
    assert report.returncode == 2 and "no experiment was evaluated" in report.stderr, report.stderr


def test_ctrl_c_stops_bench_and_its_child_processes(tmp_path: Path) -> None:
    saved = tmp_path / "bench.json"
    argv = ["bench", "B1", "--no-ns3", "--no-wait", "--repeat", "1", "--duration", "100000s"]
    proc = start(*argv, "--json", str(saved), cwd=tmp_path)
    wait_until_simulating(proc, in_children=1)
    latency, err, below = interrupt(proc, "bench")
    assert below, "the benchmark ran in a child process"
    assert_stopped(proc, latency, err, below)
    doc = json.loads(saved.read_text(encoding="utf-8"))
    assert doc["complete"] is False and doc["benchmarks"] == []


def interrupt_at_chunk(n: int, deliver: Any = _thread.interrupt_main) -> Any:
    """A progress callback that delivers a simulated SIGINT (`_thread.interrupt_main`, which Python
    handles as it handles the real signal) after the run's `n`-th chunk: synchronously, from
    within the run, so that the test does not depend on how soon another thread gets to run (the
    Timer it used before could lose the race on a loaded machine). `deliver`: how."""
    chunks = [0]

    def callback(now_s: float, duration_s: float, events: int) -> None:
        chunks[0] += 1
        if chunks[0] == n:
            deliver()

    return callback


def test_the_api_keeps_an_interrupted_runs_results_and_says_where(tmp_path: Path) -> None:
    import fairstream

    out = tmp_path / "out"
    scenario = long_scenario(tmp_path / "long.toml")
    with pytest.raises(fairstream.Interrupted) as info:
        fairstream.run(scenario, output_dir=out, progress=interrupt_at_chunk(2), cache=False)
    assert info.value.partial == str(out) and "INCOMPLETE" in str(info.value)
    assert summary(out)["complete"] is False and (out / "INCOMPLETE").is_file()
    assert fairstream.output.read_marker(out)["complete"] is False  # the marker says it too
    with pytest.raises(fairstream.Interrupted) as info:
        fairstream.run(scenario, progress=interrupt_at_chunk(2))
    assert info.value.partial is None and "nothing written" in str(info.value)
    fairstream.run(small_scenario(duration="1s"), output_dir=out)
    assert summary(out)["complete"] is True and not (out / "INCOMPLETE").exists()
    assert fairstream.output.read_marker(out)["complete"] is True


class _Finalized:
    """An object whose finalizer runs Python code: a SIGINT that Python handles while it runs
    raises KeyboardInterrupt inside ``__del__``, where Python prints it ("Exception ignored") and
    drops it. The garbage collector runs such finalizers at any allocation, between two chunks
    of a run as anywhere."""

    def __del__(self) -> None:
        _thread.interrupt_main()
        total = 0
        for i in range(1000):  # the pending signal is handled here, and its exception dropped
            total += i


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_whose_exception_a_finalizer_dropped_still_stops_the_run(tmp_path: Path) -> None:
    """The race behind "DID NOT RAISE Interrupted": the KeyboardInterrupt was raised in a
    finalizer and dropped, and the run went on to its end as if nothing had happened. The signal
    is recorded as well as raised, and the run stops at the next chunk."""
    import fairstream

    dropped: list[BaseException] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: dropped.append(unraisable.exc_value)
    scenario = small_scenario(duration="300s")  # a second or so: without the fix it ends, not raising
    try:
        with pytest.raises(fairstream.Interrupted) as info:
            fairstream.run(
                scenario,
                output_dir=tmp_path / "out",
                progress=interrupt_at_chunk(2, deliver=_Finalized),  # dropped at once: __del__ delivers it
                cache=False,
            )
    finally:
        sys.unraisablehook = hook
    assert [type(e) for e in dropped] == [KeyboardInterrupt], "the signal was handled in the finalizer"
    s = summary(tmp_path / "out")
    assert s["complete"] is False and s["stopped_at_s"] == pytest.approx(2 * 300 / 200)  # at the next chunk
    assert "INCOMPLETE" in str(info.value)


def test_sigint_is_python_s_own_again_after_a_run(tmp_path: Path) -> None:
    import signal as sig

    import fairstream

    fairstream.run(small_scenario(duration="1s"), cache=False)
    with pytest.raises(fairstream.Interrupted):
        fairstream.run(long_scenario(tmp_path / "long.toml"), progress=interrupt_at_chunk(1), cache=False)
    assert sig.getsignal(sig.SIGINT) is sig.default_int_handler


def test_the_report_shows_an_interruption_and_a_whole_rerun_clears_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairstream.interrupt import write_marker
    from fairstream.output import add_entries
    from fairstream.report import write_report
    from fairstream.reproduce import EXPERIMENTS
    from fairstream.reproduce.runner import reproduce
    from test_reproduce import _FAKE_SCENARIO, SeedParity

    path = tmp_path / "fake.toml"
    path.write_text(_FAKE_SCENARIO, encoding="utf-8")
    exp = SeedParity(
        id="fake",
        title="fake",
        paper="test",
        figure="-",
        scenario_file=str(path),
        what_runs="one CBR flow",
        must_hold="-",
        explanation="-",
        published=(),
    )
    monkeypatch.setitem(EXPERIMENTS, exp.id, exp)
    out = tmp_path / "out"
    reproduce([exp.id], out, jobs=1, quiet=True, replicas=0)
    write_marker(out, "interrupted: 3 of 9 runs finished\nother: 3 of 9 runs finished")
    write_marker(out / exp.id, "interrupted")
    add_entries(out, ["INCOMPLETE"])  # as a real interruption lists it in the output's marker
    html = write_report(out).read_text(encoding="utf-8")
    assert "<b>Incomplete:</b> interrupted: 3 of 9 runs finished<br>other: 3 of 9" in html
    reproduce([exp.id], out, jobs=1, quiet=True, replicas=0)
    assert not (out / exp.id / "INCOMPLETE").exists() and not (out / "INCOMPLETE").exists()
    assert "Incomplete" not in write_report(out).read_text(encoding="utf-8")
