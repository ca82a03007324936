"""Today's TCP in Python: RFC 9438's response function and its Monte Carlo under Bernoulli loss
(`fairstream.reproduce.todays_tcp`, bound from the core), the scenario keys reaching the
simulator (SACK blocks and timestamps on the wire, the linux preset), and the ns-3 twin's mapping
of SACK, CUBIC and BBR."""

from __future__ import annotations

import pytest
from conftest import small_scenario
from fairstream import bench, bench_ns3, run
from fairstream.bench import BENCHMARKS, run_fairstream, scenario_text, worker_summary
from fairstream.reproduce.todays_tcp import response_function, response_under_bernoulli_loss

needs_ns3 = pytest.mark.skipif(
    not bench_ns3.available(), reason=f"ns-3 is not installed ({bench_ns3.INSTALL_HINT})"
)


def test_the_response_models_reach_python_with_rfc_9438s_constants() -> None:
    # The models and their tests live in fairstream_metrics::cubic_model; this checks the binding:
    # RFC 9438 Table 1's point at 1e-4 and 0.1 s, the Monte Carlo's defaults (C 0.4, β 0.7, seed
    # 1) and that a seed gives one number.
    assert response_function(1e-4, 0.1) == pytest.approx(187, rel=0.025)
    assert response_function(1e-4, 0.1, c=0.8) > response_function(1e-4, 0.1)
    far = response_under_bernoulli_loss(1e-3, 0.3, rounds=40_000)
    assert 1.1 < far / response_function(1e-3, 0.3) < 1.4
    assert far == response_under_bernoulli_loss(1e-3, 0.3, rounds=40_000, seed=1, c=0.4, beta=0.7)
    assert far != response_under_bernoulli_loss(1e-3, 0.3, rounds=40_000, seed=2)


def test_todays_tcp_benchmarks_run_their_variant() -> None:
    assert {"B1-SACK", "B2-SACK", "B1-CUBIC", "B2-CUBIC", "B2-BBR"} <= set(BENCHMARKS)
    assert not BENCHMARKS["B2-BBR"].default
    text = scenario_text(BENCHMARKS["B2-BBR"], "1s")
    assert 'control = "bbr"' in text and 'variant = "sack"' in text and 'name = "B2-BBR"' in text


def test_ns3_spec_maps_sack_cubic_and_bbr() -> None:
    b = BENCHMARKS["B1-CUBIC"]
    report = run_fairstream(scenario_text(b, "2s"), str(b.path()))
    spec = bench_ns3.spec_from_run(report["resolved_toml"], worker_summary(report))
    tcp = bench_ns3.settings(spec)["tcp"]
    assert tcp["TcpL4Protocol::SocketType"] == "ns3::TcpCubic"
    assert tcp["TcpL4Protocol::RecoveryType"] == "ns3::TcpPrrRecovery"
    assert tcp["TcpSocketBase::Sack"] is True and tcp["TcpCubic::HyStart"] is False
    assert tcp["TcpCubic::Beta"] == pytest.approx(0.7) and tcp["TcpCubic::C"] == pytest.approx(0.4)
    resolved = report["resolved_toml"]
    with pytest.raises(ValueError, match="HyStart"):
        bench_ns3.spec_from_run(resolved.replace("hystart = false", "hystart = true"), worker_summary(report))
    with pytest.raises(ValueError, match="prr = true"):
        bench_ns3.spec_from_run(resolved.replace("prr = true", "prr = false"), worker_summary(report))
    # BBR: TcpBbr, paced; timestamps shrink ns-3's segment by 12 bytes as ours.
    b = BENCHMARKS["B2-BBR"]
    report = run_fairstream(scenario_text(b, "1s", {"flow.0.timestamps": True}), str(b.path()))
    spec = bench_ns3.spec_from_run(report["resolved_toml"], worker_summary(report))
    tcp = bench_ns3.settings(spec)["tcp"]
    assert tcp["TcpL4Protocol::SocketType"] == "ns3::TcpBbr"
    assert tcp["TcpSocketState::EnablePacing"] is True
    assert tcp["TcpSocket::SegmentSize"] == 1448 and tcp["TcpSocketBase::Timestamp"] is True


def test_linux_preset_flows_carry_options_on_the_wire() -> None:
    doc = small_scenario(duration="5s", udp_rate="0.5Mbps")
    doc["flow"][0] = {k: v for k, v in doc["flow"][0].items() if k != "packet_size"} | {"preset": "linux"}
    result = run(doc)
    resolved = result.resolved_toml
    for line in ('variant = "sack"', 'control = "cubic"', 'delayed_ack = "40ms"', "timestamps = true"):
        assert line in resolved
    tcp = next(f for f in result.summary["flows"] if f["name"] == "tcp")
    # 1448 bytes of data in each 1500-byte packet; the ACKs (52 bytes and more) are not counted.
    assert 0 < tcp["goodput_bytes"] <= tcp["bytes_sent"] * 1448 / 1500


@needs_ns3
def test_ns3_agrees_on_b1_sack_shortened() -> None:
    (row,) = bench.run_benchmarks(["B1-SACK"], repeat=1, duration="20s", ns3=True)
    a = row["agreement"]
    assert a["agree"], a["failed"]
    assert row["ns3"]["settings"]["tcp"]["TcpSocketBase::Sack"] is True
