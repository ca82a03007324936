"""Validation of the simulation engine itself: checks that would have caught the bugs fixed in
commit 7894a83 (a queue that waited beside an idle transmitter; same-instant ties that always went
to the same flow), and a wide check of TCP against the PFTK model (docs/VALIDATION.md).

Experiments, run from ``scenarios/papers/validation-*.toml``:

- ``fifo-audit``: replays the packet trace of busy runs (drop-tail, RED, token bucket, a paused
  link) and recomputes every transmission's due start (`audit`); no packet may leave late.
- ``tcp-pftk-grid``: Reno and NewReno under Bernoulli loss on a 5 × 5 grid of loss rate and RTT,
  each run long enough for over 1000 loss events, against the full PFTK model at the run's own
  loss-event rate, RTT and timeout.
- ``rtt-bias``: four NewReno flows with base RTTs 20/40/80/160 ms through a drop-tail or RED
  bottleneck; the exponent a of throughput ∝ RTT^−a over seeds, delay perturbations and tie rules.
- ``tie-neutrality``: flows whose packets reach a queue in the same nanosecond; under random ties no
  flow gains systematically, under fifo ties one does.
"""

from __future__ import annotations

from ..experiment import Experiment, Published
from .common import PAPER
from .fifo_audit import AUDIT_VARIANTS, FifoAudit, old_engine_trace
from .pftk_grid import (
    PFTK_QUICK_P,
    PFTK_QUICK_RTT,
    TcpPftkGrid,
    loss_events,
    loss_indications,
    pftk_pps,
)
from .rtt_bias import RttBias, fit_exponent
from .tie_neutrality import TieNeutrality, share_statistics, student_t_two_sided_p

__all__ = [
    "AUDIT_VARIANTS",
    "EXPERIMENTS",
    "PFTK_QUICK_P",
    "PFTK_QUICK_RTT",
    "fit_exponent",
    "loss_events",
    "loss_indications",
    "old_engine_trace",
    "pftk_pps",
    "share_statistics",
    "student_t_two_sided_p",
]

# --- the registry ---------------------------------------------------------------------------------

_DEF = "definition of a work-conserving FIFO link"

