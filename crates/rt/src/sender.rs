//! The sender's loop: handshake with the receiver (its token echoed proves its address), then
//! the protocol's sender endpoint driven on the monotonic clock, paced to its send times, its
//! feedback read only from the peer's connection, until its duration ends, the user stops it or
//! the circuit breaker trips.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

use fairstream_core::{Bitrate, Duration, FlowId, RngStream};
use fairstream_proto::wire::{self, AckStatus, Body, Handshake, WireError};
use fairstream_proto::{Direction, Endpoint, FlowCtx, ProtocolConfig};
use fairstream_records::{ActiveSpan, RunOutput};

use crate::clock::Clock;
use crate::pacer::{self, Lateness};
use crate::proof::{self, NonceLedger};
use crate::record::{FlowLabels, Live, Recorder};
use crate::session::{CircuitBreaker, PeerFilter, StopReason, random_u64};
use crate::{RtError, RtProtocol, socket};

/// What a sender runs.
#[derive(Clone, Debug)]
pub struct SendConfig {
    /// The receiver.
    pub to: SocketAddr,
    /// The local address (port 0: any).
    pub bind: SocketAddr,
    /// The protocol.
    pub protocol: RtProtocol,
    /// How long the flow sends.
    pub duration: Duration,
    /// The most it may send (its endpoints' `max_rate`).
    pub rate_cap: Option<Bitrate>,
    /// Width of the interval series' bins.
    pub interval: Duration,
    /// Hellos sent (250 ms apart) before giving up.
    pub hello_attempts: u32,
    /// The circuit breaker's least silence.
    pub breaker_silence: Duration,
    /// Whether the circuit breaker may stop the sender (on by default; the emulator turns it off
    /// to run a protocol as the simulator does, which has none).
    pub circuit_breaker: bool,
    /// The protocol's configuration, when not its default with `rate_cap` (the emulator runs a
    /// scenario's flow with the scenario's parameters); it must be `protocol`'s.
    pub config: Option<ProtocolConfig>,
}

impl SendConfig {
    /// A sender of `protocol` to `to` for `duration`, other settings at their defaults.
    pub fn new(to: SocketAddr, protocol: RtProtocol, duration: Duration) -> Self {
        let bind = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
        Self {
            to,
            bind: bind.parse().expect("a literal address"),
            protocol,
            duration,
            rate_cap: None,
            interval: Duration::from_millis(100),
            hello_attempts: 12,
            breaker_silence: Duration::from_secs(3),
            circuit_breaker: true,
            config: None,
        }
    }
}

/// What a sender's run produced.
#[derive(Debug)]
pub struct SendReport {
    /// The results, as a simulated run's.
    pub output: RunOutput,
    /// Why it stopped.
    pub stop: StopReason,
    /// Lateness of the paced sends.
    pub lateness: Lateness,
    /// Datagrams ignored: another address or connection.
    pub ignored: u64,
    /// Datagrams that did not decode.
    pub malformed: u64,
    /// Feedback reports taken.
    pub feedback: u64,
    /// Datagrams the socket refused (its buffer full).
    pub send_drops: u64,
    /// Feedback reports whose echo did not prove their claim of no loss (taken as heavy loss).
    pub lies: u64,
}

const HELLO_WAIT: Duration = Duration::from_millis(250);

