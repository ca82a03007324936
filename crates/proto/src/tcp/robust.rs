//! TCP under chaos: every variant and window control, with and without timestamps, between
//! endpoints joined by a channel that drops, duplicates, delays (reorders) and forges packets in
//! both directions: forged ACKs with any cumulative ACK, SACK blocks and timestamp echo, forged
//! data with any packet number and timestamp. Nothing may panic, the window stays finite and at
//! least one packet, ssthresh at least two, `pipe` within what is outstanding, timers in the
//! future; and the flow still delivers data until forgeries that stall any TCP begin.

use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant, RngStream};

use super::{
    BbrParams, Control, CubicParams, SackBlocks, TcpConfig, TcpSender, TcpSink, TcpSinkConfig,
    TcpVariant,
};
use crate::closed_loop::{Channel, Mangler, run};
use crate::tcp::{TcpFlags, TcpSegment};
use crate::{Direction, Endpoint, FlowCtx, Header, NullSink, Packet};

const FLOW: FlowId = FlowId(3);
/// Forgeries that can stall a flow for good (ACKs of data not received, data far ahead) come
/// only after this, so that the first part checks that the flow still delivers.
const LATE: Instant = Instant::from_nanos(5_000_000_000);

struct Chaos {
    m: Mangler,
    /// The highest cumulative ACK the receiver sent so far.
    acked: i64,
}

impl Chaos {
    fn segment(&mut self, seq: i64, ack: i64, is_ack: bool) -> Packet {
        let mut sack = SackBlocks::NONE;
        for _ in 0..self.m.upto(5) {
            let start = ack.saturating_add(1 + self.m.upto(200) as i64);
            let end = start.saturating_add(self.m.upto(1 << 20) as i64);
            sack.push(ack, start, end);
        }
        let ts = match self.m.upto(3) {
            0 => 0,
            1 => u32::MAX,
            _ => self.m.rng.next_u64() as u32,
        };
        Packet {
            flow: FLOW,
            direction: if is_ack {
                Direction::Reverse
            } else {
                Direction::Forward
            },
            size: DataSize::bytes(40 + self.m.upto(2000)),
            payload: self.m.upto(1500) as u32,
            sent_at: Instant::ZERO,
            header: Header::Tcp(TcpSegment {
                seq,
                ack,
                is_ack,
                flags: TcpFlags {
                    syn: self.m.rng.bernoulli(0.1),
                    retransmit: false,
                    push: self.m.rng.bernoulli(0.5),
                },
                ts,
                sack,
            }),
        }
    }
    /// A forged ACK near `hint` (an ACK number seen on the path); before `late` it never
    /// acknowledges data the receiver may not have (that stalls any TCP for good, as a forged
    /// data packet stalls its receiver).
    fn bogus_ack(&mut self, hint: i64, late: bool) -> Packet {
        let ack = match self.m.upto(4) {
            0 => -1 - self.m.upto(5) as i64,
            1 if late => hint + self.m.upto(100) as i64,
            3 => i64::MAX - self.m.upto(3) as i64,
            _ => hint - self.m.upto(100) as i64,
        };
        self.segment(ack, ack, true)
    }
    fn bogus_data(&mut self, hint: i64) -> Packet {
        let seq = match self.m.upto(4) {
            0 => -(self.m.upto(5) as i64),
            1 => hint + self.m.upto(5_000) as i64,
            2 => i64::MAX - self.m.upto(3) as i64,
            _ => hint,
        };
        self.segment(seq, -1, false)
    }
}

impl Channel for Chaos {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        let hint = p.tcp().map_or(0, |h| h.seq);
        self.m.mangle(now, p, true, out);
        if now > LATE && self.m.rng.bernoulli(0.01) {
            let b = self.bogus_data(hint);
            out.push((now.saturating_add(self.m.delay()), b, true));
        }
        if self.m.rng.bernoulli(0.02) {
            let b = self.bogus_ack(self.acked, now > LATE);
            out.push((now.saturating_add(self.m.delay()), b, false));
        }
    }
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        self.acked = self.acked.max(p.tcp().map_or(-1, |h| h.ack));
        self.m.mangle(now, p, false, out);
        if self.m.rng.bernoulli(0.05) {
            let b = self.bogus_ack(self.acked, now > LATE);
            out.push((now.saturating_add(self.m.delay()), b, false));
        }
    }
}

fn configs() -> Vec<TcpConfig> {
    let controls = [
        Control::default(),
        Control::Binomial(super::Binomial::IIAD),
        Control::Cubic(CubicParams {
            hystart: true,
            ..CubicParams::default()
        }),
        Control::Bbr(BbrParams::default()),
    ];
    let mut out = Vec::new();
    for variant in [TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
        for control in controls {
            for (timestamps, pacing, prr) in [(false, false, false), (true, true, true)] {
                out.push(TcpConfig {
                    variant,
                    control,
                    timestamps,
                    pacing,
                    prr,
                    window: 200,
                    initial_window: 10,
                    max_rto: Duration::from_secs(8),
                    ..TcpConfig::default()
                });
            }
        }
    }
    out.push(TcpConfig {
        window: 200,
        ..TcpConfig::default().linux()
    });
    out
}

#[test]
fn chaos_never_panics_and_keeps_the_window_sane() {
    for (k, config) in configs().into_iter().enumerate() {
        let seed = k as u64 + 1;
        let mut s = TcpSender::new(
            &FlowCtx::new(FLOW, Instant::ZERO, None, RngStream::from_seed(seed)),
            config,
        );
        let delayed = (k % 2 == 0).then_some(Duration::from_millis(40));
        let mut r = TcpSink::new(FLOW, TcpSinkConfig::for_sender(&config, delayed));
        let mut ch = Chaos {
            m: Mangler::new(
                RngStream::from_seed(seed * 7),
                0.08,
                0.04,
                Duration::from_millis(10),
            ),
            acked: -1,
        };
        let mut events = 0u64;
        let mut at_late = 0;
        run(
            &mut s,
            &mut r,
            &mut ch,
            Instant::from_nanos(15_000_000_000),
            &mut NullSink,
            |s, sink, now| {
                events += 1;
                let w = s.cwnd();
                assert!(w.is_finite() && w >= 1.0, "{k}: cwnd {w}");
                assert!(s.ssthresh() >= 2, "{k}: ssthresh {}", s.ssthresh());
                let sb = s.scoreboard();
                assert!(sb.pipe() <= sb.outstanding() + sb.retransmitted(), "{k}");
                assert!(sb.sacked() + sb.lost() <= sb.outstanding(), "{k}");
                if let Some(rate) = s.pacing_rate() {
                    assert!(
                        rate.as_bps() > 0 && rate < Bitrate::gbps(1_000_000),
                        "{k}: {rate}"
                    );
                }
                if let Some(t) = s.poll_timeout() {
                    assert!(t > now, "{k}: timer {t:?} not after {now:?}");
                }
                if now <= LATE {
                    at_late = sink.delivered_bytes();
                }
            },
        );
        assert!(events > 500, "{k}: only {events} events");
        // Under 8 % loss, 4 % duplicates, reordering and forged duplicate ACKs the slowest (ns-2
        // Reno) delivers about 50 packets in the first 5 s; BBR, which ignores random loss, 1000+.
        assert!(
            at_late > 20_000,
            "{k} ({config:?}): only {at_late} bytes delivered in 5 s"
        );
    }
}
