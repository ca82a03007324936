//! Conformance tests of the media-scaling endpoints at the state-machine level: step plans with
//! explicit times and packets in, and what comes out checked against hand-computed values;
//! then closed-loop runs over a chaotic channel and over a bottleneck.

mod receiver;
mod robust;
mod sender;

use fairstream_core::{DataSize, Duration, FlowId, Instant, RngStream};

use super::config::{DATA_HEADERS, Rule};
use super::{MediaReceiver, MediaSender, MmAppConfig, MpegAppConfig, ScalingConfig};
use crate::media_scaling::{MediaData, MediaFeedback};
use crate::{Direction, Endpoint, FlowCtx, Header, MetricSink, Packet, udp_feedback_size};

const FLOW: FlowId = FlowId(5);

/// Payload of a 1000-byte MM_APP packet (its headers are [`DATA_HEADERS`]).
const PAYLOAD: u64 = 1000 - DATA_HEADERS;

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

fn dms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// An MM_APP-like data packet `seq` sent at `sent` carrying the sender's RTT `rtt`.
fn data(seq: u64, sent: Instant, rtt: Duration) -> Packet {
    Packet {
        flow: FLOW,
        direction: Direction::Forward,
        size: DataSize::bytes(1000),
        payload: PAYLOAD as u32,
        sent_at: sent,
        header: Header::MediaData(MediaData {
            seq,
            timestamp: sent,
            rtt,
            frame: seq,
            fragment: 0,
            fragments: 1,
            scale: 0,
            kind: None,
        }),
    }
}

/// A receiver report.
fn report(fb: MediaFeedback) -> Packet {
    Packet {
        flow: FLOW,
        direction: Direction::Reverse,
        size: udp_feedback_size(MediaFeedback::WIRE_LEN),
        payload: 0,
        sent_at: Instant::ZERO,
        header: Header::MediaFeedback(fb),
    }
}

/// A report of `scale`, numbered `number`, echoing `t_echo` with no hold.
fn fb(scale: u8, number: u32, t_echo: Instant, highest_seq: u64) -> MediaFeedback {
    MediaFeedback {
        scale,
        number,
        t_echo,
        t_delay: Duration::ZERO,
        highest_seq,
    }
}

fn as_report(p: &Packet) -> MediaFeedback {
    match p.header {
        Header::MediaFeedback(f) => f,
        ref h => panic!("not a report: {h:?}"),
    }
}

fn as_data(p: &Packet) -> MediaData {
    match p.header {
        Header::MediaData(d) => d,
        ref h => panic!("not data: {h:?}"),
    }
}

/// A receiver with Max_Intrvl `max_interval` and the rule `c` (and MM_APP's default player).
fn receiver(c: ScalingConfig, max_interval: Duration) -> MediaReceiver {
    let player = MmAppConfig {
        scaling: c,
        ..MmAppConfig::default()
    }
    .player(Instant::ZERO);
    MediaReceiver::new(FLOW, Rule::new(&c, max_interval), player)
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

/// Fires `e`'s timers up to and including `until`, draining what it sends after each.
fn run_until(e: &mut impl Endpoint, until: Instant, m: &mut dyn MetricSink) -> Vec<Packet> {
    let mut sent = Vec::new();
    for _ in 0..1_000_000 {
        let Some(t) = e.poll_timeout() else {
            return sent;
        };
        if t > until {
            return sent;
        }
        e.handle_timeout(t, m);
        while let Some(p) = e.poll_transmit(t) {
            sent.push(p);
        }
    }
    panic!("the timers do not advance");
}

/// Drives a receiver through `arrivals` (time, packet), firing its timers in between, up to
/// `until`; returns every report with its time.
fn drive(
    r: &mut MediaReceiver,
    arrivals: &[(Instant, Packet)],
    until: Instant,
    m: &mut dyn MetricSink,
) -> Vec<(Instant, MediaFeedback)> {
    let mut out = Vec::new();
    let push = |ps: Vec<Packet>, out: &mut Vec<(Instant, MediaFeedback)>| {
        for p in ps {
            out.push((p.sent_at, as_report(&p)));
        }
    };
    for (t, p) in arrivals {
        let fired = run_until(r, *t, m);
        push(fired, &mut out);
        let fed = feed(r, *t, p, m);
        push(fed, &mut out);
    }
    let fired = run_until(r, until, m);
    push(fired, &mut out);
    out
}

/// Packets every `every` ms from `from` to `to` (exclusive), numbered from `seq0`, with the
/// sender's RTT `rtt`, arriving when sent (the receiver only looks at arrival times).
fn stream(seq0: u64, from: u64, to: u64, every: u64, rtt: Duration) -> Vec<(Instant, Packet)> {
    (0..)
        .map(|k| (seq0 + k, from + k * every))
        .take_while(|&(_, t)| t < to)
        .map(|(seq, t)| (ms(t), data(seq, ms(t), rtt)))
        .collect()
}

#[test]
fn media_scaling_protocols_are_listed() {
    use crate::{AnyEndpoint, ProtocolConfig};
    let mm = ProtocolConfig::MmApp(MmAppConfig::default());
    let mpeg = ProtocolConfig::MpegApp(MpegAppConfig::default());
    assert_eq!((mm.name(), mm.rng_stream()), ("mmapp", "mmapp"));
    assert_eq!((mpeg.name(), mpeg.rng_stream()), ("mpegapp", "mpegapp"));
    assert!(mm.sends_feedback() && mpeg.sends_feedback());
    let (mut s, r) = mm.endpoints(&FlowCtx::new(
        FLOW,
        ms(7),
        Some(ms(60)),
        RngStream::from_seed(1),
    ));
    assert!(matches!(s, AnyEndpoint::MmAppSender(_)));
    assert!(matches!(r, AnyEndpoint::MmAppReceiver(_)));
    // The flow's start and stop: 1000 B at 300 kbit/s every
    // 26.667 ms from 7 ms: packets at 7, 33.7 and 60.3 ms, the last after the stop.
    assert_eq!(s.poll_timeout(), Some(ms(7)));
    let sent = run_until(&mut s, ms(1000), &mut crate::NullSink);
    assert_eq!(sent.len(), 2);
    let (s, r) = mpeg.endpoints(&FlowCtx::at_zero(FLOW, 1));
    assert!(matches!(s, AnyEndpoint::MpegAppSender(_)));
    assert!(matches!(r, AnyEndpoint::MpegAppReceiver(_)));
}
