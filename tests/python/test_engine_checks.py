"""The engine checks (`fairstream.reproduce.engine_checks`): each experiment in quick mode through
the reproduce runner, and unit tests of their parts on made-up data: the FIFO audit (a late packet
is flagged, a back-to-back trace passes, the token-bucket, peak-rate and pause rules), the RTT-bias
exponent fit, TFRC loss events, timeout sequences, the PFTK formula and the tie statistics."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import fairstream
import polars as pl
import pytest
from fairstream import _core
from fairstream.cli import main
from fairstream.reproduce import EXPERIMENTS, audit, engine_checks
from fairstream.reproduce.audit import LinkModel, TokenBucket, audit_link
from fairstream.scenario import packaged, to_dict

IDS = [e.id for e in engine_checks.EXPERIMENTS]
MS = 1_000_000
US = 1_000


# --- the experiments, quick, through the runner ---------------------------------------------------


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("engine-checks")
    code = main(["reproduce", *IDS, "-o", str(out), "--quick", "--quiet", "--jobs", "2"])
    assert code in (0, 1)  # the per-experiment tests say which check failed
    return out


def result(out: Path, exp_id: str) -> dict[str, Any]:
    return json.loads((out / exp_id / "result.json").read_text(encoding="utf-8"))


def test_the_experiments_are_registered() -> None:
    for exp_id in IDS:
        assert EXPERIMENTS[exp_id] is next(e for e in engine_checks.EXPERIMENTS if e.id == exp_id)


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_experiment_meets_its_checks(reproduced: Path, exp_id: str) -> None:
    res = result(reproduced, exp_id)
    assert res["quick"] is True and res["points"] and res["comparison"] and res["published"]
    failed = [c for c in res["checks"] if c["passed"] is False]
    assert not failed, json.dumps(failed, indent=1)
    assert res["total"] >= 1


def test_quick_fifo_audit_audited_every_rule(reproduced: Path) -> None:
    rows = {r["run"]: r for r in result(reproduced, "fifo-audit")["points"]}
    assert set(rows) == set(engine_checks.AUDIT_VARIANTS)
    assert all(r["packets"] > 1000 and r["late"] == 0 and r["early"] == 0 for r in rows.values())
    assert rows["tbf"]["set_by_tokens"] > 0 and rows["pause"]["set_by_pause"] > 0
    assert rows["droptail"]["set_by_link"] > 0 and rows["droptail"]["set_by_arrival"] > 0


def test_quick_pftk_grid_reduces_the_trace_and_states_its_numbers(reproduced: Path) -> None:
    res = result(reproduced, "tcp-pftk-grid")
    assert len(res["points"]) == 8  # 2 variants x 2 x 2
    for row in res["points"]:
        assert row["loss_events"] >= 100 and row["losses"] >= row["loss_events"]
        assert row["p_events"] == pytest.approx(row["loss_events"] / row["packets_sent"])
        assert row["ratio"] == pytest.approx(row["send_pps"] / row["pftk_pps"])
    # the packet traces (over a GB in full) were read from the run cache; the output keeps none
    data = reproduced / "tcp-pftk-grid" / "data"
    assert set(res["runs"].values()) == {f"data/{key}" for key in res["runs"]}
    assert "packets" not in json.loads((data / "dataset.json").read_text())["kept"]
    assert not list((reproduced / "tcp-pftk-grid").rglob("packets.parquet"))
    table = res["data"]["tables"]["newreno"]
    assert table["p"] == list(engine_checks.PFTK_QUICK_P) and table["rtt_s"] == list(
        engine_checks.PFTK_QUICK_RTT
    )


def test_quick_rtt_bias_fits_every_run(reproduced: Path) -> None:
    rows = result(reproduced, "rtt-bias")["points"]
    assert {(r["queue"], r["ties"]) for r in rows} == {
        (q, t) for q in ("droptail", "red") for t in ("random", "fifo")
    }
    for r in rows:
        rtts = [r[f"rtt_ms_tcp{i}"] for i in range(4)]
        assert rtts == pytest.approx([20.0, 40.0, 80.0, 160.0])  # no perturbation in quick mode
        fitted = engine_checks.fit_exponent(rtts, [r[f"mbps_tcp{i}"] for i in range(4)])
        assert r["a"] == pytest.approx(fitted)


def test_quick_report_draws_the_figures(reproduced: Path) -> None:
    assert main(["report", str(reproduced)]) == 0
    html = (reproduced / "report.html").read_text(encoding="utf-8")
    assert "Figures failed" not in html
    for name in ("fifo-audit", "tcp-pftk-grid", "tcp-pftk-grid-diagnostics", "rtt-bias", "tie-neutrality"):
        assert (reproduced / "figures" / f"{name}.png").is_file(), name


# --- the FIFO audit on made-up traces ---------------------------------------------------------------


def trace(rows: list[tuple[int, int, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["t_ns", "packet_id", "event", "size"], orient="row")


ONE_MBPS = LinkModel("x", 1_000_000)  # 1000 B take 8 ms


def test_a_packet_held_back_beside_an_idle_link_is_late() -> None:
    a = audit_link(engine_checks.old_engine_trace(), ONE_MBPS, 40 * MS)
    assert (a.packets, a.late, a.early, a.reordered) == (3, 1, 0, 0)
    assert a.examples == [(2, 20 * MS, 8 * MS)] and a.max_late_ns == 12 * MS


def test_back_to_back_and_idle_starts_pass() -> None:
    rows = [(0, 1, "+", 1000), (0, 1, "-", 1000), (4 * MS, 2, "+", 1000), (5 * MS, 3, "+", 500)]
    rows += [(8 * MS, 2, "-", 1000), (16 * MS, 3, "-", 500), (30 * MS, 4, "+", 40), (30 * MS, 4, "-", 40)]
    a = audit_link(trace(rows), ONE_MBPS, 40 * MS)
    assert (a.packets, a.late, a.early, a.reordered, a.stranded) == (4, 0, 0, 0, 0)
    assert a.binding == {"arrival": 2, "link": 2, "tokens": 0, "pause": 0}


def test_early_reordered_and_stranded_packets_are_flagged() -> None:
    early = trace([(0, 1, "+", 1000), (0, 1, "-", 1000), (1 * MS, 2, "+", 1000), (7 * MS, 2, "-", 1000)])
    assert audit_link(early, ONE_MBPS).early == 1
    swapped = [(0, 1, "+", 1000), (0, 2, "+", 1000), (0, 2, "-", 1000), (8 * MS, 1, "-", 1000)]
    assert audit_link(trace(swapped), ONE_MBPS).reordered == 2
    # Accepted at 4 ms and never sent, though the link was free at 8 ms: stranded, late.
    stranded = trace([(0, 1, "+", 1000), (0, 1, "-", 1000), (4 * MS, 2, "+", 1000)])
    a = audit_link(stranded, ONE_MBPS, 40 * MS)
    assert (a.stranded, a.late) == (1, 1)
    assert audit_link(stranded, ONE_MBPS, 8 * MS).late == 0  # the run ended as it came due
    # A packet dropped on arrival is not waiting: nothing to flag.
    dropped = trace([(0, 1, "+", 1000), (0, 1, "-", 1000), (4 * MS, 2, "+", 1000), (4 * MS, 2, "d", 1000)])
    assert audit_link(dropped, ONE_MBPS, 40 * MS).late == 0


def test_the_token_bucket_rule() -> None:
    # A 1 Gb/s link behind an 8 Mb/s (1 byte/µs) bucket of 3000 B, full at the start: three 1000 B
    # packets pass at link speed (8 µs each), then one per 1000 µs of tokens.
    tb = LinkModel("t", 1_000_000_000, tbf=TokenBucket(8_000_000, 3000))
    arrivals = [(0, i, "+", 1000) for i in range(5)]
    good = [0, 8 * US, 16 * US, 1000 * US, 2000 * US]
    a = audit_link(trace(arrivals + [(t, i, "-", 1000) for i, t in enumerate(good)]), tb)
    assert (a.late, a.early) == (0, 0)
    assert a.binding == {"arrival": 1, "link": 2, "tokens": 2, "pause": 0}
    ignoring_tokens = [0, 8 * US, 16 * US, 24 * US, 2000 * US]
    a = audit_link(trace(arrivals + [(t, i, "-", 1000) for i, t in enumerate(ignoring_tokens)]), tb)
    assert a.early == 1 and a.examples[0] == (3, 24 * US, 1000 * US)
    held = [0, 8 * US, 16 * US, 1500 * US, 2000 * US]  # tokens kept accruing while it waited
    a = audit_link(trace(arrivals + [(t, i, "-", 1000) for i, t in enumerate(held)]), tb)
    assert a.late == 1 and a.max_late_ns == 500 * US


def test_the_token_bucket_refills_to_its_depth_only() -> None:
    tb = LinkModel("t", 1_000_000_000, tbf=TokenBucket(8_000_000, 2000))
    rows = [(0, 0, "+", 1000), (0, 1, "+", 1000), (0, 0, "-", 1000), (8 * US, 1, "-", 1000)]
    # 10 s idle: the bucket holds 2000 B again, not 10 MB.
    t0 = 10_000 * MS
    rows += [(t0, i, "+", 1000) for i in range(2, 5)]
    rows += [(t0, 2, "-", 1000), (t0 + 8 * US, 3, "-", 1000), (t0 + 1000 * US, 4, "-", 1000)]
    assert audit_link(trace(rows), tb).late == 0
    a = audit_link(trace(rows[:-1] + [(t0 + 16 * US, 4, "-", 1000)]), tb)
    assert a.early == 1


def test_the_peak_rate_bucket_spaces_a_burst() -> None:
    # As crates/net/src/queue/tbf.rs: rate 1 B/µs, burst 3000 B, peak 2 B/µs with a 1000 B bucket.
    tb = LinkModel("t", 10_000_000_000, tbf=TokenBucket(8_000_000, 3000, 16_000_000, 1000))
    starts = [0, 500, 1000, 1500, 2000, 3000, 4000, 5000]
    rows = [(0, i, "+", 1000) for i in range(8)] + [(t * US, i, "-", 1000) for i, t in enumerate(starts)]
    a = audit_link(trace(rows), tb)
    assert (a.late, a.early) == (0, 0)


def _buckets_step_by_step(
    tb: TokenBucket, starts: list[int], sizes: list[int]
) -> tuple[list[int], list[int]]:
    """The bucket rule one departure at a time, in Python integers (tc-tbf(8)): what the audit's
    closed form must give; returns each departure's due instant and the final state."""
    full, peak_full = tb.burst_bytes * audit.NANOBITS_PER_BYTE, tb.mtu_bytes * audit.NANOBITS_PER_BYTE
    t_c, tokens, peak_tokens, due = 0, full, peak_full, []
    for t, size in zip(starts, sizes, strict=True):
        cost = size * audit.NANOBITS_PER_BYTE
        at = (
            t_c
            if tokens >= cost
            else (t_c + -(-(cost - tokens) // tb.rate_bps) if tb.rate_bps else audit.NEVER_NS)
        )
        if tb.peak_bps is not None and peak_tokens < cost:
            at = max(at, t_c + -(-(cost - peak_tokens) // tb.peak_bps))
        due.append(min(at, audit.NEVER_NS))
        dt = max(t - t_c, 0)
        t_c = max(t, t_c)
        tokens = min(tokens + tb.rate_bps * dt, full) - cost
        if tb.peak_bps is not None:
            peak_tokens = min(peak_tokens + tb.peak_bps * dt, peak_full) - cost
    return due, [t_c, tokens, peak_tokens]


@pytest.mark.parametrize(
    "tb",
    [
        TokenBucket(8_000_000, 3000),
        TokenBucket(8_000_000, 3000, 16_000_000, 1500),
        TokenBucket(0, 3000),  # no refill: the burst, then never
        TokenBucket(400_000_000_000, 65_000, 800_000_000_000, 9000),  # rate × time beyond 64 bits
    ],
    ids=["rate", "peak", "zero-rate", "wide"],
)
def test_the_bucket_levels_in_closed_form_match_the_rule_step_by_step(tb: TokenBucket) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    gaps = rng.choice([0, 1, 700, 90_000, 3 * MS, 50 * MS], size=4000)
    starts = np.cumsum(gaps) + (0 if tb.rate_bps < 10**11 else 10**12)  # the wide case runs 1000 s
    starts[::97] -= 5 * US  # some departures before the previous one: tokens counted from the later
    sizes = rng.choice([40, 576, 1000, 1500, 9000], size=len(starts))
    st = audit._initial_buckets(LinkModel("t", 10**12, tbf=tb))
    assert st is not None
    due = audit._conformance(tb, st, starts, sizes)
    want, state = _buckets_step_by_step(tb, starts.tolist(), sizes.tolist())
    assert due.tolist() == want
    assert [st.t_c, st.tokens, st.peak_tokens if tb.peak_bps is not None else state[2]] == state
    assert 0 < int((due > starts).sum()) < len(starts) or tb.rate_bps == 0  # the bucket held some back


def test_a_pause_holds_the_queue_and_its_end_releases_it() -> None:
    paused = LinkModel("p", 1_000_000, steps=((10 * MS, 0), (30 * MS, 2_000_000)))
    rows = [(0, 1, "+", 1000), (0, 1, "-", 1000), (9 * MS, 2, "+", 1000), (12 * MS, 3, "+", 1000)]
    # Packet 2 is due at 9 ms, before the pause; packet 3 at the pause's end, at the new rate then.
    rows += [
        (9 * MS, 2, "-", 1000),
        (30 * MS, 3, "-", 1000),
        (34 * MS, 4, "+", 1000),
        (34 * MS, 4, "-", 1000),
    ]
    a = audit_link(trace(rows), paused, 40 * MS)
    assert (a.late, a.early) == (0, 0) and a.binding["pause"] == 1
    # Packet 2 started at 9 ms: 8 ms at 1 Mb/s, so the link is busy until 17 ms.
    late = rows[:5] + [(31 * MS, 3, "-", 1000)] + rows[6:]
    assert audit_link(trace(late), paused, 40 * MS).late == 1
    during = rows[:5] + [(20 * MS, 3, "-", 1000)] + rows[6:]
    a = audit_link(trace(during), paused, 40 * MS)  # a start at zero rate: early, and so is the next
    assert a.early >= 1 and a.examples[0] == (3, 20 * MS, 30 * MS)


def test_serialisation_rounds_to_the_nearest_nanosecond() -> None:
    assert audit.tx_ns(1000, 11_000_000) == 727_273  # as crates/core's transmit_time
    assert audit.tx_ns(1500, 10_000_000) == 1_200_000


def test_the_audit_models_a_link_from_the_numbers_of_its_summary() -> None:
    link = {
        "name": "r->d",
        "rate_bps": 10e6,
        "schedule_t_ns": [2_000_000_000, 3_000_000_000],
        "schedule_bps": [0, 4_000_000],
        "queue_kind": "tbf",
        "tbf_rate_bps": 10_000_000,
        "tbf_burst_bytes": 10_000,
        "tbf_peak_bps": 20_000_000,
        "tbf_mtu_bytes": 1500,
    }
    m = audit.model_from_summary(link)
    assert (m.rate_bps, m.steps) == (10_000_000, ((2_000_000_000, 0), (3_000_000_000, 4_000_000)))
    assert m.tbf == audit.TokenBucket(10_000_000, 10_000, 20_000_000, 1500)
    plain = audit.model_from_summary({"name": "a->b", "rate_bps": 1e6, "queue_kind": "droptail"})
    assert plain.constant and plain.tbf is None


def test_audit_of_a_real_run_and_of_its_trace_with_one_packet_delayed(tmp_path: Path) -> None:
    doc = to_dict(packaged("papers", "validation-fifo-audit.toml"))
    doc["duration"] = "2s"
    run = fairstream.run(doc, output_dir=tmp_path / "run")
    audits = audit.audit_run(run)
    assert audit.totals(audits)["late"] == 0 and audit.totals(audits)["packets"] > 5000
    # Delay the 100th transmission on the bottleneck by 1 µs: the audit sees exactly that packet.
    link_id = next(lk["link_id"] for lk in run.summary["links"] if lk["name"] == "r->d")
    rows = run.packets.filter(pl.col("link_id") == link_id)
    idx = rows.with_row_index("i").filter(pl.col("event") == "-")["i"][100]
    bumped = rows.with_columns(
        pl.when(pl.int_range(pl.len()) == idx)
        .then(pl.col("t_ns") + 1000)
        .otherwise(pl.col("t_ns"))
        .alias("t_ns")
    )
    a = audit_link(bumped, audit.link_models(run)["r->d"], round(run.summary["duration_s"] * 1e9))
    assert a.late == 1 and a.max_late_ns == 1000


# --- the other pieces -----------------------------------------------------------------------------


def test_exponent_fit() -> None:
    rtts = [0.02, 0.04, 0.08, 0.16]
    assert engine_checks.fit_exponent(rtts, [r**-1.5 for r in rtts]) == pytest.approx(1.5)
    assert engine_checks.fit_exponent(rtts, [3.0 * r**0.5 for r in rtts]) == pytest.approx(-0.5)
    assert engine_checks.fit_exponent(rtts, [5.0] * 4) == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(engine_checks.fit_exponent(rtts, [1.0, 2.0, 0.0, 1.0]))


def test_loss_events_group_losses_within_one_rtt_of_the_first() -> None:
    assert engine_checks.loss_events([], 0.1) == 0
    # 0, 0.05, 0.1 are one event (within 0.1 of 0); 0.15 starts the next; 0.3 another.
    assert engine_checks.loss_events([0.15, 0.0, 0.05, 0.1, 0.3, 0.24], 0.1) == 3


def test_timeout_sequences_count_backed_off_timeouts_once() -> None:
    rows = [
        (0.0, "rto", 0.3),
        (1.0, "cwnd", 10.0),  # every change of the window: not read
        (1.5, "loss_window", 10.0),
        (1.5, "fast_retransmit", 1.0),
        (2.0, "loss_window", 5.0),
        (2.0, "timeout", 1.0),
        (2.0, "rto", 0.6),
        (2.6, "loss_window", 1.0),
        (2.6, "timeout", 1.0),  # backed off: the window still one packet, same sequence
        (2.6, "rto", 1.2),
        (3.1, "rto", 0.25),
        (4.0, "loss_window", 2.0),  # a new ACK grew the window: a new sequence
        (4.0, "timeout", 1.0),
        (5.0, "loss_window", 4.0),
        (5.0, "fast_retransmit", 1.0),
        (5.5, "loss_window", 1.0),
        (5.5, "timeout", 1.0),  # after a fast retransmit: a new sequence at any window
    ]
    m = pl.DataFrame(rows, schema=["t", "metric", "value"], orient="row")
    ind = engine_checks.loss_indications(m)
    assert (ind.fast_retransmits, ind.timeouts, ind.sequences) == (2, 4, 3)
    assert ind.first_rto_s == pytest.approx((0.3 + 0.25 + 0.25) / 3) and ind.window_at_fr == 7.0


@pytest.mark.parametrize(
    ("p", "rtt", "t0", "wmax", "b"),
    [(0.01, 0.1, 0.3, 1e9, 1), (0.1, 0.02, 0.25, 1e9, 2), (0.05, 0.2, 1.0, 8, 1)],
)
def test_the_python_pftk_is_the_core_one(p: float, rtt: float, t0: float, wmax: float, b: float) -> None:
    assert engine_checks.pftk_pps(p, rtt, t0, wmax, b) == pytest.approx(
        _core.padhye(1.0, rtt, p, t0, wmax, b)
    )


def test_student_t_p_values() -> None:
    for t, dof in [(12.706, 1), (4.303, 2), (3.182, 3), (2.262, 9), (2.086, 20)]:
        assert engine_checks.student_t_two_sided_p(t, dof) == pytest.approx(0.05, abs=5e-4)
    assert engine_checks.student_t_two_sided_p(0.0, 5) == 1.0
    assert engine_checks.student_t_two_sided_p(math.inf, 5) == 0.0


def test_share_statistics_see_a_favoured_flow() -> None:
    fair = engine_checks.share_statistics(
        [
            [0.25, 0.25, 0.26, 0.24],
            [0.26, 0.24, 0.25, 0.25],
            [0.24, 0.26, 0.25, 0.25],
            [0.25, 0.25, 0.24, 0.26],
        ]
    )
    assert fair["min_p"] > 0.3 and fair["above_fair"] == [1, 1, 1, 1]
    biased = engine_checks.share_statistics([[0.5, 0.5, 0.0, 0.0]] * 3)
    assert biased["p"][0] == 0.0 and biased["max_abs_dev"] == pytest.approx(0.25)


def test_a_helper_topologys_token_bucket_is_audited_as_a_token_bucket(tmp_path: Path) -> None:
    # The summary gives every link's queue kind and bucket as numbers, helper topologies' too: the
    # audit models the dumbbell's token bucket instead of taking it for a plain FIFO.
    doc = {
        "name": "tbf-dumbbell",
        "duration": "200ms",
        "topology": {
            "kind": "dumbbell",
            "hosts": 1,
            "access": {"rate": "100Mbps", "delay": "1ms"},
            "bottleneck": {
                "rate": "100Mbps",
                "delay": "1ms",
                "queue": {"kind": "tbf", "rate": "1Mbps", "burst": "3000B", "limit": "30000B"},
            },
        },
        "flow": [{"protocol": "cbr", "from": "left0", "to": "right0", "rate": "2Mbps"}],
        "record": {"packets": True},
    }
    run = fairstream.run(doc, output_dir=tmp_path / "run")
    buckets = {name: m.tbf for name, m in audit.link_models(run).items() if m.tbf is not None}
    # The bottleneck's two directions, each with the scenario's bucket.
    assert len(buckets) == 2
    assert set(buckets.values()) == {audit.TokenBucket(1_000_000, 3000, None, audit.TokenBucket.mtu_bytes)}
    assert all(
        lk["queue_kind"] == ("tbf" if lk["name"] in buckets else "droptail") for lk in run.summary["links"]
    )
