"""Output directories of ``run``, ``sweep`` and ``reproduce`` (fairstream.output): checked before
anything runs, written whole or not at all, an earlier result of the same command replaced whole
(no stale run survives), anything else refused unless --force, symbolic links followed and never
replaced, and a killed command's staging directory cleaned up by the next one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import fairstream
import pytest
from conftest import small_scenario
from fairstream import output, tomlio
from fairstream.cli import main
from fairstream.reproduce import EXPERIMENTS
from fairstream.results import RunResult


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(tomlio.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    return write(tmp_path / "s.toml", small_scenario(duration="500ms"))


def siblings(parent: Path) -> list[str]:
    """The hidden staging or set-aside directories in `parent`."""
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name)


def sweep_cli(scenario: Path, out: Path, values: str, *extra: str) -> int:
    """Sweeps the UDP rate over `values`, given comma-separated ("1Mbps,2Mbps")."""
    array = "[" + ", ".join(f'"{v}"' for v in values.split(",")) + "]"
    return main(
        ["sweep", str(scenario), "--set", f"flow.1.rate={array}", "-o", str(out), "-j", "1", "-q", *extra]
    )


def command_args(command: str, scenario_file: Path) -> list[str]:
    """A command line of `command` (run, sweep or reproduce) without its output directory."""
    return {
        "run": ["run", str(scenario_file)],
        "sweep": ["sweep", str(scenario_file), "--set", "flow.1.rate=1Mbps"],
        "reproduce": ["reproduce", "collapse", "--quick"],
    }[command]


def no_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes any attempt to run a scenario fail the test: the target must be refused first."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a run started although the output directory is refused")

    import fairstream.campaign
    import fairstream.reproduce.campaign  # imported before patching: it binds run_specs when imported

    monkeypatch.setattr(fairstream._core, "Simulation", refuse)
    monkeypatch.setattr(fairstream.campaign, "run_specs", refuse)
    monkeypatch.setattr(fairstream.reproduce.campaign, "run_specs", refuse)


# --- sweep ---------------------------------------------------------------------------------------


def points(out: Path) -> list[str]:
    """The point keys of a sweep's dataset."""
    import polars as pl

    return pl.read_parquet(out / "data" / "runs.parquet")["key"].to_list()


