"""Every command, fed bad arguments, exits with the code of the one exit-code table (`EXIT_CODES`:
bad input is 2) and the one error style, and never shows a Python traceback.

The cases run in this process (an exception escaping `main` is what a user would see as a
traceback); a few also run as ``python -m fairstream`` to check the real entry point.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import cli, tomlio
from fairstream.cli import BAD_INPUT, EXIT_CODES, FAILED, main

COMMANDS = ["run", "validate", "sweep", "reproduce", "report", "bench", "send", "recv", "cache", "emulate"]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Good and bad inputs, by name."""
    good = tmp_path / "good.toml"
    good.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'name = "caf\xe9"\n')
    empty = tmp_path / "empty.toml"
    empty.write_bytes(b"")
    not_toml = tmp_path / "not-toml.toml"
    not_toml.write_text("[[[ this is not TOML\n", encoding="utf-8")
    invalid = tmp_path / "invalid.toml"
    invalid.write_text(tomlio.dumps(small_scenario() | {"duration": "1 fortnight"}), encoding="utf-8")
    a_file = tmp_path / "a-file"
    a_file.write_text("keep", encoding="utf-8")
    a_dir = tmp_path / "a-dir"
    a_dir.mkdir()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    no_json = tmp_path / "results-not-json"
    (no_json / "x").mkdir(parents=True)
    (no_json / "x" / "result.json").write_text("{not json", encoding="utf-8")
    no_fields = tmp_path / "results-no-fields"
    (no_fields / "x").mkdir(parents=True)
    (no_fields / "x" / "result.json").write_text(json.dumps({"id": "x"}), encoding="utf-8")
    a_list = tmp_path / "results-a-list"
    (a_list / "x").mkdir(parents=True)
    (a_list / "x" / "result.json").write_text("[1, 2]", encoding="utf-8")
    binary = tmp_path / "results-binary"
    (binary / "x").mkdir(parents=True)
    (binary / "x" / "result.json").write_bytes(b"\xff\xfe\x00")
    return {
        "good": good,
        "missing": tmp_path / "missing.toml",
        "latin1": latin1,
        "empty": empty,
        "not_toml": not_toml,
        "invalid": invalid,
        "file": a_file,
        "dir": a_dir,
        "under_file": a_file / "out",
        "dangling": dangling,
        "no_json": no_json,
        "no_fields": no_fields,
        "a_list": a_list,
        "binary": binary,
        "out": tmp_path / "out",
    }


