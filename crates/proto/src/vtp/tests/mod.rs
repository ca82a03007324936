//! Conformance tests of the VTP endpoints at the state-machine level: step plans with explicit
//! times and packets in, and what comes out checked against hand-computed values.

mod receiver;
mod robust;
mod sender;

use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant};

use super::{DATA_HEADERS, VtpConfig, VtpReceiver, VtpSender};
use crate::vtp::{VtpData, VtpFeedback};
use crate::{Direction, Endpoint, FlowCtx, Header, MetricSink, Packet, udp_feedback_size};

const FLOW: FlowId = FlowId(3);

/// Payload of a 1000-byte data packet (its headers are [`DATA_HEADERS`]).
const PAYLOAD: u32 = 1000 - DATA_HEADERS as u32;

/// A report's size on the wire.
const REPORT: DataSize = udp_feedback_size(VtpFeedback::WIRE_LEN);

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

fn dms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// A data packet as the sender would emit it.
fn data(seq: u64, timestamp: Instant, rtt: Duration) -> Packet {
    Packet {
        flow: FLOW,
        direction: Direction::Forward,
        size: DataSize::bytes(1000),
        payload: PAYLOAD,
        sent_at: timestamp,
        header: Header::VtpData(VtpData {
            seq,
            timestamp,
            rtt,
        }),
    }
}

/// A receiver report.
fn report(fb: VtpFeedback) -> Packet {
    Packet {
        flow: FLOW,
        direction: Direction::Reverse,
        size: REPORT,
        payload: 0,
        sent_at: Instant::ZERO,
        header: Header::VtpFeedback(fb),
    }
}

/// A report echoing `t_echo` with no hold, AR in bit/s, and the period's counts.
fn fb(t_echo: Instant, ar_bps: u64, highest_seq: u64, lost: u32, received: u32) -> VtpFeedback {
    VtpFeedback {
        t_echo,
        t_delay: Duration::ZERO,
        achieved_rate: Bitrate::bps(ar_bps),
        highest_seq,
        lost,
        received,
    }
}

/// The report in `p`, if it is one.
fn as_report(p: &Packet) -> VtpFeedback {
    match p.header {
        Header::VtpFeedback(f) => f,
        ref h => panic!("not a report: {h:?}"),
    }
}

/// Fires the sender's timers up to and including `until`, draining what it sends.
fn run_until(s: &mut VtpSender, until: Instant, m: &mut dyn MetricSink) -> Vec<Packet> {
    let mut sent = Vec::new();
    for _ in 0..1_000_000 {
        let Some(t) = s.poll_timeout() else {
            return sent;
        };
        if t > until {
            return sent;
        }
        s.handle_timeout(t, m);
        while let Some(p) = s.poll_transmit(t) {
            sent.push(p);
        }
    }
    panic!("the sender's timers do not advance");
}

/// Feeds `p` to `e` at `now` and drains what it sends at once.
fn feed(e: &mut impl Endpoint, now: Instant, p: &Packet, m: &mut dyn MetricSink) -> Vec<Packet> {
    e.handle_packet(now, p, m);
    let mut out = Vec::new();
    while let Some(q) = e.poll_transmit(now) {
        out.push(q);
    }
    out
}

/// 1000-byte packets, first rate 8 Mbit/s (one packet per millisecond), and the silence rule
/// pushed out of the way (100 periods) so that step plans may space their reports freely;
/// the silence test sets it back to 2.
fn cfg() -> VtpConfig {
    VtpConfig {
        initial_rate: Some(Bitrate::mbps(8)),
        no_feedback_periods: 100,
        ..VtpConfig::default()
    }
}

fn sender(c: VtpConfig) -> VtpSender {
    VtpSender::new(&running(Instant::ZERO, None), c)
}

/// Flow [`FLOW`] running from `start` to `stop`.
fn running(start: Instant, stop: Option<Instant>) -> FlowCtx {
    FlowCtx::new(FLOW, start, stop, fairstream_core::RngStream::from_seed(1))
}

fn receiver() -> VtpReceiver {
    VtpReceiver::new(FLOW, &VtpConfig::default())
}

#[test]
fn vtp_is_a_listed_protocol() {
    use crate::{AnyEndpoint, ProtocolConfig};
    let config = ProtocolConfig::Vtp(cfg());
    assert_eq!((config.name(), config.rng_stream()), ("vtp", "vtp"));
    assert!(config.sends_feedback());
    assert_eq!(config.segment_payload(), 0);
    let (mut s, r) = config.endpoints(&running(ms(7), Some(ms(9))));
    assert!(matches!(s, AnyEndpoint::VtpSender(_)));
    assert!(matches!(r, AnyEndpoint::VtpReceiver(_)));
    // The flow's start and stop: packets at 7 and 8 ms.
    assert_eq!(s.poll_timeout(), Some(ms(7)));
    let mut sent = 0;
    while let Some(t) = s.poll_timeout() {
        s.handle_timeout(t, &mut crate::NullSink);
        while s.poll_transmit(t).is_some() {
            sent += 1;
        }
    }
    assert_eq!(sent, 2);
}
