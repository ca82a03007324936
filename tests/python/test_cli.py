"""The `fairstream` command: exit codes, messages, and no output for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import tomlio
from fairstream.cli import main

PAPERS = Path(__file__).resolve().parents[2] / "python" / "fairstream" / "scenarios" / "papers"


def write(path: Path, doc: dict) -> Path:
    path.write_text(tomlio.dumps(doc), encoding="utf-8")
    return path


def bad_file(tmp_path: Path) -> tuple[Path, int]:
    """A scenario with a malformed rate; returns the file and the 1-based line of the error."""
    text = tomlio.dumps(small_scenario()).replace('rate = "1.5Mbps"', 'rate = "1.5 Mbs"')
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "1.5 Mbs" in s)
    return path, line


def test_validate_ok(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(PAPERS.glob("*.toml"))
    assert files
    assert main(["validate", *map(str, files)]) == 0
    out = capsys.readouterr().out
    for f in files:
        assert f"{f}: ok" in out


def test_validate_error_names_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad, line = bad_file(tmp_path)
    good = write(tmp_path / "good.toml", small_scenario())
    assert main(["validate", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert f"{good}: ok" in captured.out
    assert "bad.toml" in captured.err
    assert str(line) in captured.err
    assert "rate" in captured.err
    assert "1.5 Mbs" in captured.err


def test_validate_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_run_bad_scenario_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad, _ = bad_file(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(bad), "-o", str(out), "--quiet"]) == 2
    assert "bad.toml" in capsys.readouterr().err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_run_writes_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = write(tmp_path / "s.toml", small_scenario(duration="2s"))
    out = tmp_path / "out"
    assert main(["run", str(scenario), "-o", str(out), "--seed", "4"]) == 0
    captured = capsys.readouterr()
    assert "tcp" in captured.out and "udp" in captured.out
    assert "small: 2.0 s simulated" in captured.err  # stderr is not a terminal: one closing line
    assert (out / "flow_series.parquet").is_file()
    assert json.loads((out / "summary.json").read_text())["seed"] == 4


def test_run_replaces_an_earlier_run_but_never_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = write(tmp_path / "s.toml", small_scenario(duration="1s"))
    out = tmp_path / "out"
    assert main(["run", str(scenario), "-o", str(out), "--quiet"]) == 0
    assert main(["run", str(scenario), "-o", str(out), "--quiet", "--seed", "9"]) == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 9
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["run", str(scenario), "-o", str(mine), "--quiet"]) == 2  # refused before the run
    assert "notes.txt" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_run_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope.toml"), "-o", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()


def test_reproduce_unknown_id_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "no-such-experiment", "-o", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    assert not (tmp_path / "r").exists()
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for exp_id in ("collapse", "unfair-udp", "unfair-tcp4", "parking-lot"):
        assert exp_id in out


def test_report_of_an_empty_directory_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "result.json" in capsys.readouterr().err


def test_report_of_another_command_s_results_says_whose_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(tomlio.dumps(small_scenario(duration="100ms")), encoding="utf-8")
    assert main(["run", str(path), "-o", str(tmp_path / "r"), "-q"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'r'} holds the results of `fairstream run`; a report is written for a " in err, err
    assert not (tmp_path / "r" / "report.html").exists()


def test_validate_prints_a_scenario_warning_as_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = small_scenario()
    doc["flow"][0] |= {"control": "binomial", "k": 1, "l": 1}
    path = tmp_path / "w.toml"
    path.write_text(tomlio.dumps(doc), encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"{path}:") and "field `flow[0].control`: warning:" in err[0]
    assert "not TCP-compatible" in err[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "-1"],
        ["--seed", str(2**70)],
        ["--seed", "x"],
    ],
)
def test_run_refuses_a_seed_out_of_range_with_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(tomlio.dumps(small_scenario()), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(path), "-o", str(tmp_path / "out"), *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "a seed is a whole number from 0 to 2**63 - 1" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("jobs", ["0", "-5", "two"])
def test_jobs_must_be_at_least_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "collapse", "-o", str(tmp_path / "out"), "-j", jobs])
    assert exit_info.value.code == 2
    assert "at least 1" in capsys.readouterr().err


def test_the_api_refuses_a_negative_seed(scenario: dict[str, object]) -> None:
    import fairstream

    with pytest.raises(ValueError, match="from 0 to"):
        fairstream.run(scenario, seed=-1)


def test_a_file_that_is_not_utf8_is_named_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "x"\nduration = "1s"\n# caf\xe9\n')
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: not UTF-8 text" in err and "Traceback" not in err
    assert main(["run", str(path), "-o", str(tmp_path / "out")]) == 2
    assert str(path) in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_output_targets_are_checked_before_the_run_and_links_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = write(tmp_path / "s.toml", small_scenario(duration="1s"))
    file = tmp_path / "file"
    file.write_text("keep", encoding="utf-8")
    assert main(["run", str(scenario), "-o", str(file), "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err and file.read_text(encoding="utf-8") == "keep"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(scenario), "-o", "", "--quiet"])
    assert exit_info.value.code == 2 and "empty path" in capsys.readouterr().err
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert main(["run", str(scenario), "-o", str(link), "--quiet"]) == 0
    assert link.is_symlink() and (real / "summary.json").is_file()


def test_validate_resolved_writes_the_scenario_alone_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = write(tmp_path / "s.toml", small_scenario(duration="1s"))
    assert main(["validate", "--resolved", str(scenario)]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"{scenario}: ok\n"
    resolved = tmp_path / "r.toml"
    resolved.write_text(captured.out, encoding="utf-8")
    assert main(["validate", "--resolved", str(resolved)]) == 0  # a scenario file, the same one
    assert capsys.readouterr().out == captured.out


@pytest.mark.parametrize("argv", [["validate", "--resolved", "SCENARIO"], ["--help"], ["cache", "info"]])
def test_output_read_by_nobody_ends_the_command_quietly(argv: list[str], tmp_path: Path) -> None:
    """`fairstream ... | head -1` where head has gone: exit 141 as after SIGPIPE, and no message
    about a broken pipe (nor after --help, which exits from the argument parser)."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    argv = [str(scenario) if a == "SCENARIO" else a for a in argv]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    env = {**os.environ, "FAIRSTREAM_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "fairstream", *argv]
    try:
        proc = subprocess.run(command, stdout=write, stderr=subprocess.PIPE, env=env, check=False)
    finally:
        os.close(write)
    said = proc.stderr.decode()
    assert "pipe" not in said.lower() and "Exception" not in said, said
    # the argument parser drops what it cannot write of the help, and exits with its own 0
    assert proc.returncode == (0 if argv == ["--help"] else 141), said


