"""`fairstream run` and `validate` stay lean: no polars, pandas, numpy or matplotlib in the process.

Each command runs in a fresh interpreter; the test compares its modules before and after the
command, so that whatever the interpreter's start-up imported (site, .pth files) does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import tomlio

#: Modules the light commands must not import (the table-reading and plotting stack, process pools,
#: and the installed-distribution scan behind ``--version``).
HEAVY = (
    "polars",
    "pandas",
    "pyarrow",
    "numpy",
    "matplotlib",
    "concurrent.futures",
    "multiprocessing",
    "importlib.metadata",
)

_CHILD = """
import json, sys
before = set(sys.modules)
from fairstream.cli import main
code = main(sys.argv[1:])
new = sorted(set(sys.modules) - before)
print("@@" + json.dumps({"code": code, "new": new}))
"""


def run_cli(*argv: str) -> tuple[int, list[str], str]:
    """Runs ``main(argv)`` in a fresh interpreter; returns (exit code, modules it imported, stdout)."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, timeout=120, check=False
    )
    marker = [line for line in proc.stdout.splitlines() if line.startswith("@@")]
    assert marker, f"no result from the child process; stderr:\n{proc.stderr}"
    result = json.loads(marker[-1][2:])
    return result["code"], result["new"], proc.stdout


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    return path


def test_validate_imports_nothing_heavy(scenario_file: Path) -> None:
    code, modules, stdout = run_cli("validate", str(scenario_file))
    assert code == 0
    assert f"{scenario_file}: ok" in stdout
    assert "fairstream._core" in modules
    assert heavy(modules) == []


def test_run_imports_nothing_heavy_and_writes_results(scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, modules, stdout = run_cli("run", str(scenario_file), "-o", str(out), "-q")
    assert code == 0
    assert "tcp" in stdout and "udp" in stdout  # the flow table, printed from summary.json
    assert (out / "flow_series.parquet").is_file()
    assert (out / "summary.json").is_file()
    assert heavy(modules) == []


def test_bad_scenario_imports_nothing_heavy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "1 s s"\n', encoding="utf-8")
    code, modules, _ = run_cli("run", str(bad), "-o", str(tmp_path / "out"), "-q")
    assert code == 2
    assert heavy(modules) == []


def test_importing_the_package_is_light() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import fairstream, fairstream.cli, fairstream.api; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    argv = [sys.executable, "-c", code]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    modules = json.loads(proc.stdout.strip().splitlines()[-1])
    assert heavy(modules) == []
    assert "fairstream.sweeps" not in modules


def test_python_api_still_returns_polars_tables(scenario_file: Path) -> None:
    import fairstream
    import polars as pl

    result = fairstream.run(scenario_file)
    assert isinstance(result.flow_summary, pl.DataFrame)
    assert result.flow_summary.height == 2
    assert isinstance(result.link_summary, pl.DataFrame)
    assert result.metrics.schema["flow_id"] == pl.UInt32  # the empty table keeps its schema
    assert result.packets.is_empty()


def test_version_option_still_works() -> None:
    argv = [sys.executable, "-m", "fairstream", "--version"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0
    assert proc.stdout.startswith("fairstream ")


def test_a_reproductions_parent_leaves_the_tables_to_its_workers(tmp_path: Path, monkeypatch) -> None:
    """With workers, the parent drafts, plans and writes the report; polars, numpy and matplotlib
    are the evaluations', which run on the workers (`fairstream.lazy`: the experiments' modules
    name them without importing them)."""
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(tmp_path / "cache"))
    out, ids = str(tmp_path / "out"), ("mm-share", "tfrc-equation")
    code, modules, _ = run_cli("reproduce", "--quick", "-q", "-j", "2", "-o", out, *ids)
    assert code == 0
    assert (tmp_path / "out" / "mm-share" / "result.json").is_file()
    assert "fairstream.reproduce.paper001" in modules  # the experiments' modules were imported
    assert [m for m in heavy(modules) if m.split(".")[0] in ("polars", "numpy", "matplotlib")] == []


def test_a_module_named_for_first_use_is_imported_when_first_read(tmp_path: Path, monkeypatch) -> None:
    from fairstream.lazy import on_first_use

    (tmp_path / "first_use_probe.py").write_text("import sys\nVALUE = 42\nsys.modules[__name__].loads = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "first_use_probe", raising=False)
    probe = on_first_use("first_use_probe")
    assert "first_use_probe" not in sys.modules
    assert probe.VALUE == 42
    real = sys.modules["first_use_probe"]
    assert real is not probe and real.loads == 1
    assert probe.__dict__["VALUE"] == 42  # later reads are plain lookups, the module imported once
    with pytest.raises(AttributeError):
        _ = probe.missing
    monkeypatch.delitem(sys.modules, "first_use_probe")