EXPERIMENTS: tuple[Experiment, ...] = (
    FifoAudit(
        id="fifo-audit",
        title="Every link is a work-conserving FIFO",
        paper=PAPER,
        figure="—",
        scenario_file="validation-fifo-audit.toml",
        what_runs=(
            "TCP (1500 B NewReno, 1040 B Reno, a reverse 1500 B flow) and CBR (200 B, 1000 B dithered) "
            "through a 10 Mbps bottleneck with 0.5 % Bernoulli loss, 30 s, packet trace on; the "
            "bottleneck as drop-tail, drop-tail under fifo ties, RED, a token bucket behind a 100 Mbps "
            "link, and drop-tail with a capacity schedule that pauses it twice"
        ),
        must_hold="no transmission on any link starts over 1 ns after a work-conserving link would start it",
        explanation=(
            "From packets.parquet, per link, each transmission is due at max(its arrival, previous start + "
            "previous serialisation time at the rate in force), later only when the token bucket lacks "
            "tokens (tbf rule, bucket starting full, peak bucket when set) or the schedule holds the rate at "
            "0 (reproduce/audit.py). The previous start is the actual one, so every packet is judged on "
            "its own. A made-up trace of the engine before 7894a83 (a packet held until the next arrival) "
            "is audited too: the audit must flag it."
        ),
        published=(Published("late packets", 0, _DEF), Published("early packets", 0, _DEF)),
    ),
    TcpPftkGrid(
        id="tcp-pftk-grid",
        title="Reno and NewReno against the PFTK model over loss rate and RTT",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tcp-pftk-grid.toml",
        what_runs=(
            "one Reno or NewReno flow (ns-2 defaults, ACK per packet, 1000 B packets, unlimited window) over "
            "a 100 Mbps path, Bernoulli loss 0.1 / 0.316 / 1 / 3.16 / 10 % × RTT 20 / 50 / 100 / 200 / "
            "300 ms, "
            "each run planned for about 1500 loss events (minutes to hours simulated); plus four "
            "NewReno runs without limited transmit as a diagnostic"
        ),
        must_hold="send rate / PFTK within ±15 % everywhere for NewReno, ±25 % for Reno",
        explanation=(
            "p is the TFRC loss-event rate: data packets lost on the lossy link (from the packet trace), "
            "grouped so that losses within one mean RTT of the first loss of an event count once (RFC 5348), "
            "divided by the packets sent. The throughput is the send rate, packets sent per second "
            "retransmissions included, which is what PFTK's B(p) models. RTT is the mean of the sender's RTT "
            "samples; T0 the mean RTO in force when the first timeout of each timeout sequence fired; b = 1; "
            "Wmax the advertised window. Also reported: goodput / PFTK, and the ratio at p = loss "
            "indications (fast retransmits + timeout sequences) / packets sent, PFTK's own measure. After "
            "evaluation each run's packet trace is reduced to its loss rows (losses.parquet)."
        ),
        published=(
            Published("send rate / model, NewReno", "1 ± 0.15", "fairstream validation target"),
            Published(
                "send rate / model, Reno", "1 ± 0.25", "fairstream validation target (Padhye et al. 1998)"
            ),
        ),
        phase_replicas=0,
    ),
    RttBias(
        id="rtt-bias",
        title="Longer-RTT TCP flows get less",
        paper=PAPER,
        figure="—",
        scenario_file="validation-rtt-bias.toml",
        what_runs=(
            "four NewReno flows (1000 B packets) with base RTTs 20 / 40 / 80 / 160 ms, 100 Mbps access "
            "links, a 10 Mbps bottleneck with a 100-packet drop-tail or RED queue, 100 s; 5 seeds × "
            "perturb_delays 0 / 0.5 / 1 × ties random / fifo; and 1040 B packets (random ties, no "
            "perturbation) for comparison"
        ),
        must_hold="under random ties, the mean fitted a (throughput ∝ RTT^−a) is positive, drop-tail and RED",
        explanation=(
            "Throughput: wire bytes delivered after a 10 s warm-up. a is fitted by least squares of "
            "log throughput on log base RTT (the propagation delays of the flow's path, perturbation "
            "included). Before the engine fix, with fifo ties and round-number delays, the four flows got "
            "2.4 / 2.4 / 1.8 / 3.4 Mbit/s (the longest RTT the most) because the tie rule decided who was "
            "dropped; ns-2.35 gives about 7.2 / 1.4 / 0.8 / 0.5 (a ≈ 1.2), through floating-point rounding "
            "of its event times."
        ),
        published=(
            Published(
                "exponent a",
                "> 0 (longer RTT gets less)",
                "TCP's RTT bias (Floyd 1991; Lakshman & Madhow 1997)",
            ),
            Published(
                "throughputs, ns-2.35, round-number delays",
                "≈ 7.2 / 1.4 / 0.8 / 0.5 Mbit/s (a ≈ 1.2)",
                "ns-2.35 runs reported in issue 6",
            ),
        ),
        phase_replicas=0,
    ),
    TieNeutrality(
        id="tie-neutrality",
        title="Same-instant ties favour no flow",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tie-neutrality.toml",
        what_runs=(
            "four lock-stepped 5 Mbps CBR sources (1000 B, identical 100 Mbps / 5 ms access links) into a "
            "10 Mbps bottleneck with a 20-packet drop-tail queue, and four identical NewReno flows started "
            "together on the same topology; 60 s, seeds 1–10, ties random and fifo"
        ),
        must_hold=(
            "under random ties, no flow's mean share over seeds departs significantly from 1/n "
            "(t-test, 1 % level); under fifo ties the CBR flows' shares do"
        ),
        explanation=(
            "The CBR packets of all four sources reach the router in the same nanosecond, twice as fast as "
            "the bottleneck drains, so the tie rule alone decides who is dropped. Shares are of the wire "
            "bytes delivered over the run; the standard error is over seeds."
        ),
        published=(
            Published(
                "mean share per flow, random ties", "1/n", "neutral tie rule (fairstream engine, 7894a83)"
            ),
        ),
        phase_replicas=0,
    ),
)
