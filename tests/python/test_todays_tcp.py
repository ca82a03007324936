"""Today's TCP in Python: RFC 9438's response function and its Monte Carlo under Bernoulli loss
(`fairstream.reproduce.todays_tcp`), the scenario keys reaching the simulator (SACK blocks and
timestamps on the wire, the linux preset), and the ns-3 twin's mapping of SACK, CUBIC and BBR."""

from __future__ import annotations

import pytest
from conftest import small_scenario
from fairstream import bench, bench_ns3, run
from fairstream.bench import BENCHMARKS, run_fairstream, scenario_text, worker_summary
from fairstream.reproduce.todays_tcp import response_function, response_under_bernoulli_loss

needs_ns3 = pytest.mark.skipif(
    not bench_ns3.available(), reason=f"ns-3 is not installed ({bench_ns3.INSTALL_HINT})"
)


def test_response_function_is_rfc_9438s_table_1() -> None:
    # RFC 9438 Table 1 (RTT 0.1 s, C = 0.4): the Reno-friendly region at 1e-2 and 1e-3 (the
    # table's Reno column takes 1.2/√p where we take √(3/(2p)) = 1.225/√p), CUBIC's curve below.
    for p, avg in ((1e-2, 12), (1e-3, 38), (1e-4, 187), (1e-5, 1054), (1e-6, 5926)):
        assert response_function(p, 0.1) == pytest.approx(avg, rel=0.025)
    # Table 2 (RTT 0.01 s): Reno-friendly down to 1e-6 (1200 there).
    assert response_function(1e-6, 0.01) == pytest.approx(1200, rel=0.025)


def test_monte_carlo_under_bernoulli_loss_lies_above_the_deterministic_closed_form() -> None:
    # Random cycles reach the convex region and α = 1 more often: a higher mean window, by a
    # margin that grows with the RTT·(1/p) product, and the same seed gives the same number.
    near = response_under_bernoulli_loss(1e-2, 0.02, rounds=40_000)
    far = response_under_bernoulli_loss(1e-3, 0.3, rounds=40_000)
    assert 1.0 < near / response_function(1e-2, 0.02) < 1.15
    assert 1.1 < far / response_function(1e-3, 0.3) < 1.4
    assert far == response_under_bernoulli_loss(1e-3, 0.3, rounds=40_000)


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
