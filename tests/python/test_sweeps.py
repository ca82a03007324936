"""Sweeps: parsing --set, the grid, and a parallel sweep through the CLI and the API."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import fairstream
import polars as pl
import pytest
from conftest import small_scenario
from fairstream import tomlio
from fairstream.cli import main
from fairstream.results import RunResult
from fairstream.sweeps import grid_points, parse_assignment, parse_value
from test_reproduce import _FAKE_SCENARIO


def test_parse_assignment_and_values() -> None:
    assert parse_assignment("flow.1.rate=1Mbps") == ("flow.1.rate", ["1Mbps"])
    assert parse_assignment('flow.1.rate=["1Mbps", "2Mbps"]') == ("flow.1.rate", ["1Mbps", "2Mbps"])
    assert parse_assignment("flow.0.window = [10, 20]") == ("flow.0.window", [10, 20])
    assert parse_assignment("x=10 Mbps") == ("x", ["10 Mbps"])  # a bare word, spaces and all
    assert parse_assignment('name="a,b"') == ("name", ["a,b"])  # a comma inside a string
    assert parse_assignment('name=["a,b", "c"]') == ("name", ["a,b", "c"])
    assert parse_assignment('record.pcap=[["N1->N2"]]') == ("record.pcap", [["N1->N2"]])  # a list value
    assert parse_assignment('s={ uniform = ["0s", "1s"] }') == ("s", [{"uniform": ["0s", "1s"]}])
    assert parse_value("true") is True
    assert parse_value("0.5") == 0.5
    assert parse_value("1%") == "1%"
    for bad in ("flow.0.rate", "=1", "x=", "x=[]", "x=[1", 'x="a'):
        with pytest.raises(ValueError):
            parse_assignment(bad)
    # TOML values no scenario holds: refused here, not failing later as "internal error".
    for bad, says in (
        ("seed=1979-05-27", "cannot write date value"),
        ("name=12:00:00", "cannot write time value"),
        ("x=[1, 1979-05-27T07:32:00Z]", "cannot write datetime value"),
        ("seed=99999999999999999999", "cannot write int value 99999999999999999999"),
    ):
        with pytest.raises(ValueError, match=says):
            parse_assignment(bad)
    assert parse_assignment('name="1979-05-27"') == ("name", ["1979-05-27"])


def test_the_old_comma_list_says_how_to_write_it() -> None:
    with pytest.raises(ValueError, match=r'TOML array, \["1Mbps", "2Mbps"\], or quote .* "1Mbps,2Mbps"'):
        parse_assignment("flow.1.rate=1Mbps,2Mbps")
    with pytest.raises(ValueError, match=r"TOML array, \[1, 2\]"):
        parse_assignment("seed=1,2")
    with pytest.raises(ValueError, match=r'quote its strings, \["1Mbps", "2Mbps"\]'):
        parse_assignment("flow.1.rate=[1Mbps, 2Mbps]")


def test_grid_is_the_cartesian_product() -> None:
    points = grid_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert len(points) == 6
    assert points[0] == {"a": 1, "b": "x"} and points[-1] == {"a": 2, "b": "z"}
    with pytest.raises(ValueError):
        grid_points({"a": []})


def test_sweep_api_runs_every_point(tmp_path: Path) -> None:
    result = fairstream.sweep(
        small_scenario(duration="2s"), {"flow.1.rate": ["0.5Mbps", "1Mbps"]}, tmp_path / "sw", jobs=2
    )
    flows = result.flows
    assert flows.height == 4  # 2 points x 2 flows
    assert set(flows["flow.1.rate"]) == {"0.5Mbps", "1Mbps"}
    udp = flows.filter(pl.col("name") == "udp").sort("point")
    assert udp["bytes_sent"][0] < udp["bytes_sent"][1]
    assert result.run(1).summary["duration_s"] == pytest.approx(2.0)


def test_sweep_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    rates = ["--set", "flow.1.rate=0.5Mbps", "--set", "flow.1.rate=1Mbps"]  # repeated: two values
    argv = ["sweep", str(scenario), *rates, "--set", "seed=[1, 2]", "-o", str(out)]
    assert main([*argv, "--jobs", "2", "--quiet"]) == 0
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["grid"] == {"flow.1.rate": ["0.5Mbps", "1Mbps"], "seed": [1, 2]}
    assert len(meta["points"]) == 4
    assert [RunResult(out / p["dir"]).summary["seed"] for p in meta["points"]] == [1, 2, 1, 2]
    assert "4 runs" in capsys.readouterr().out


def test_sweep_cli_value_with_a_comma(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    argv = ["sweep", str(scenario), "--set", 'description=["a, b", "c,d,e"]', "-o", str(out), "-q", "-j", "1"]
    assert main(argv) == 0
    points = json.loads((out / "sweep.json").read_text())["points"]
    assert [p["overrides"] for p in points] == [{"description": "a, b"}, {"description": "c,d,e"}]
    resolved = [tomlio.loads(RunResult(out / p["dir"]).resolved_toml) for p in points]
    assert [r["description"] for r in resolved] == ["a, b", "c,d,e"]  # reached the scenario whole


def test_sweep_cli_old_comma_syntax_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    with pytest.raises(SystemExit) as exit:
        main(["sweep", str(scenario), "--set", "seed=1,2", "-o", str(tmp_path / "sw")])
    assert exit.value.code == 2
    assert "TOML array, [1, 2]" in capsys.readouterr().err
    assert not (tmp_path / "sw").exists()


def test_sweep_with_a_bad_point_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    argv = ["sweep", str(scenario), "--set", 'flow.1.rate=["1Mbps", "fast"]', "-o", str(out), "--quiet"]
    assert main(argv) == 2
    assert "fast" in capsys.readouterr().err
    assert not out.exists()
    assert main(["sweep", str(scenario), "--set", "flow.9.rate=1Mbps", "-o", str(out), "--quiet"]) == 2
    assert not out.exists()


def test_scheduler_without_dask_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if dask were not installed
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    argv = [
        "sweep",
        str(scenario),
        "--set",
        "seed=[1, 2]",
        "-o",
        str(tmp_path / "sw"),
        "--scheduler",
        "tcp://x:1",
    ]
    assert main(argv) == 1
    assert "dask" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_bad_input_named_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dask.distributed")
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "1s")  # 30 s by default
    import dask.config

    dask.config.refresh()  # read the variable now: dask read the environment when imported
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    argv = ["sweep", str(scenario), "--set", "seed=[1, 2]", "-o", str(out), "-q", "--scheduler", address]
    try:
        code = main(argv)
    finally:
        monkeypatch.delenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT")
        dask.config.refresh()
    err = capsys.readouterr().err
    assert (
        code == 2 and f"cannot reach the Dask scheduler at {address} (" in err and "Traceback" not in err
    ), err
    assert not out.exists()


def test_a_scenario_warning_is_shown_once_for_the_points_it_concerns(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The base scenario's warning with its line; the points' own, where they differ from it,
    once for all of them (a point's line would be one of its own TOML's); none from the
    workers, whose runs the planning validated."""
    doc = small_scenario(duration="2s")
    doc["flow"][1]["start"] = "3s"  # after the end of the run: never sends
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(doc), encoding="utf-8")
    out = tmp_path / "sw"
    assert main(["sweep", str(scenario), "--set", "seed=[1, 2, 3, 4]", "-o", str(out), "-q"]) == 0
    lines = [line for line in capfd.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and re.match(
        rf"{re.escape(str(scenario))}:\d+:\d+: field `flow\[1\]\.start`", lines[0]
    )
    argv = [
        "sweep",
        str(scenario),
        "--set",
        'duration=["1s", "5s"]',
        "--set",
        "seed=[1, 2]",
        "-o",
        str(out),
    ]
    assert main([*argv, "-q", "--force"]) == 0
    lines = [line for line in capfd.readouterr().err.splitlines() if line]
    assert len(lines) == 2, lines
    assert lines[1] == (
        f"{scenario}: field `flow[1].start`: 3s is not before the end of the run (1s): it will never send "
        "(2 of 4 points: duration=1s, seed=1; duration=1s, seed=2)"
    ), lines


def test_sweep_on_a_dask_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    scenario, grid = small_scenario(duration="1s"), {"flow.1.rate": ["0.5Mbps", "1Mbps"]}
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        result = fairstream.sweep(scenario, grid, tmp_path / "sw", scheduler=cluster.scheduler_address)
    local = fairstream.sweep(scenario, grid, tmp_path / "local")
    assert result.flows.drop("point").equals(local.flows.drop("point"))


DOCS = Path(__file__).resolve().parents[2] / "docs" / "sweeps.md"


def test_the_docs_example_runs_as_documented(tmp_path: Path) -> None:
    """docs/sweeps.md's command, on the README's scenario: four points, and what the page says
    they show (a window of 20 holds the flows to ~3.3 Mbit/s, 1000 fills the link)."""
    from test_readme import readme_scenario

    text = DOCS.read_text(encoding="utf-8")
    command = re.search(r"```sh\n(fairstream sweep .*?)```", text, flags=re.S).group(1)
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[:3] == ["fairstream", "sweep", "scenario.toml"]
    (tmp_path / "scenario.toml").write_text(readme_scenario(), encoding="utf-8")
    argv[2] = str(tmp_path / "scenario.toml")
    argv[argv.index("-o") + 1] = str(tmp_path / "sweep-out")
    assert main([*argv[1:], "-q", "-j", "1"]) == 0
    flows = pl.read_parquet(tmp_path / "sweep-out" / "data" / "flow_summary.parquet")
    total = flows.group_by("topology.bottleneck.rate", "flow.0.window").agg(pl.col("throughput_bps").sum())
    mbps = {(r[0], r[1]): r[2] / 1e6 for r in total.iter_rows()}
    assert set(mbps) == {("5Mbps", 20), ("5Mbps", 1000), ("11Mbps", 20), ("11Mbps", 1000)}
    assert 3.0 < mbps["5Mbps", 20] < 3.6 and 3.0 < mbps["11Mbps", 20] < 3.6
    assert mbps["5Mbps", 1000] > 0.9 * 5 and mbps["11Mbps", 1000] > 0.9 * 11


def test_every_set_in_the_docs_parses() -> None:
    examples = re.findall(r"--set '([^']+)'", DOCS.read_text(encoding="utf-8"))
    assert len(examples) >= 5
    for example in examples:
        path, values = parse_assignment(example)
        assert path and values


def test_relative_traces_are_found_from_the_scenarios_directory_whatever_the_points_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A point's label ("s.toml with flow.0.rate=1 Mbit/s") names no directory: a relative
    trace, in the file or set by the sweep, is still taken from the scenario file's."""
    home = tmp_path / "study"
    (home / "clips").mkdir(parents=True)
    for name, size in (("a.csv", 1000), ("b.csv", 1200)):
        (home / "clips" / name).write_text(
            "time,type,bytes\n" + "".join(f"{i / 25},{'IPPP'[i % 4]},{size}\n" for i in range(50)),
            encoding="utf-8",
        )
    text = (
        'name = "clip"\nduration = "2s"\n[topology]\nnodes = ["a", "b"]\n[[topology.link]]\n'
        'between = ["a", "b"]\nrate = "10Mbps"\ndelay = "20ms"\n'
        '[[flow]]\nprotocol = "cbr"\nfrom = "a"\nto = "b"\nrate = "1Mbps"\n'
        '[[flow]]\nprotocol = "mpegapp"\nfrom = "a"\nto = "b"\ntrace = "clips/a.csv"\n'
    )
    (home / "s.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the scenario's directory
    result = fairstream.sweep(
        "study/s.toml",
        {"flow.0.rate": ["1 Mbit/s", "2 Mbit/s"], "flow.1.trace": ["clips/a.csv", "clips/b.csv"]},
        tmp_path / "out",
        jobs=1,
    )
    assert [p["overrides"]["flow.1.trace"] for p in result.points] == ["clips/a.csv", "clips/b.csv"] * 2
    sent = result.flows.filter(pl.col("name") == "mpegapp1").sort("point")["bytes_sent"].to_list()
    assert len(sent) == 4 and sent[0] < sent[1] and sent[2] < sent[3]  # b's frames are larger


@pytest.mark.parametrize(
    ("grid", "says"),
    [
        ({"flow.0.rate": ["1Mbps", "3Mbps"], "flow.00.rate": ["2Mbps"]}, "name the same field"),
        ({"flow.0": [{"protocol": "cbr"}], "flow.0.rate": ["1Mbps"]}, "lies inside `flow.0`"),
        ({"topology.bottleneck.rate": ["1Mbps"], "topology": [{}]}, "lies inside `topology`"),
    ],
)
def test_paths_that_name_one_field_twice_are_refused(grid: dict, says: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=says):
        fairstream.sweep(small_scenario(duration="1s"), grid, tmp_path / "out", jobs=1)
    assert not (tmp_path / "out").exists()
    assert fairstream.sweep(
        small_scenario(duration="1s"),
        {"flow.0.window": [10], "flow.1.rate": ["1Mbps"]},
        tmp_path / "ok",
        jobs=1,
    ).points


#: test_reproduce's one-CBR-flow scenario with a rate that does not parse, and a second flow.
_BAD_RATE = _FAKE_SCENARIO.replace('rate = "100kbps"', 'rate = "fast"') + (
    '\n[[flow]]\nprotocol = "cbr"\nfrom = "n0"\nto = "n1"\nrate = "100kbps"\n'
)
#: The line of the bad rate in it.
_BAD_LINE = _BAD_RATE.splitlines().index('rate = "fast"') + 1


def test_a_field_every_point_sets_need_not_be_valid_in_the_scenario_file(tmp_path: Path) -> None:
    """The points decide: a fault of the file that every point overrides does not stop the sweep;
    one the points keep is named at its line of the file, not at a point's; a point's own fault is
    the point's."""
    base = tmp_path / "s.toml"
    base.write_text(_BAD_RATE, encoding="utf-8")
    result = fairstream.sweep(base, {"flow.0.rate": ["1Mbps", "2Mbps"]}, tmp_path / "ok", jobs=1)
    sent = result.flows.filter(pl.col("flow_id") == 0).sort("point")["bytes_sent"].to_list()
    assert len(sent) == 2 and sent[0] < sent[1]
    in_the_file = re.escape(f"{base}:{_BAD_LINE}:8: field `flow[0].rate`: `fast`")
    with pytest.raises(fairstream.ScenarioError, match=in_the_file):
        fairstream.sweep(base, {"flow.1.rate": ["1Mbps", "2Mbps"]}, tmp_path / "kept", jobs=1)
    with pytest.raises(fairstream.ScenarioError, match=re.escape(f"{base} with flow.0.rate=slow:")):
        fairstream.sweep(base, {"flow.0.rate": ["1Mbps", "slow"]}, tmp_path / "point", jobs=1)
    base.write_text(_BAD_RATE.replace('"fast"', '"fast'), encoding="utf-8")
    with pytest.raises(fairstream.ScenarioError, match=re.escape(f"{base}:{_BAD_LINE}:") + ".*invalid TOML"):
        fairstream.sweep(base, {"flow.0.rate": ["1Mbps"]}, tmp_path / "toml", jobs=1)
    assert not any((tmp_path / d).exists() for d in ("kept", "point", "toml"))