#: (case id, argv with {name} placeholders for `files`). Every one is bad input: exit 2.
CASES: list[tuple[str, list[str]]] = [
    ("no command", []),
    ("unknown command", ["frobnicate"]),
    ("unknown option", ["--bogus"]),
    # run
    ("emulate: no scenario", ["emulate", "-o", "{out}"]),
    ("emulate: no -o", ["emulate", "{good}"]),
    ("emulate: missing file", ["emulate", "{missing}", "-o", "{out}"]),
    ("emulate: not TOML", ["emulate", "{not_toml}", "-o", "{out}"]),
    ("emulate: does not validate", ["emulate", "{invalid}", "-o", "{out}"]),
    ("emulate: seed -1", ["emulate", "{good}", "-o", "{out}", "--seed", "-1"]),
    ("emulate: -o a file", ["emulate", "{good}", "-o", "{file}"]),
    # The simulator's ns-2 TCP has no wire format: refused before anything is set up.
    ("emulate: a simulated tcp flow", ["emulate", "{good}", "-o", "{out}"]),
    ("run: no scenario", ["run", "-o", "{out}"]),
    ("run: no -o", ["run", "{good}"]),
    ("run: missing file", ["run", "{missing}", "-o", "{out}"]),
    ("run: a directory as scenario", ["run", "{dir}", "-o", "{out}"]),
    ("run: not UTF-8", ["run", "{latin1}", "-o", "{out}"]),
    ("run: empty file", ["run", "{empty}", "-o", "{out}"]),
    ("run: not TOML", ["run", "{not_toml}", "-o", "{out}"]),
    ("run: does not validate", ["run", "{invalid}", "-o", "{out}"]),
    ("run: seed -1", ["run", "{good}", "-o", "{out}", "--seed", "-1"]),
    ("run: seed 2**70", ["run", "{good}", "-o", "{out}", "--seed", str(2**70)]),
    ("run: seed not a number", ["run", "{good}", "-o", "{out}", "--seed", "1.5"]),
    ("run: -o empty", ["run", "{good}", "-o", ""]),
    ("run: -o a file", ["run", "{good}", "-o", "{file}"]),
    ("run: -o under a file", ["run", "{good}", "-o", "{under_file}"]),
    ("run: -o a dangling link", ["run", "{good}", "-o", "{dangling}"]),
    # validate
    ("validate: no files", ["validate"]),
    ("validate: missing file", ["validate", "{missing}"]),
    ("validate: a directory", ["validate", "{dir}"]),
    ("validate: not UTF-8", ["validate", "{latin1}"]),
    ("validate: an endless device", ["validate", "/dev/zero"]),
    ("validate: empty file", ["validate", "{empty}"]),
    ("validate: not TOML", ["validate", "{not_toml}"]),
    ("validate: does not validate", ["validate", "{good}", "{invalid}"]),
    # sweep
    ("sweep: no --set", ["sweep", "{good}", "-o", "{out}"]),
    ("sweep: missing file", ["sweep", "{missing}", "--set", "seed=[1, 2]", "-o", "{out}"]),
    ("sweep: a directory as scenario", ["sweep", "{dir}", "--set", "seed=[1, 2]", "-o", "{out}"]),
    ("sweep: not UTF-8", ["sweep", "{latin1}", "--set", "seed=[1, 2]", "-o", "{out}"]),
    ("sweep: --set without =", ["sweep", "{good}", "--set", "seed", "-o", "{out}"]),
    ("sweep: --set without values", ["sweep", "{good}", "--set", "seed=", "-o", "{out}"]),
    ("sweep: --set unknown index", ["sweep", "{good}", "--set", "flow.9.rate=1Mbps", "-o", "{out}"]),
    ("sweep: --set bad value", ["sweep", "{good}", "--set", "flow.1.rate=fast", "-o", "{out}"]),
    ("sweep: -j 0", ["sweep", "{good}", "--set", "seed=[1, 2]", "-o", "{out}", "-j", "0"]),
    ("sweep: -j x", ["sweep", "{good}", "--set", "seed=[1, 2]", "-o", "{out}", "-j", "x"]),
    ("sweep: seed -1", ["sweep", "{good}", "--set", "seed=[1, 2]", "-o", "{out}", "--seed", "-1"]),
    ("sweep: -o a file", ["sweep", "{good}", "--set", "seed=[1, 2]", "-o", "{file}"]),
    ("sweep: -o under a file", ["sweep", "{good}", "--set", "seed=[1, 2]", "-o", "{under_file}"]),
    # reproduce
    ("reproduce: unknown id", ["reproduce", "no-such-experiment", "-o", "{out}"]),
    ("reproduce: no -o", ["reproduce", "collapse"]),
    ("reproduce: --replicas -1", ["reproduce", "collapse", "-o", "{out}", "--replicas", "-1"]),
    ("reproduce: --replicas x", ["reproduce", "collapse", "-o", "{out}", "--replicas", "x"]),
    ("reproduce: -j 0", ["reproduce", "collapse", "-o", "{out}", "-j", "0"]),
    ("reproduce: -o a file", ["reproduce", "collapse", "-o", "{file}"]),
    ("reproduce: -o under a file", ["reproduce", "collapse", "-o", "{under_file}"]),
    # report
    ("report: no directory", ["report"]),
    ("report: missing directory", ["report", "{missing}"]),
    ("report: a file", ["report", "{file}"]),
    ("report: an empty directory", ["report", "{dir}"]),
    ("report: result.json not JSON", ["report", "{no_json}"]),
    ("report: result.json without fields", ["report", "{no_fields}"]),
    ("report: result.json a list", ["report", "{a_list}"]),
    ("report: result.json not UTF-8", ["report", "{binary}"]),
    # bench
    ("bench: unknown id", ["bench", "B99"]),
    ("bench: --repeat 0", ["bench", "B1", "--repeat", "0"]),
    ("bench: --repeat x", ["bench", "B1", "--repeat", "x"]),
    ("bench: --duration not a duration", ["bench", "B1", "--duration", "1 fortnight"]),
    ("bench: --duration negative", ["bench", "B1", "--duration=-1s"]),
    ("bench: --idle-wait x", ["bench", "B1", "--idle-wait", "x"]),
    ("bench: --json a directory", ["bench", "B1", "--json", "{dir}"]),
    ("bench: --json under a file", ["bench", "B1", "--json", "{under_file}"]),
    ("bench: --scaling with ids", ["bench", "B1", "--scaling"]),
    ("bench: --sweep with ids", ["bench", "B1", "--sweep"]),
    ("bench: --sweep 0", ["bench", "--sweep", "0"]),
    ("cache: no action", ["cache"]),
    ("cache: unknown action", ["cache", "clean"]),
    ("cache prune: nothing to prune", ["cache", "prune"]),
    ("cache prune: not an age", ["cache", "prune", "--older-than", "soon"]),
    ("cache prune: not a size", ["cache", "prune", "--max-size", "big"]),
    ("bench: --scaling-ns3 alone", ["bench", "--scaling-ns3"]),
    ("bench: --scaling-flows alone", ["bench", "--scaling-flows", "8,64"]),
    ("bench: --scaling-flows descending", ["bench", "--scaling", "--scaling-flows", "64,8"]),
    ("bench: --scaling-flows not counts", ["bench", "--scaling", "--scaling-flows", "many"]),
    ("bench: --scaling-flows zero", ["bench", "--scaling", "--scaling-flows", "0,8"]),
    # send, recv (bounded: nothing is sent before the arguments are checked)
    ("send: no --to", ["send", "--protocol", "tfrc", "-o", "{out}"]),
    (
        "send: unresolvable address",
        ["send", "--to", "no-such-host.invalid:9", "--protocol", "tfrc", "-o", "{out}"],
    ),
    ("send: unknown protocol", ["send", "--to", "127.0.0.1:9", "--protocol", "tcp", "-o", "{out}"]),
    (
        "send: bad duration",
        ["send", "--to", "127.0.0.1:9", "--protocol", "vtp", "--duration", "x", "-o", "{out}"],
    ),
    (
        "send: bad rate cap",
        ["send", "--to", "127.0.0.1:9", "--protocol", "vtp", "--rate-cap", "fast", "-o", "{out}"],
    ),
    ("send: a file as output", ["send", "--to", "127.0.0.1:9", "--protocol", "vtp", "-o", "{file}"]),
    ("recv: no --listen", ["recv", "-o", "{out}"]),
    ("recv: unresolvable address", ["recv", "--listen", "no-such-host.invalid:9", "-o", "{out}"]),
]


