"""`scenario.resolved.toml` loads back and reproduces the run bit for bit (a property test).

For every shipped scenario (shortened) and for generated variations of queues, loss models,
protocols, rates, delays, sizes, seeds, recorders and engine settings: resolve the scenario,
check that resolving the resolved text gives the same text (a fixed point), run both the
original and the resolved text, and compare every table byte for byte and the summary (all but
its wall-clock fields) value for value.

``FAIRSTREAM_PROPERTY_EXAMPLES`` sets how many variations are generated (default 20).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import fairstream
import pytest
from fairstream import tomlio
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FAIRSTREAM_PROPERTY_EXAMPLES", "20"))
SCENARIOS = Path(fairstream.__file__).parent / "scenarios"
SHIPPED = sorted(SCENARIOS.glob("*/*.toml"))

#: summary.json fields that measure the machine, not the run.
WALL_FIELDS = {"wall_time_s", "events_per_s"}


def assert_round_trip(scenario: dict[str, Any] | str, what: str) -> None:
    """Resolves `scenario`, reloads the resolved text, runs both and compares the results."""
    text = scenario if isinstance(scenario, str) else tomlio.dumps(scenario)
    resolved = fairstream.validate(text)
    assert fairstream.validate(resolved) == resolved, f"{what}: resolving twice changes the text"
    with tempfile.TemporaryDirectory(prefix="fairstream-roundtrip-") as tmp:
        _compare_runs(text, resolved, Path(tmp), what)


def _compare_runs(text: str, resolved: str, tmp: Path, what: str) -> None:
    """Runs `text` and its `resolved` form into `tmp` and compares every table, byte for byte."""
    original = fairstream.run(text, tmp / "original")
    again = fairstream.run(resolved, tmp / "again")
    assert again.resolved_toml == original.resolved_toml == resolved, what
    files = sorted(p.relative_to(original.output_dir) for p in original.output_dir.rglob("*") if p.is_file())
    assert files == sorted(
        p.relative_to(again.output_dir) for p in again.output_dir.rglob("*") if p.is_file()
    )
    for name in files:
        if name.suffix in {".parquet", ".pcap"}:
            a, b = (original.output_dir / name).read_bytes(), (again.output_dir / name).read_bytes()
            assert a == b, f"{what}: {name} differs between the scenario and its resolved form"
    strip = lambda s: {k: v for k, v in s.items() if k not in WALL_FIELDS}  # noqa: E731
    assert strip(again.summary) == strip(original.summary), what


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def shortened(path: Path, duration_s: float = 0.3) -> dict[str, Any]:
    """A shipped scenario cut to `duration_s`, its flows started within it and never stopped early,
    recording metrics and the packet trace (so more of the run is compared)."""
    doc = tomlio.loads(path.read_text(encoding="utf-8"))
    doc["duration"] = f"{duration_s}s"
    for flow in doc["flow"]:
        flow.pop("stop", None)
        start = flow.get("start")
        if isinstance(start, str):
            flow["start"] = "0s"
        elif isinstance(start, dict):
            flow["start"] = {"uniform": ["0s", f"{duration_s / 2}s"]}
    record = doc.setdefault("record", {})
    record.update({"metrics": True, "packets": True, "interval": f"{duration_s / 3}s"})
    return doc


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_shipped_scenario_round_trips_bit_for_bit(path: Path) -> None:
    doc = shortened(path)
    if any(f.get("protocol") == "linux-tcp" for f in doc["flow"]):
        # The kernel's TCP runs only in the emulator; its resolved form still loads back.
        resolved = fairstream.validate(doc)
        assert fairstream.validate(tomlio.loads(resolved)) == resolved
        return
    assert_round_trip(doc, str(path))


def test_the_shipped_list_is_found() -> None:
    assert len(SHIPPED) > 20, SHIPPED


QUEUES = [
    None,
    {"kind": "droptail"},
    {"kind": "droptail", "preset": "ns2", "limit": 8},
    {"limit": "12ms"},
    {"limit": "9KB"},
    {"kind": "red"},  # the ns2 preset: min_th, max_th and w_q resolve to "auto"
    {"kind": "red", "preset": "floyd-jacobson"},
    {"kind": "red", "preset": "ns2-classic", "gentle": False},
    {"kind": "red", "min_th": 2.5, "max_th": 7.25, "w_q": 0.01, "max_p": 0.3, "bytes": False},
    {"kind": "tbf", "rate": "700kbps", "burst": "4KB", "limit": "12KB"},
    {"kind": "tbf", "rate": "1Mbps", "burst": "3KB", "limit": "9KB", "peak_rate": "2Mbps", "mtu": "1500B"},
    {"kind": "fq"},
    {"kind": "fq", "quantum": "1000B", "flow_limit": 7, "limit": 30},
]


@st.composite
def losses(draw: st.DrawFn) -> dict[str, Any] | None:
    kind = draw(st.sampled_from(["none", "bernoulli", "ge", "absent"]))
    if kind == "absent":
        return None
    if kind == "none":
        return {"kind": "none"}
    if kind == "bernoulli":
        return {"per": draw(st.floats(0.0, 0.2))}
    return {
        "kind": "gilbert-elliott",
        "p_good_to_bad": draw(st.floats(0.0, 0.1)),
        "p_bad_to_good": draw(st.floats(0.05, 1.0)),
        "loss_bad": draw(st.floats(0.0, 1.0)),
    }


def rate(draw: st.DrawFn, low: float, high: float, unit: str = "Mbps") -> str:
    """A rate drawn as any float (its text must survive resolving exactly)."""
    return f"{draw(st.floats(low, high, allow_nan=False))!r}{unit}"


@st.composite
def flows(draw: st.DrawFn, i: int) -> dict[str, Any]:
    protocol = draw(st.sampled_from(["tcp", "cbr", "tfrc", "tfrc-wireless", "multfrc", "vtp"]))
    flow: dict[str, Any] = {"protocol": protocol, "from": "a", "to": "c", "name": f"f{i}"}
    if draw(st.booleans()):
        flow["packet_size"] = f"{draw(st.integers(200, 1500))}B"
    if draw(st.booleans()):
        flow["start"] = f"{draw(st.floats(0.0, 0.3))!r}s"
    if protocol == "tcp":
        flow["variant"] = draw(st.sampled_from(["reno", "newreno"]))
        control = draw(st.sampled_from(["aimd", "iiad", "sqrt", "binomial"]))
        flow["control"] = control
        if control == "binomial":
            flow.update({"k": draw(st.floats(0.0, 2.0)), "l": draw(st.floats(0.0, 1.0))})
        if draw(st.booleans()):
            flow["delayed_ack"] = draw(st.sampled_from([True, False, "40ms"]))
    elif protocol == "cbr":
        flow["rate"] = rate(draw, 0.05, 3.0)
    return flow


@st.composite
def variations(draw: st.DrawFn) -> dict[str, Any]:
    """Two hosts into a bottleneck: a random queue and loss model, random rates and delays."""
    bottleneck: dict[str, Any] = {
        "between": ["b", "c"],
        "rate": rate(draw, 0.5, 5.0),
        "delay": f"{draw(st.floats(0.1, 40.0))!r}ms",
    }
    queue = draw(st.sampled_from(QUEUES))
    if queue is not None:
        bottleneck["queue"] = queue
    loss = draw(losses())
    if loss is not None:
        bottleneck["loss"] = loss
    count = draw(st.integers(1, 3))
    doc: dict[str, Any] = {
        "name": "variation",
        "duration": "1s",
        "seed": draw(st.integers(0, 2**63 - 1)),
        "topology": {
            "nodes": ["a", "b", "c"],
            "link": [{"between": ["a", "b"], "rate": rate(draw, 5.0, 100.0), "delay": "2ms"}, bottleneck],
        },
        "flow": [draw(flows(i)) for i in range(count)],
        "record": {
            "interval": draw(st.sampled_from(["100ms", "250ms", "1s"])),
            "metrics": True,
            "packets": draw(st.booleans()),
            "link_series": draw(st.sampled_from([True, False, ["c->b", "b->c"], ["a->b"]])),
        },
        "engine": {
            "ties": draw(st.sampled_from(["random", "fifo"])),
            "perturb_delays": draw(st.sampled_from([0.0, 0.25, 0.5])),
        },
    }
    return doc


# The example: a RED queue under the ns2 preset, whose thresholds resolve to "auto".
RED_NS2 = {
    "name": "red-ns2",
    "duration": "1s",
    "topology": {
        "nodes": ["a", "b", "c"],
        "link": [
            {"between": ["a", "b"], "rate": "10Mbps", "delay": "2ms"},
            {"between": ["b", "c"], "rate": "1Mbps", "delay": "10ms", "queue": {"kind": "red"}},
        ],
    },
    "flow": [
        {"protocol": "tcp", "from": "a", "to": "c"},
        {"protocol": "cbr", "from": "a", "to": "c", "rate": "0.5Mbps"},
    ],
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # a non-TCP-compatible control is fine
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@example(doc=RED_NS2)
@given(doc=variations())
def test_generated_variations_round_trip_bit_for_bit(doc: dict[str, Any]) -> None:
    try:
        fairstream.validate(doc)
    except fairstream.ScenarioError:
        assume(False)  # refused variations are another test's subject (too many fail the health check)
    assert_round_trip(doc, tomlio.dumps(doc))


def test_the_red_ns2_preset_resolves_to_auto_and_loads_back() -> None:
    resolved = fairstream.validate(RED_NS2)
    assert 'min_th = "auto"' in resolved and 'w_q = "auto"' in resolved, resolved
    assert fairstream.validate(resolved) == resolved
