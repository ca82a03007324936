"""Scenario inputs (path, text, dict) and dotted-path overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import scenario, tomlio


def test_load_accepts_path_text_and_dict(tmp_path: Path) -> None:
    doc = small_scenario()
    text = tomlio.dumps(doc)
    file = tmp_path / "s.toml"
    file.write_text(text, encoding="utf-8")
    assert scenario.load(file) == (text, str(file))
    assert scenario.load(str(file)) == (text, str(file))
    assert scenario.load(text) == (text, scenario.TEXT_FILENAME)
    assert scenario.load(doc) == (text, scenario.DICT_FILENAME)
    assert scenario.to_dict(file) == doc


def test_load_missing_file() -> None:
    with pytest.raises(FileNotFoundError):
        scenario.load("no/such/file.toml")
    with pytest.raises(TypeError):
        scenario.load(42)  # type: ignore[arg-type]


def test_overrides_set_dotted_paths_on_a_copy() -> None:
    doc = small_scenario()
    out = scenario.with_overrides(
        doc, {"flow.1.rate": "2Mbps", "topology.link.2.queue.limit": "5 packets", "record.metrics": True}
    )
    assert out["flow"][1]["rate"] == "2Mbps"
    assert out["topology"]["link"][2]["queue"]["limit"] == "5 packets"
    assert out["record"]["metrics"] is True
    assert doc["flow"][1]["rate"] == "1Mbps"  # the original is untouched


def test_overrides_create_missing_tables() -> None:
    out = scenario.with_overrides({"name": "x"}, {"record.interval": "1s"})
    assert out == {"name": "x", "record": {"interval": "1s"}}


@pytest.mark.parametrize("path", ["flow.5.rate", "flow.x.rate", "name.sub", "", "flow..rate"])
def test_bad_override_paths(path: str) -> None:
    with pytest.raises(ValueError):
        scenario.with_overrides(small_scenario(), {path: 1})


def test_copy_doc_is_a_deep_copy() -> None:
    import datetime

    day = datetime.date(2026, 11, 28)
    doc = {"a": {"b": [1, {"c": "x"}], "t": (1, [2])}, "d": day, "f": 0.5, "n": None}
    copy = scenario.copy_doc(doc)
    assert copy == doc
    copy["a"]["b"][1]["c"] = "y"
    copy["a"]["b"].append(3)
    copy["a"]["t"][1].append(4)
    assert doc == {"a": {"b": [1, {"c": "x"}], "t": (1, [2])}, "d": day, "f": 0.5, "n": None}
    assert type(copy["a"]["t"]) is tuple