def test_a_second_sweep_into_the_same_directory_leaves_no_stale_run(
    scenario_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sw"
    assert sweep_cli(scenario_file, out, "0.2Mbps,0.4Mbps,0.6Mbps") == 0
    assert points(out) == ["0000", "0001", "0002"]
    assert output.read_marker(out)["command"] == "sweep"
    assert sweep_cli(scenario_file, out, "0.3Mbps,0.5Mbps") == 0
    assert points(out) == ["0000", "0001"]
    assert len(json.loads((out / "sweep.json").read_text())["points"]) == 2
    assert set(fairstream.sweeps.SweepResult(out, []).flows["point"]) == {0, 1}
    assert sorted(p.name for p in out.iterdir()) == [".fairstream", "data", "sweep.json"]
    assert sweep_cli(scenario_file, out, "0.3Mbps", "--keep-runs") == 0
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["0000"] and points(out) == ["0000"]
    assert siblings(tmp_path) == []


def test_sweep_refuses_a_directory_it_did_not_write_before_running_unless_forced(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with monkeypatch.context() as m:
        no_runs(m)
        assert sweep_cli(scenario_file, out, "0.2Mbps,0.4Mbps") == 2
    err = capsys.readouterr().err
    assert "notes.txt" in err and "--force" in err and "Traceback" not in err
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and siblings(tmp_path) == []
    assert sweep_cli(scenario_file, out, "0.2Mbps,0.4Mbps", "--force") == 0
    assert not (out / "notes.txt").exists() and len(points(out)) == 2


def test_a_file_added_to_a_sweep_directory_is_not_deleted_without_force(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sw"
    assert sweep_cli(scenario_file, out, "0.2Mbps") == 0
    (out / "analysis.ipynb").write_text("{}", encoding="utf-8")
    assert sweep_cli(scenario_file, out, "0.4Mbps") == 2
    assert "analysis.ipynb" in capsys.readouterr().err and (out / "analysis.ipynb").is_file()


def test_sweep_and_run_follow_a_symbolic_link_and_keep_it(scenario_file: Path, tmp_path: Path) -> None:
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    assert sweep_cli(scenario_file, link, "0.2Mbps,0.4Mbps") == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(points(real)) == 2
    assert sweep_cli(scenario_file, link, "0.2Mbps") == 0  # replaces the target, not the link
    assert link.is_symlink() and len(points(real)) == 1
    run_link = tmp_path / "run-link"
    (tmp_path / "run-real").mkdir()
    run_link.symlink_to(tmp_path / "run-real")
    assert main(["run", str(scenario_file), "-o", str(run_link), "-q"]) == 0
    assert main(["run", str(scenario_file), "-o", str(run_link), "-q", "--seed", "3"]) == 0
    assert run_link.is_symlink() and json.loads((run_link / "summary.json").read_text())["seed"] == 3
    assert siblings(tmp_path) == []


@pytest.mark.parametrize("command", ["run", "sweep", "reproduce"])
def test_bad_targets_are_refused_before_anything_runs(
    command: str,
    scenario_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_runs(monkeypatch)
    file = tmp_path / "file"
    file.write_text("keep", encoding="utf-8")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    args = command_args(command, scenario_file)
    for target, says in [(file, "is a file"), (dangling, "link to nowhere")]:
        assert main([*args, "-o", str(target), "-q"]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
    assert file.read_text(encoding="utf-8") == "keep" and dangling.is_symlink()
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "-o", "", "-q"])
    assert exit_info.value.code == 2 and "empty path" in capsys.readouterr().err
    # The run cache, or a directory holding it, even with --force: results replace their
    # directory whole, the runs just stored in it with it (and one that did not exist was refused
    # once the runs had filled it: "holds files fairstream did not write").
    out = tmp_path / "out"
    for cache, extra in [(out / "cache", ()), (out / "cache", ("--force",)), (out, ("--no-cache",))]:
        monkeypatch.setenv("FAIRSTREAM_CACHE", str(cache))
        assert main([*args, "-o", str(out), "-q", *extra]) == 2
        err = capsys.readouterr().err
        assert f"{out} is or holds the run cache ({cache})" in err and "Traceback" not in err, err
        assert not out.exists()
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(tmp_path / "link" / "cache"))
    (tmp_path / "link").symlink_to(out.name)  # the same directory by another name
    out.mkdir()
    assert main([*args, "-o", str(out), "-q"]) == 2
    assert "is or holds the run cache" in capsys.readouterr().err and list(out.iterdir()) == []


@pytest.mark.parametrize("command", ["run", "sweep", "reproduce"])
@pytest.mark.skipif(
    not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no directory can be made"
)
def test_a_target_where_nothing_can_be_written_is_refused_before_anything_runs(
    command: str, scenario_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permissions cannot tell (root may write anywhere by them): a directory is made and
    removed where the staging directory would go."""
    no_runs(monkeypatch)
    args = command_args(command, scenario_file)
    assert main([*args, "-o", "/proc/fairstream-out/deeper", "-q"]) == 2
    err = capsys.readouterr().err
    assert "/proc/fairstream-out/deeper: no directory can be made in /proc (" in err, err


def test_checking_a_target_leaves_nothing_behind(tmp_path: Path) -> None:
    assert output.prepare(tmp_path / "a" / "b", "run") == tmp_path / "a" / "b"
    assert list(tmp_path.iterdir()) == []  # neither the probe nor the parents it would need


def test_a_path_below_a_symbolic_link_to_nowhere_is_refused_and_nothing_made(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "gone" / "deeper"
    link = tmp_path / "link"
    link.symlink_to(nowhere)
    assert main(["run", str(scenario_file), "-o", str(link / "out"), "-q"]) == 2
    assert "symbolic link to nowhere" in capsys.readouterr().err
    assert not (tmp_path / "gone").exists() and link.is_symlink()


def test_the_api_refuses_an_empty_path() -> None:
    with pytest.raises(ValueError, match="empty path"):
        fairstream.run(small_scenario(duration="100ms"), output_dir="")


def test_one_command_does_not_replace_another_s_results_without_force(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sw"
    assert sweep_cli(scenario_file, out, "0.2Mbps") == 0
    assert main(["run", str(scenario_file), "-o", str(out), "-q"]) == 2
    assert "fairstream sweep" in capsys.readouterr().err and (out / "sweep.json").is_file()
    assert main(["run", str(scenario_file), "-o", str(out), "-q", "--force"]) == 0
    assert output.read_marker(out)["command"] == "run" and not (out / "sweep.json").exists()


def test_the_working_and_home_directories_are_never_replaced(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    (here / "sub").mkdir(parents=True)
    (here / "mine.txt").write_text("keep", encoding="utf-8")
    (here / "sub" / "work.txt").write_text("keep", encoding="utf-8")
    monkeypatch.chdir(here / "sub")
    for target in [".", str(here / "sub"), str(here)]:
        assert main(["run", str(scenario_file), "-o", target, "-q", "--force"]) == 2
        assert "the directory you are in" in capsys.readouterr().err
    assert (here / "mine.txt").is_file() and (here / "sub" / "work.txt").is_file()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(here / "sub"))
    with pytest.raises(ValueError, match="home directory"):
        output.prepare(here, "run", force=True)


def test_the_api_refuses_to_write_results_over_the_cache_it_stores_in(tmp_path: Path) -> None:
    from fairstream.cache import RunCache

    with pytest.raises(output.OutputError, match="is or holds the run cache"):
        fairstream.run(small_scenario(duration="100ms"), output_dir=tmp_path, cache=RunCache(tmp_path / "c"))
    assert list(tmp_path.iterdir()) == []
    result = fairstream.run(
        small_scenario(duration="100ms"), output_dir=tmp_path / "a", cache=RunCache(tmp_path / "c")
    )
    assert result.summary["duration_s"] == 0.1  # beside it is fine


def test_an_empty_working_directory_is_filled_in_place(
    scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "empty"
    here.mkdir()
    inode = here.stat().st_ino
    monkeypatch.chdir(here)
    assert main(["run", str(scenario_file), "-o", ".", "-q"]) == 0
    assert here.stat().st_ino == inode and (here / "summary.json").is_file()
    assert output.read_marker(here)["command"] == "run"


def test_a_directory_without_the_marker_is_kept_whatever_its_files_are_called(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    captures = tmp_path / "captures"
    (captures / "pcap").mkdir(parents=True)
    (captures / "pcap" / "mine.pcap").write_text("precious", encoding="utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.json").write_text('{"mine": 1}', encoding="utf-8")
    old = tmp_path / "old"
    assert main(["run", str(scenario_file), "-o", str(old), "-q"]) == 0
    (old / output.MARKER).unlink()  # a run's files, but nothing says fairstream wrote them
    for out, kept in ((captures, "pcap/mine.pcap"), (mine, "summary.json"), (old, "summary.json")):
        before = (out / kept).read_bytes()
        assert main(["run", str(scenario_file), "-o", str(out), "-q", "--seed", "5"]) == 2
        assert "did not write" in capsys.readouterr().err and (out / kept).read_bytes() == before
    assert main(["run", str(scenario_file), "-o", str(old), "-q", "--seed", "5", "--force"]) == 0
    assert json.loads((old / "summary.json").read_text())["seed"] == 5


def test_a_failure_while_writing_leaves_the_earlier_results_and_no_staging(
    scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "sw"
    assert sweep_cli(scenario_file, out, "0.2Mbps,0.4Mbps") == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def broken(*args: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr("fairstream.dataset.DatasetWriter.close", broken)
    assert sweep_cli(scenario_file, out, "0.3Mbps") == 1
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert siblings(tmp_path) == []


# --- killed commands --------------------------------------------------------------------------------


def test_a_killed_sweep_leaves_an_unmarked_staging_directory_that_the_next_write_removes(
    tmp_path: Path,
) -> None:
    long = write(tmp_path / "long.toml", small_scenario(duration="300s"))
    out = tmp_path / "sw"
    child = subprocess.Popen(
        [sys.executable, "-m", "fairstream", "sweep", str(long), "--set", 'flow.1.rate=["1Mbps", "2Mbps"]']
        + ["-o", str(out), "-j", "1", "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not siblings(tmp_path) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert siblings(tmp_path), "the sweep never staged its output"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    (left,) = siblings(tmp_path)
    assert left.startswith(".sw.partial-") and not out.exists()
    assert output.read_marker(tmp_path / left) is None, "a partial directory must not look like results"
    with pytest.raises(FileNotFoundError):
        RunResult(tmp_path / left)  # it holds no summary.json at its top either
    short = write(tmp_path / "short.toml", small_scenario(duration="200ms"))
    assert main(["run", str(short), "-o", str(tmp_path / "other"), "-q"]) == 0
    assert siblings(tmp_path) == [], "the next write into the same parent removes the dead staging"


#: A child that runs a scenario capturing a link and dies part-way, as SIGKILL would end it (no
#: handler, no cleanup): by `fairstream.run` into argv[2], or with argv[3], by a campaign's
#: `execute` into the run cache there.
_DIES_CAPTURING = """
import os, sys
import fairstream, fairstream.api as api
from fairstream import tomlio
from fairstream.cache import RunCache, run_key
from fairstream.campaign import RunSpec, execute

def dying(sim, *args, **kwargs):
    sim.advance(0.5)  # the captures are being written
    os._exit(9)

api.advance = dying
scenario, out = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    text = open(scenario, encoding="utf-8").read()
    resolved = fairstream._core.validate(text, scenario)
    execute(RunSpec(text, scenario, run_key(resolved)), RunCache(sys.argv[3]))
else:
    fairstream.run(scenario, out, cache=False)
"""


def _capturing(tmp_path: Path, name: str, duration: str) -> Path:
    doc = small_scenario(duration=duration)
    doc["record"]["pcap"] = ["S1->N1"]
    return write(tmp_path / name, doc)


def test_a_run_killed_while_capturing_leaves_captures_that_the_next_write_removes(tmp_path: Path) -> None:
    """A run's pcap captures go, as it runs, into a directory of its process beside its output
    (or in the run cache's staging directory): a run killed there leaves them to the next
    command writing beside it (or into that cache), which removes them; a run that ends leaves
    nothing."""
    home = tmp_path / "home"
    home.mkdir()
    scenario = _capturing(tmp_path, "long.toml", "30s")
    argv = [sys.executable, "-c", _DIES_CAPTURING, str(scenario)]
    child = subprocess.run([*argv, str(home / "out")], check=False)
    assert child.returncode == 9
    (left,) = home.iterdir()
    assert left.name.startswith(".out.capture-") and left.name.endswith(f"@{output._host()}")
    assert [p.suffix for p in left.iterdir()] == [".pcap"]
    short = _capturing(tmp_path, "short.toml", "200ms")
    assert main(["run", str(short), "-o", str(home / "other"), "-q", "--no-cache"]) == 0
    assert [p.name for p in home.iterdir()] == ["other"], "the dead run's captures are removed"
    assert (home / "other" / "pcap" / "S1-%3EN1.pcap").stat().st_size > 24  # and this run's kept
    cache = tmp_path / "cache"
    child = subprocess.run([*argv, "-", str(cache)], check=False)
    assert child.returncode == 9
    (left,) = (cache / "tmp").iterdir()
    assert left.name.startswith("capture~") and [p.suffix for p in left.iterdir()] == [".pcap"]
    from fairstream.cache import RunCache

    plain = write(tmp_path / "plain.toml", small_scenario(duration="200ms"))
    result = fairstream.run(plain, cache=RunCache(cache))  # stores the run: the staging is cleared
    assert result.summary["events"] > 0
    assert list((cache / "tmp").iterdir()) == []


def test_staging_directories_of_live_processes_and_other_hosts_are_kept(tmp_path: Path) -> None:
    live = tmp_path / f".a.partial-{os.getppid()}@{output._host()}"
    other = tmp_path / ".b.partial-999999999@some-other-host"
    dead = tmp_path / f".c.old-999999999@{output._host()}"
    lookalike = tmp_path / ".d.partial-notapid"
    for d in (live, other, dead, lookalike):
        d.mkdir()
    assert output.remove_stale_siblings(tmp_path) == [dead]
    assert live.is_dir() and other.is_dir() and lookalike.is_dir() and not dead.exists()


# --- reproduce ---------------------------------------------------------------------------------------


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from test_reproduce import _FAKE_SCENARIO, SeedParity  # the one-CBR fake experiment

    path = tmp_path / "output-fake.toml"
    path.write_text(_FAKE_SCENARIO, encoding="utf-8")
    ids = []
    for name in ("output-a", "output-b"):
        exp = SeedParity(
            id=name,
            title=name,
            paper="test",
            figure="-",
            scenario_file=str(path),
            what_runs="one CBR flow",
            must_hold="it runs",
            explanation="test",
            published=(),
        )
        monkeypatch.setitem(EXPERIMENTS, name, exp)
        ids.append(name)
    return ids


def reproduce_cli(ids: Sequence[str], out: Path, *extra: str) -> int:
    return main(["reproduce", *ids, "-o", str(out), "--replicas", "0", "-j", "1", "-q", *extra])


def test_a_second_reproduction_replaces_the_first_whole_report_included(
    fakes: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "repro"
    assert reproduce_cli(fakes, out) == 0
    assert sorted(p.name for p in out.iterdir()) == [".fairstream", "output-a", "output-b", "report.html"]
    assert set(output.read_marker(out)["entries"]) >= {"output-a", "output-b", "report.html"}
    assert main(["report", str(out)]) == 0  # rewriting the report keeps the directory fairstream's
    assert reproduce_cli(fakes[1:], out) == 0  # not refused: report.html is fairstream's
    assert sorted(p.name for p in out.iterdir()) == [".fairstream", "output-b", "report.html"]
    assert siblings(tmp_path) == []


def test_reproduce_refuses_a_directory_it_did_not_write_unless_forced(
    fakes: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "papers"
    out.mkdir()
    (out / "draft.tex").write_text("keep", encoding="utf-8")
    with monkeypatch.context() as m:
        no_runs(m)
        assert reproduce_cli(fakes, out) == 2
    assert "draft.tex" in capsys.readouterr().err and [p.name for p in out.iterdir()] == ["draft.tex"]
    assert reproduce_cli(fakes, out, "--force") == 0
    assert not (out / "draft.tex").exists() and (out / "output-a" / "result.json").is_file()


def test_reproduce_follows_a_symbolic_link(fakes: list[str], tmp_path: Path) -> None:
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    assert reproduce_cli(fakes[:1], link) == 0
    assert reproduce_cli(fakes[:1], link) == 0
    assert link.is_symlink() and (real / "output-a" / "result.json").is_file()