def test_output_that_cannot_be_written_is_one_error_and_none_is_no_error(tmp_path: Path) -> None:
    """A full disk under the output (`/dev/full`) is one error line, exit 1, after the argument
    parser's own output too; a command started with its output closed says nothing and
    succeeds, as before it flushed its output itself."""
    env = {**os.environ, "FAIRSTREAM_CACHE": str(tmp_path / "cache")}
    for argv in (["cache", "info"], ["--version"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [sys.executable, "-m", "fairstream", *argv],
                stdout=full,
                stderr=subprocess.PIPE,
                env=env,
                check=False,
            )
        said = proc.stderr.decode()
        assert proc.returncode == 1 and said.count("\n") == 1 and "No space left on device" in said, said
    proc = subprocess.run(
        [sys.executable, "-m", "fairstream", "cache", "info"],
        preexec_fn=lambda: os.close(1),  # noqa: PLW1509 (a closed standard output, as `>&-`)
        stderr=subprocess.PIPE,
        env=env,
        check=False,
    )
    assert (proc.returncode, proc.stderr.decode()) == (0, "")


def test_warnings_are_shown_plainly_by_one_wrapper_however_many_commands_ran(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`main` in one interpreter, again and again (a notebook, a test suite): fairstream's
    warnings are shown by one wrapper of Python's `showwarning`, not by one more each time."""
    import warnings

    from fairstream.cache import CacheWriteWarning

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # put back after the test
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    assert main(["validate", str(scenario)]) == 0
    first = warnings.showwarning
    for _ in range(3):
        assert main(["validate", str(scenario)]) == 0
    assert warnings.showwarning is first
    capsys.readouterr()
    warnings.showwarning(CacheWriteWarning("the cache is full"), CacheWriteWarning, "x.py", 1)
    assert capsys.readouterr().err == "the cache is full\n"
