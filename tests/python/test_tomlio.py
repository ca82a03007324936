"""The TOML writer (the core's, `_core.toml_dumps`): dicts (scenario-shaped and awkward ones)
survive a round trip through tomllib, and the simulator's own reader resolves a written scenario
exactly as it resolves the file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import _core, tomlio
from fairstream.scenario import packaged

PACKAGE_SCENARIOS = Path(__file__).resolve().parents[2] / "python" / "fairstream" / "scenarios"


def test_scenario_dict_round_trips() -> None:
    doc = small_scenario()
    doc["topology"]["link"][2]["schedule"] = [{"at": "60s", "rate": "5Mbps"}, {"at": "90s", "rate": "1Mbps"}]
    doc["flow"][0]["start"] = {"uniform": ["0s", "1s"]}
    doc["record"]["pcap"] = ["N1->N2"]
    text = tomlio.dumps(doc)
    assert tomlio.loads(text) == doc
    assert _core.validate(text, "written.toml")  # the simulator's reader takes the layout the writer chose


def test_helper_topology_round_trips() -> None:
    doc = {
        "name": "d",
        "duration": "1s",
        "topology": {
            "kind": "dumbbell",
            "hosts": 2,
            "access": {"rate": "100Mbps", "delay": "35ms"},
            "bottleneck": {"rate": "11Mbps", "queue": {"kind": "droptail", "limit": "99 packets"}},
        },
    }
    assert tomlio.loads(tomlio.dumps(doc)) == doc


def test_awkward_values_round_trip() -> None:
    doc = {
        "quote": 'say "hi"\\ now',
        "newline": "a\nb\tc\r\x01\x7f",
        "unicode": "µs – ≈ ×",
        "key with space": 1,
        "dotted.key": True,
        "": "empty key",
        "ints": [0, -1, 2**62],
        "floats": [0.1, 1e-5, -2.5e300, 1.0],
        "nested": [[1, 2], ["a"], []],
        "empty_table": {},
        "bools": [True, False],
        "mixed_in_table_array": {"t": [{"a": 1, "deep": {"x": [1, {"y": "z"}]}}, {"b": 2}]},
        "tuple": (1, "two"),
    }
    back = tomlio.loads(tomlio.dumps(doc))
    assert back == {**doc, "tuple": [1, "two"]}


def test_non_finite_floats() -> None:
    back = tomlio.loads(tomlio.dumps({"a": math.inf, "b": -math.inf, "c": math.nan}))
    assert back["a"] == math.inf and back["b"] == -math.inf and math.isnan(back["c"])


def test_unwritable_values_name_their_path() -> None:
    with pytest.raises(TypeError, match=r"flow\.0\.rate"):
        tomlio.dumps({"flow": [{"rate": None}]})
    with pytest.raises(TypeError, match=r"set value .* at x\b"):
        tomlio.dumps({"x": {1, 2}})
    with pytest.raises(TypeError, match=r"keys must be strings, got 1 at a\.b"):
        tomlio.dumps({"a": {"b": {1: "x"}}})
    with pytest.raises(TypeError, match=r"int value 18446744073709551616 at big\.1\b"):
        tomlio.dumps({"big": [1, 2**64]})  # TOML's integers are 64-bit


@pytest.mark.parametrize("path", sorted(PACKAGE_SCENARIOS.glob("*/*.toml")), ids=lambda p: p.name)
def test_packaged_scenarios_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    doc = tomlio.loads(text)
    written = tomlio.dumps(doc)
    assert tomlio.loads(written) == doc
    assert packaged(path.parent.name, path.name) == path
    # What every caller does (scenario dicts, sweeps, reproductions): the simulator reads the written
    # text into the very scenario it reads from the file.
    assert _core.validate(written, path.name) == _core.validate(text, path.name)


def test_shared_dumps_write_each_shared_table_once_and_load_the_same() -> None:
    from fairstream.scenario import with_overrides, with_overrides_shared

    base = small_scenario()
    before = tomlio.loads(tomlio.dumps(base))
    memo: dict[int, tuple[object, str]] = {}
    for overrides in ({"seed": 3}, {"flow.1.rate": "2Mbps", "duration": "2s"}, {"record.metrics": True}):
        shared = with_overrides_shared(base, overrides)
        text = tomlio.dumps_shared(shared, memo)
        assert tomlio.loads(text) == with_overrides(base, overrides)
        assert _core.validate(text, "shared.toml") == _core.validate(tomlio.dumps(shared), "plain.toml")
    assert base == before  # shared, never changed
    assert any(obj is base["topology"] for obj, _ in memo.values())  # written once, reused
    with pytest.raises(ValueError, match="no entry `9`"):
        with_overrides_shared(base, {"flow.9.rate": "1Mbps"})