#: The last line of stderr after an error: ``fairstream [COMMAND]: error: ...`` (argparse's form,
#: after its usage line, and fairstream's own) or, for a scenario, ``FILE:LINE:COL: ...``.
ONE_ERROR = re.compile(r"^(fairstream( [a-z]+){0,2}: error: .+|.+:\d+:\d+: .+)$")


def call(argv: list[str]) -> int:
    """`main(argv)`, with argparse's SystemExit turned into its code."""
    try:
        return main(argv)
    except SystemExit as exit_info:
        return exit_info.code if isinstance(exit_info.code, int) else 1


def fill(argv: list[str], files: dict[str, Path]) -> list[str]:
    return [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]


def test_every_command_is_covered() -> None:
    covered = {argv[0] for _, argv in CASES if argv and not argv[0].startswith("-")}
    assert covered >= set(COMMANDS)
    commands = cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) == set(COMMANDS), "a new command needs its bad-input cases here"


@pytest.mark.parametrize(("case", "argv"), CASES, ids=[c for c, _ in CASES])
def test_bad_input_exits_2_with_one_error_line_and_no_traceback(
    case: str, argv: list[str], files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in files["out"].parent.iterdir())
    code = call(fill(argv, files))
    err = capsys.readouterr().err
    assert code == BAD_INPUT, f"{case}: exit {code}\n{err}"
    assert "Traceback" not in err
    assert ONE_ERROR.match(err.splitlines()[-1]), f"{case}: not the one error style\n{err}"
    assert sorted(p.name for p in files["out"].parent.iterdir()) == before, "bad input wrote nothing"
    assert files["file"].read_text(encoding="utf-8") == "keep"