/// Sends hellos until the receiver echoes the token; returns the connection id.
fn handshake(
    sock: &UdpSocket,
    clock: &Clock,
    cfg: &SendConfig,
    stop: &AtomicBool,
) -> Result<Option<u32>, RtError> {
    let conn_id = random_u64() as u32;
    let token = random_u64();
    let mut buf = [0u8; 2048];
    let hello = Handshake::Hello {
        protocol: cfg.protocol.number(),
        token,
    };
    for _ in 0..cfg.hello_attempts {
        let n = wire::encode_handshake(conn_id, &hello, &mut buf).expect("a hello fits");
        sock.send_to(&buf[..n], cfg.to)?;
        let until = clock.now() + HELLO_WAIT;
        while clock.now() < until {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let mut answer = None;
            socket::drain(sock, &mut buf, 64, |d, from| {
                if from != cfg.to || answer.is_some() {
                    return;
                }
                answer = Some(match wire::decode(d) {
                    Ok(f) if f.conn_id == conn_id => match f.body {
                        Body::Handshake(Handshake::Ack { status, token: t }) if t == token => {
                            Some(Ok(status))
                        }
                        _ => None,
                    },
                    Err(e @ WireError::UnknownVersion(_)) => Some(Err(e)),
                    _ => None,
                });
            })?;
            match answer.flatten() {
                Some(Ok(AckStatus::Accepted)) => return Ok(Some(conn_id)),
                Some(Ok(AckStatus::UnknownProtocol)) => {
                    return Err(RtError::Refused {
                        peer: cfg.to,
                        protocol: cfg.protocol.name(),
                    });
                }
                Some(Ok(AckStatus::Busy)) => return Err(RtError::Busy(cfg.to)),
                Some(Ok(AckStatus::VersionMismatch)) | Some(Err(_)) => {
                    return Err(RtError::Version {
                        peer: cfg.to,
                        detail: format!("this build speaks version {}", wire::VERSION),
                    });
                }
                None => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
    }
    Err(RtError::NoAnswer {
        peer: cfg.to,
        attempts: cfg.hello_attempts,
    })
}

/// Runs a sender until its duration ends, `stop` is set or the circuit breaker trips; `live`
/// is called about once a second.
pub fn run_sender(
    cfg: &SendConfig,
    stop: &AtomicBool,
    live: &mut dyn FnMut(&Live),
) -> Result<SendReport, RtError> {
    if cfg.rate_cap.is_some() && !cfg.protocol.takes_rate_cap() {
        return Err(RtError::NoRateCap(cfg.protocol.name()));
    }
    let sock = socket::bind(cfg.bind)?;
    let clock = Clock::start();
    let Some(conn_id) = handshake(&sock, &clock, cfg, stop)? else {
        let now = clock.now();
        return Ok(SendReport {
            output: Recorder::new(now, cfg.interval).finish(
                now,
                ActiveSpan::scheduled(now, None, now),
                &labels(cfg, &sock),
            ),
            stop: StopReason::Interrupted,
            lateness: Lateness::default(),
            ignored: 0,
            malformed: 0,
            feedback: 0,
            send_drops: 0,
            lies: 0,
        });
    };
    let start = clock.now();
    let end = start + cfg.duration;
    let config = cfg
        .config
        .clone()
        .unwrap_or_else(|| cfg.protocol.config(cfg.rate_cap));
    let ctx = FlowCtx::new(FlowId(0), start, Some(end), RngStream::from_seed(1));
    let (mut ep, _) = config.endpoints(&ctx);
    let mut rec = Recorder::new(start, cfg.interval);
    let mut filter = PeerFilter::new(cfg.to, conn_id);
    let mut breaker = CircuitBreaker::new(start);
    breaker.min_silence = cfg.breaker_silence;
    let mut lateness = Lateness::default();
    let (mut malformed, mut feedback, mut send_drops, mut lies) = (0u64, 0u64, 0u64, 0u64);
    let mut ledger = NonceLedger::default();
    let mut nonces = RngStream::from_seed(random_u64());
    let mut loss = 0.0;
    let (mut inbuf, mut outbuf) = (vec![0u8; 65_536], vec![0u8; 65_536]);
    let mut next_live = start + Duration::from_secs(1);
    let mut live_bytes = 0u64;
    let reason = loop {
        if stop.load(Ordering::Relaxed) {
            break StopReason::Interrupted;
        }
        let now = clock.now();
        if now >= end {
            break StopReason::Finished;
        }
        socket::drain(&sock, &mut inbuf, 256, |d, from| match wire::decode(d) {
            Ok(f) if !filter.admit(from, f.conn_id) => {}
            Ok(wire::Frame {
                body: Body::Packet(mut header),
                trailer,
                ..
            }) => {
                feedback += 1;
                if let Some((conn, claims_no_loss)) = header.feedback_claim() {
                    // Every report's range is checked in turn (ranges must follow on); only a
                    // claim of no loss needs its sum to be right.
                    let proven = wire::Echo::read(trailer).map(|e| ledger.verify(conn, &e));
                    if claims_no_loss && matches!(proven, None | Some(Some(false))) {
                        lies += 1;
                        header.forge_loss();
                    }
                }
                let p = socket::arrived(now, d.len(), 0, Direction::Reverse, header);
                ep.handle_packet(now, &p, &mut rec);
                if let Some(l) = header.reported_loss() {
                    loss = l;
                }
                let rtt = rec.last_rtt().unwrap_or(Duration::ZERO);
                breaker.feedback(now, header.reported_loss(), rtt);
            }
            Ok(_) => {}
            Err(_) => malformed += 1,
        })?;
        let mut paced = None;
        if let Some(t) = ep.poll_timeout().filter(|&t| t <= now) {
            ep.handle_timeout(now, &mut rec);
            paced = Some(t);
        }
        while let Some(p) = ep.poll_transmit(now) {
            let n = wire::encode(conn_id, &p.header, p.payload, &mut outbuf)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            if let Some((conn, seq)) = p.header.data_seq() {
                let at = n - p.payload as usize;
                let nonce = proof::write_nonce(&mut outbuf[at..n], nonces.next_u64() as u32);
                ledger.sent(conn, seq, nonce);
            }
            match sock.send_to(&outbuf[..n], cfg.to) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => send_drops += 1,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(e.into()),
            }
            rec.sent(now, p.size);
            live_bytes += p.size.as_bytes();
            if let Some(t) = paced {
                lateness.record(clock.now().saturating_since(t));
            }
        }
        if let Some(r) = breaker.check(now).filter(|_| cfg.circuit_breaker) {
            break r;
        }
        if now >= next_live {
            live(&Live {
                t_s: now.saturating_since(start).as_secs_f64(),
                rate_bps: (live_bytes * 8) as f64,
                rtt: rec.last_rtt(),
                loss,
            });
            live_bytes = 0;
            next_live += Duration::from_secs(1);
        }
        let deadline = ep.poll_timeout().map_or(next_live, |t| t.min(next_live));
        pacer::wait_towards(&clock, Some(deadline.min(end)));
    };
    let now = clock.now().min(end);
    // The sender knows its flow's start and stop: it was active from one to the other, or to
    // where it stopped.
    let span = ActiveSpan::scheduled(start, Some(end), now);
    Ok(SendReport {
        output: rec.finish(now, span, &labels(cfg, &sock)),
        stop: reason,
        lateness,
        ignored: filter.ignored,
        malformed,
        feedback,
        send_drops,
        lies,
    })
}

fn labels(cfg: &SendConfig, sock: &UdpSocket) -> FlowLabels {
    FlowLabels {
        protocol: cfg.protocol.name().to_string(),
        src: sock
            .local_addr()
            .map_or_else(|_| cfg.bind.to_string(), |a| a.to_string()),
        dst: cfg.to.to_string(),
        packet: Some(cfg.protocol.config(cfg.rate_cap).data_packet()),
    }
}
