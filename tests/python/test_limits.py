"""A run estimated to need more memory than it may use is refused before it starts: by the API,
the CLI, sweeps and reproductions, with the file, line and field behind the estimate; the limit
is the user's (``max_memory``, ``--max-memory``) or the memory available."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fairstream import ScenarioError, _core, cli, run, sweep
from fairstream.api import memory_limit
from fairstream.tomlio import dumps


def traced(doc: dict[str, Any], duration: str = "1000s") -> dict[str, Any]:
    doc = {**doc, "duration": duration}
    doc["record"] = {"interval": duration, "packets": True}
    return doc


def test_a_run_over_the_limit_is_refused_before_it_writes(tmp_path: Path, scenario: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError) as err:
        run(traced(scenario), output_dir=tmp_path / "out", max_memory="10MB")
    message = str(err.value)
    assert "field `record.packets`" in message and "the per-packet trace" in message, message
    assert "more than the 10.0 MB limit" in message, message
    assert not (tmp_path / "out").exists()


def test_the_same_run_within_the_limit_runs_and_reports_its_estimate(scenario: dict[str, Any]) -> None:
    sim = _core.Simulation(dumps(scenario), "small.toml", None, 10**9)
    estimate = sim.estimate
    assert estimate["bytes"] == pytest.approx(sum(estimate["parts"].values()))
    assert set(estimate["parts"]) == {"nodes", "links", "flows", "packets", "series", "trace", "metrics"}
    assert estimate["parts"]["trace"] == 0
    while not sim.advance(sim.duration_s):
        pass
    assert 0 < sim.events <= estimate["events"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "lots", "-1GB", "1e30TB"])
def test_a_memory_limit_must_be_a_size(bad: object) -> None:
    with pytest.raises(ValueError, match="memory"):
        memory_limit(bad)  # type: ignore[arg-type]


def test_memory_limits_parse_with_units() -> None:
    assert memory_limit("8GB") == 8 * 10**9
    assert memory_limit("512MiB") == 512 * 2**20
    assert memory_limit(4096) == 4096
    assert memory_limit(None) is None
    assert _core.available_memory()[0] > 0


def test_cli_refuses_a_run_over_the_limit(
    tmp_path: Path, scenario: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "traced.toml"
    path.write_text(dumps(traced(scenario)), encoding="utf-8")
    code = cli.main(["run", str(path), "-o", str(tmp_path / "out"), "--max-memory", "10MB", "-q"])
    err = capsys.readouterr().err
    assert code != 0 and f"{path}:" in err and "record.packets" in err and "--max-memory" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cli_takes_max_memory_as_a_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["run", "x.toml", "-o", str(tmp_path / "o"), "--max-memory", "lots"])
    assert exit.value.code == 2
    assert "not a memory size" in capsys.readouterr().err


def test_a_sweep_point_over_the_limit_is_refused_before_any_run(
    tmp_path: Path, scenario: dict[str, Any]
) -> None:
    doc = traced(scenario, "10s")
    with pytest.raises(ScenarioError, match="record.packets"):
        sweep(doc, {"duration": ["1s", "1000s"]}, tmp_path / "sweep", jobs=1, max_memory="10MB")
    assert not (tmp_path / "sweep").exists()