def test_a_misspelt_id_is_named_with_the_one_it_probably_means(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert call(["reproduce", "colapse", "tpc-fairness", "zzz", "-o", str(files["out"])]) == BAD_INPUT
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "fairstream reproduce: error: unknown experiment(s) colapse (did you mean collapse?), "
        "tpc-fairness (did you mean tcp-fairness?), zzz; known: collapse, "
    ), err
    assert call(["bench", "B1-SAK", "B9"]) == BAD_INPUT  # B9 is as near to B1 as to B7: no guess
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "fairstream bench: error: unknown benchmark(s) B1-SAK (did you mean B1-SACK?), B9; "
    ), err


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_an_output_directory_that_cannot_be_written_is_bad_input(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    read_only = tmp_path / "read-only.json"
    read_only.write_text("kept", encoding="utf-8")
    read_only.chmod(0o400)
    if os.access(locked, os.W_OK):  # root writes anywhere: deny it as a read-only mount would
        real = os.access
        denied = (locked, read_only)
        monkeypatch.setattr(
            os,
            "access",
            lambda p, mode, **kw: False if Path(p) in denied and mode & os.W_OK else real(p, mode),
        )
    try:
        for argv in (
            ["run", str(files["good"]), "-o", str(locked / "out")],
            ["sweep", str(files["good"]), "--set", "seed=[1, 2]", "-o", str(locked / "out")],
            ["reproduce", "collapse", "-o", str(locked / "out")],
            ["report", str(locked)],
            ["bench", "B1", "--json", str(locked / "b.json")],
            ["bench", "--sweep", "10", "--no-wait", "--json", str(locked / "b.json")],
            ["bench", "--reproduce", "collapse", "--no-wait", "--json", str(locked / "b.json")],
        ):
            assert call(argv) == BAD_INPUT, argv
            err = capsys.readouterr().err
            assert "cannot write" in err and "Traceback" not in err, err
        assert list(locked.iterdir()) == []
        for argv in (["bench", "B1"], ["bench", "--sweep", "10", "--no-wait"]):
            assert call([*argv, "--json", str(read_only)]) == BAD_INPUT, argv
            err = capsys.readouterr().err
            assert f"{read_only}: cannot be written" in err and "Traceback" not in err, err
        assert read_only.read_text(encoding="utf-8") == "kept"
    finally:
        locked.chmod(0o700)


def test_errors_take_one_form(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert call(["run", str(files["dir"]), "-o", str(files["out"])]) == BAD_INPUT
    assert (
        capsys.readouterr().err
        == f"fairstream run: error: {files['dir']}: is a directory, not a scenario file\n"
    )
    assert call(["report", str(files["missing"])]) == BAD_INPUT
    assert capsys.readouterr().err.startswith("fairstream report: error: ")
    assert call(["sweep", str(files["good"]), "--set", "seed", "-o", "x"]) == BAD_INPUT
    assert capsys.readouterr().err.splitlines()[-1].startswith("fairstream sweep: error: ")
    assert call(["run", str(files["invalid"]), "-o", str(files["out"])]) == BAD_INPUT
    err = capsys.readouterr().err  # a scenario's error: located, field named
    assert err.startswith(f"{files['invalid']}:") and "duration" in err and "error" in err


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_ends_with_the_exit_code_table(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert call([command, "--help"] if command else ["--help"]) == 0
    out = capsys.readouterr().out
    assert EXIT_CODES in out
    for code in ("  0 ", "  1 ", "  2 ", "  130 "):
        assert code in out


def test_an_unexpected_exception_is_an_internal_error_without_traceback(
    monkeypatch: pytest.MonkeyPatch, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("something fairstream did not expect")

    monkeypatch.setattr("fairstream.api.run", broken)
    monkeypatch.delenv("FAIRSTREAM_TRACEBACK", raising=False)
    assert call(["run", str(files["good"]), "-o", str(files["out"])]) == FAILED
    err = capsys.readouterr().err
    assert err.startswith("fairstream run: internal error: TypeError: something") and "Traceback" not in err
    monkeypatch.setenv("FAIRSTREAM_TRACEBACK", "1")
    with pytest.raises(TypeError):
        main(["run", str(files["good"]), "-o", str(files["out"])])


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{dir}", "-o", "{out}"],
        ["validate", "{latin1}"],
        ["report", "{no_fields}"],
        ["bench", "B1", "--duration", "1 fortnight"],
    ],
)
def test_the_installed_command_shows_no_traceback(argv: list[str], files: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fairstream", *fill(argv, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == BAD_INPUT, proc.stderr
    assert "Traceback" not in proc.stderr and ONE_ERROR.match(proc.stderr.splitlines()[-1])


def test_docs_cli_md_has_the_table_and_the_limits_as_declared() -> None:
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "cli.md").read_text(encoding="utf-8")
    for code in (0, 1, 2, 130):
        assert f"\n| {code} | " in doc, f"docs/cli.md has no row for exit code {code}"
    record = (root / "crates" / "scenario" / "src" / "record.rs").read_text(encoding="utf-8")
    rows = re.search(r"const MAX_SERIES_ROWS: u128 = ([0-9_]+);", record)
    assert rows and int(rows.group(1)) == 2 * 10**7 and "2 × 10⁷ rows" in doc
    parse = (root / "crates" / "core" / "src" / "parse.rs").read_text(encoding="utf-8")
    for name, value, shown in (
        ("MAX_BITRATE_BPS", 1e13, "10 Tbit/s"),
        ("MAX_DATA_SIZE_BYTES", 1e12, "1 TB"),
        ("MAX_DURATION_S", 1e9, "10⁹ s"),
    ):
        declared = re.search(rf"const {name}: f64 = ([0-9e.]+);", parse)
        assert declared and float(declared.group(1)) == value and shown in doc, name
