"""Quick reproductions of paper 004 (VTP: ``vtp-adapt``, ``vtp-friendly``, ``vtp-fair``), paper 002
(``cmp-solo``, ``cmp-multfrc-n``, ``cmp-fair``, ``cmp-friendly``, ``cmp-buffer``) and of the TFRC
validation ``tfrc-equation``: each evaluates into the rows, comparisons and checks it should and
redraws its figures, and a few shape properties the papers' conclusions rest on hold."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce.paper004 import as_protocol, tcp_beside_tcp, wireless_link, with_buffer, with_per
from fairstream.reproduce.rate_control_validation import tfrc_equation, time_average
from fairstream.reproduce.runner import reproduce
from fairstream.results import RunResult

#: Per experiment: (number of points, number of checks with a threshold, report-only checks).
EXPECTED = {
    "vtp-adapt": (6, 4, 1),
    # and VTP beside TCP at γ = 0.5 and 0.9; and the table again with TCP = the linux preset, reported
    "vtp-friendly": (18, 5, 5),
    "vtp-fair": (3, 6, 0),
    "cmp-solo": (12, 3, 0),
    "cmp-multfrc-n": (3, 4, 0),
    "cmp-fair": (6, 4, 2),
    "cmp-friendly": (24, 6, 12),  # and every point again with TCP = the linux preset, reported
    "cmp-buffer": (6, 1, 1),
    "tfrc-equation": (4, 4, 0),
}
IDS = list(EXPECTED)


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rate-control")
    reproduce(IDS, out, quick=True, quiet=True, replicas=0)
    return out


def result(out: Path, exp_id: str) -> dict[str, Any]:
    return json.loads((out / exp_id / "result.json").read_text(encoding="utf-8"))


def rows(out: Path, exp_id: str) -> list[dict[str, Any]]:
    return result(out, exp_id)["points"]


def test_registered() -> None:
    assert set(IDS) <= set(EXPERIMENTS)
    for exp_id in IDS:
        assert EXPERIMENTS[exp_id].scenario_path().is_file()


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_result_rows_checks_and_figures(reproduced: Path, exp_id: str) -> None:
    res = result(reproduced, exp_id)
    points, judged, reported = EXPECTED[exp_id]
    assert res["quick"] is True and res["published"] and res["comparison"]
    assert len(res["points"]) == points == len(res["runs"])
    assert (res["total"], res["reported"]) == (judged, reported)
    for check in res["checks"]:
        assert check["verdict"] in ("pass", "fail", "reported")
        assert (check["passed"] is None) == (check["verdict"] == "reported")
    for row in res["comparison"]:
        assert {"quantity", "ours", "published"} <= set(row)
    figures = EXPERIMENTS[exp_id].figures(res, reproduced / exp_id, reproduced / "figures")
    assert figures
    for fig in figures:
        assert fig.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.caption


def test_vtp_uses_more_of_the_available_bandwidth_than_tfrc_at_5_percent(reproduced: Path) -> None:
    u = {(r["protocol"], r["per"]): r["utilisation"] for r in rows(reproduced, "vtp-adapt")}
    assert u[("vtp", 0.05)] > u[("tfrc", 0.05)]
    assert u[("tfrc", 0.0)] > u[("tfrc", 0.05)]  # TFRC loses efficiency with errors


def test_tfrc_collapses_with_errors_when_alone(reproduced: Path) -> None:
    u = {(r["protocol"], r["per"]): r["utilisation"] for r in rows(reproduced, "cmp-solo")}
    assert u[("tfrc", 0.0)] > u[("tfrc", 0.01)] > u[("tfrc", 0.05)]
    assert u[("tfrc-wireless", 0.05)] > u[("tfrc", 0.05)]


def test_multfrc_opens_more_connections_at_5_percent(reproduced: Path) -> None:
    by = {r["per"]: r for r in rows(reproduced, "cmp-multfrc-n")}
    assert by[0.05]["n_end"] > by[0.0]["n_end"]
    assert by[0.0]["connections_max"] >= 1


def test_tcp_is_inefficient_at_5_percent(reproduced: Path) -> None:
    tcp = next(r for r in rows(reproduced, "vtp-friendly") if r["partner"] == "tcp" and r["per"] == 0.05)
    assert tcp["tcp_mbps"] + tcp["partner_mbps"] < 0.5 * 11


def test_tfrc_equation_rates_fall_with_loss(reproduced: Path) -> None:
    points = sorted(rows(reproduced, "tfrc-equation"), key=lambda r: r["per"])
    sent = [r["sent_Bps"] for r in points]
    assert sent == sorted(sent, reverse=True)
    for r in points:
        assert 0 < r["loss_event_rate"] <= r["per"] * 1.5
        assert 0.072 <= r["rtt_s"] < 0.2


def test_cmp_buffer_prints_table1_beside_ours(reproduced: Path) -> None:
    table = {(r["partner"], r["buffer"]): r for r in rows(reproduced, "cmp-buffer")}
    assert table[("vtp", 33)]["published_partner_mbps"] == 6.20
    assert table[("tfrc-wireless", 297)]["published_tcp_mbps"] == 6.20
    assert all(r["partner_mbps"] > 0 and r["tcp_mbps"] > 0 for r in table.values())


def test_tfrc_equation_function() -> None:
    # RFC 5348 §3.1 by hand: s = 956 B, R = 72 ms, p = 1 %, t_RTO = 4R.
    s, r, p = 956.0, 0.072, 0.01
    expected = s / (r * math.sqrt(2 * p / 3) + 4 * r * 3 * math.sqrt(3 * p / 8) * p * (1 + 32 * p * p))
    assert tfrc_equation(s, r, p) == pytest.approx(expected, rel=1e-9)
    assert tfrc_equation(s, r, 0.0) == math.inf


def test_time_average_of_a_step_function() -> None:
    # 1 from t = 0, 3 from t = 2: over [1, 4) the mean is (1·1 + 3·2) / 3.
    assert time_average([0.0, 2.0], [1.0, 3.0], 1.0, 4.0) == pytest.approx(7 / 3)
    assert math.isnan(time_average([5.0], [1.0], 0.0, 4.0))


def test_scenario_helpers_keep_placement_and_set_the_wireless_link() -> None:
    base = EXPERIMENTS["vtp-friendly"].base_scenario()
    assert "loss" not in wireless_link(with_per(base, 0.0))
    assert wireless_link(with_per(base, 0.05))["loss"] == {"kind": "bernoulli", "per": 0.05}
    assert wireless_link(with_buffer(base, 33))["queue"]["limit"] == "33 packets"
    tcp = next(f for f in base["flow"] if f["name"] == "tcp")
    swapped = as_protocol(tcp, "vtp", name="x")
    assert swapped["protocol"] == "vtp" and swapped["start"] == tcp["start"] and "window" not in swapped
    assert as_protocol(tcp, "tcp") == tcp


def test_tcp_beside_tcp_is_the_same_flow_with_its_partner_replaced() -> None:
    # Paper 004: TCP's throughput "if all flows were TCP (i.e., NP flows replaced by TCP)": the flow
    # named "tcp" of the TCP + TCP run, not the mean of it and its peer (which starts earlier).
    rows = [
        {"partner": "tcp", "per": 0.0, "tcp_mbps": 5.0, "partner_mbps": 5.6},
        {"partner": "vtp", "per": 0.0, "tcp_mbps": 4.8, "partner_mbps": 6.0},
    ]
    assert tcp_beside_tcp(rows, 0.0) == 5.0


def test_the_header_bytes_column_is_what_the_simulator_charges(reproduced: Path) -> None:
    # The flow summary's header_bytes (what the TFRC notes and the equation's s read) against the
    # run's own wire and payload bytes.
    res = result(reproduced, "tfrc-equation")
    run = RunResult(reproduced / "tfrc-equation" / res["runs"]["per-0.01"])
    flow = run.flow_summary.row(0, named=True)
    header = (flow["bytes_delivered"] - flow["goodput_bytes"]) / flow["packets_delivered"]
    assert header == flow["header_bytes"] == 52
    assert flow["payload_bytes"] + flow["header_bytes"] == flow["packet_size_bytes"]


def test_papers_002_and_004_run_ns2_tfrc_where_the_authors_did() -> None:
    # Paper 002's footnote 2: TFRC Wireless on ns-2.1b8a, MULTFRC on ns-2.26 (ns-2's TFRC agent);
    # its and paper 004's plain TFRC too. The TFRC validation keeps RFC 5348.
    tfrc_like = {"tfrc", "tfrc-wireless", "multfrc"}
    seen = set()
    for exp_id in ("vtp-adapt", "cmp-solo", "cmp-multfrc-n", "cmp-fair", "cmp-friendly", "cmp-buffer"):
        for quick in (True, False):
            for point in EXPERIMENTS[exp_id].points(quick):
                for flow in point.scenario["flow"]:
                    if flow.get("protocol") in tfrc_like:
                        assert flow.get("preset") == "ns2", (exp_id, point.key, flow)
                        seen.add(flow["protocol"])
    assert seen == tfrc_like
    for point in EXPERIMENTS["tfrc-equation"].points(False):
        assert point.scenario["flow"][0].get("preset", "rfc5348") == "rfc5348"


def test_vtp_friendly_prints_the_sensitivity_to_gamma(reproduced: Path) -> None:
    res = result(reproduced, "vtp-friendly")
    gammas = {r.get("gamma") for r in res["points"] if r["partner"] == "vtp"}
    assert gammas == {0.5, 0.75, 0.9}
    rows = [c for c in res["comparison"] if "γ = 0.5 / 0.75 / 0.9" in c["quantity"]]
    assert len(rows) == 3 and all(len(r["ours"].split(" / ")) == 3 for r in rows)
    # The checks judge γ = 0.75 only: one check per PER for friendliness (and the linux preset's are
    # reported, not judged).
    judged = [c for c in res["checks"] if c["passed"] is not None]
    assert sum("TCP's throughput beside VTP" in c["description"] for c in judged) == 3
