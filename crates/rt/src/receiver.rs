//! The receiver's loop: waits for a sender's `Hello`, answers it (never with more bytes than it
//! got), runs the protocol's receiver endpoint for that one connection and ignores (and counts)
//! every other datagram. It holds state for one connection only, whatever arrives: a flood of
//! garbage or spoofed datagrams costs counters, not memory.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

use fairstream_core::{Duration, FlowId, Instant, RngStream};
use fairstream_proto::wire::{self, AckStatus, Body, Handshake, WireError};
use fairstream_proto::{AnyEndpoint, Direction, Endpoint, FlowCtx, Header, ProtocolConfig};
use fairstream_records::RunOutput;

use crate::clock::Clock;
use crate::pacer;
use crate::proof::{self, NonceSums};
use crate::record::{FlowLabels, Live, Recorder};
use crate::session::{PeerFilter, StopReason};
use crate::{RtError, RtProtocol, socket};

/// What a receiver runs.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    /// The address it listens on.
    pub listen: SocketAddr,
    /// Width of the interval series' bins.
    pub interval: Duration,
    /// Silence of its sender after which the run ends.
    pub idle_timeout: Duration,
    /// How long to wait for a sender at all (`None`: until stopped).
    pub wait_for_sender: Option<Duration>,
    /// Protocols it accepts.
    pub protocols: Vec<RtProtocol>,
    /// Misbehaviour on purpose, for attack tests and demonstrations (none by default).
    pub impairment: Impairment,
    /// The configuration its receiver endpoint is built from, when not the protocol's default
    /// (the emulator runs a scenario's flow with the scenario's parameters).
    pub config: Option<ProtocolConfig>,
}

/// What a receiver can be made to do wrong, to show what a sender does about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Impairment {
    /// Treat every `n`-th data packet as lost on the way (0: none).
    pub drop_every: u32,
    /// Report no loss whatever was lost (its echo can only sum what it got).
    pub lie: bool,
}

impl RecvConfig {
    /// A receiver on `listen` with default settings.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            interval: Duration::from_millis(100),
            idle_timeout: Duration::from_secs(3),
            wait_for_sender: None,
            protocols: RtProtocol::ALL.to_vec(),
            impairment: Impairment::default(),
            config: None,
        }
    }
}

/// What a receiver's run produced.
#[derive(Debug)]
pub struct RecvReport {
    /// The results, as a simulated run's.
    pub output: RunOutput,
    /// Why it stopped.
    pub stop: StopReason,
    /// The protocol its sender ran, if one came.
    pub protocol: Option<RtProtocol>,
    /// Datagrams ignored: another address or connection.
    pub ignored: u64,
    /// Datagrams that did not decode.
    pub malformed: u64,
}

/// The one connection a receiver serves.
struct Conn {
    filter: PeerFilter,
    protocol: RtProtocol,
    token: u64,
    ep: AnyEndpoint,
    last_heard: Instant,
    highest: [Option<u64>; 256],
    sums: Box<NonceSums>,
    arrived: u64,
}

impl Conn {
    /// Sends every report the endpoint has ready, each with the echo of its range (a lie
    /// when `lie`, to test the sender's proof).
    fn send_reports(
        &mut self,
        now: Instant,
        lie: bool,
        sock: &UdpSocket,
        outbuf: &mut [u8],
    ) -> std::io::Result<()> {
        while let Some(mut p) = self.ep.poll_transmit(now) {
            let conn = p.header.feedback_claim().map(|(conn, _)| conn);
            let (lag, cap) = (p.header.echo_lag(), p.header.report_top());
            if lie {
                p.header.hide_loss();
            }
            let n = wire::encode(self.filter.conn_id, &p.header, p.payload, outbuf)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            if let Some(conn) = conn {
                self.sums
                    .echo(conn, lag, cap)
                    .write(&mut outbuf[n - wire::ECHO_LEN..n])
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
            }
            let _ = sock.send_to(&outbuf[..n], self.filter.peer);
        }
        Ok(())
    }
}

/// Binds `cfg.listen` (so that a port in use fails before anything else).
pub fn bind_receiver(cfg: &RecvConfig) -> Result<UdpSocket, RtError> {
    socket::bind(cfg.listen)
}

/// Runs a receiver on a bound socket until its sender has been silent for `idle_timeout`, or
/// `stop` is set; `live` is called about once a second while a sender is connected.
pub fn run_receiver(
    cfg: &RecvConfig,
    sock: &UdpSocket,
    stop: &AtomicBool,
    live: &mut dyn FnMut(&Live),
) -> Result<RecvReport, RtError> {
    let clock = Clock::start();
    let mut conn: Option<Conn> = None;
    let mut rec = Recorder::new(Instant::ZERO, cfg.interval);
    let mut start = Instant::ZERO;
    let (mut ignored, mut malformed) = (0u64, 0u64);
    let (mut inbuf, mut outbuf) = (vec![0u8; 65_536], vec![0u8; 2048]);
    let mut replies: Vec<(SocketAddr, usize, u32, Handshake)> = Vec::with_capacity(256);
    let mut next_live = Instant::ZERO + Duration::from_secs(1);
    let (mut live_bytes, mut live_lost, mut live_got) = (0u64, 0u64, 0u64);
    let reason = loop {
        if stop.load(Ordering::Relaxed) {
            break StopReason::Interrupted;
        }
        let now = clock.now();
        if conn.is_none()
            && cfg
                .wait_for_sender
                .is_some_and(|w| now >= Instant::ZERO + w)
        {
            break StopReason::PeerSilent(now.saturating_since(Instant::ZERO));
        }
        if let Some(c) = &conn {
            let silent = now.saturating_since(c.last_heard);
            if silent >= cfg.idle_timeout {
                break StopReason::PeerSilent(silent);
            }
        }
        replies.clear();
        let mut send_error = None;
        socket::drain(sock, &mut inbuf, 256, |d, from| match wire::decode(d) {
            Err(WireError::UnknownVersion(_)) => {
                // Answer in this build's version, never with more bytes than came in.
                if d.len() >= wire::FRAME_HEADER_LEN + wire::ACK_LEN && replies.len() < 256 {
                    let id = u32::from_be_bytes([d[4], d[5], d[6], d[7]]);
                    let ack = Handshake::Ack {
                        status: AckStatus::VersionMismatch,
                        token: 0,
                    };
                    replies.push((from, d.len(), id, ack));
                }
                malformed += 1;
            }
            Err(_) => malformed += 1,
            Ok(f) => match f.body {
                Body::Handshake(Handshake::Hello { protocol, token }) => {
                    let wanted =
                        RtProtocol::from_number(protocol).filter(|p| cfg.protocols.contains(p));
                    let status = match (&conn, wanted) {
                        (Some(c), _) if c.filter.peer == from && c.filter.conn_id == f.conn_id => {
                            (c.token == token).then_some(AckStatus::Accepted)
                        }
                        (Some(_), _) => Some(AckStatus::Busy),
                        (None, None) => Some(AckStatus::UnknownProtocol),
                        (None, Some(p)) => {
                            let config = cfg.config.clone().unwrap_or_else(|| p.config(None));
                            let ctx = FlowCtx::new(FlowId(0), now, None, RngStream::from_seed(1));
                            let (_, ep) = config.endpoints(&ctx);
                            start = now;
                            rec = Recorder::new(now, cfg.interval);
                            next_live = now + Duration::from_secs(1);
                            conn = Some(Conn {
                                filter: PeerFilter::new(from, f.conn_id),
                                protocol: p,
                                token,
                                ep,
                                last_heard: now,
                                highest: [None; 256],
                                sums: Box::default(),
                                arrived: 0,
                            });
                            Some(AckStatus::Accepted)
                        }
                    };
                    if let Some(status) = status
                        && replies.len() < 256
                    {
                        replies.push((from, d.len(), f.conn_id, Handshake::Ack { status, token }));
                    }
                }
                Body::Packet(header) => {
                    let Some(c) = conn.as_mut().filter(|c| c.filter.peer == from) else {
                        ignored += 1;
                        return;
                    };
                    if !c.filter.admit(from, f.conn_id) {
                        return;
                    }
                    c.last_heard = now;
                    c.arrived += 1;
                    let every = u64::from(cfg.impairment.drop_every);
                    if every > 0 && c.arrived % every == 0 {
                        return; // impaired: as if lost on the way
                    }
                    if let Some((conn, seq)) = header.data_seq() {
                        c.sums.received(conn, seq, proof::read_nonce(f.trailer));
                    }
                    let payload = f.payload_len();
                    let p = socket::arrived(now, d.len(), payload, Direction::Forward, header);
                    let size = p.size;
                    c.ep.handle_packet(now, &p, &mut rec);
                    // Drained after every packet, as the endpoint contract says: a receiver
                    // that acknowledges each packet keeps one ACK at a time.
                    if let Err(e) = c.send_reports(now, cfg.impairment.lie, sock, &mut outbuf) {
                        send_error.get_or_insert(e);
                    }
                    rec.delivered(now, size, payload as u64);
                    live_bytes += size.as_bytes();
                    live_got += 1;
                    let gap = gap(&mut c.highest, &header);
                    if gap > 0 {
                        rec.lost(now, gap);
                        live_lost += gap;
                    }
                }
                _ => ignored += 1,
            },
        })?;
        if let Some(e) = send_error {
            return Err(e.into());
        }
        for &(to, got, id, ack) in &replies {
            let n = wire::encode_handshake(id, &ack, &mut outbuf).expect("an ack fits");
            if n <= got {
                let _ = sock.send_to(&outbuf[..n], to);
            }
        }
        if let Some(c) = &mut conn {
            if c.ep.poll_timeout().is_some_and(|t| t <= now) {
                c.ep.handle_timeout(now, &mut rec);
            }
            c.send_reports(now, cfg.impairment.lie, sock, &mut outbuf)?;
        }
        if conn.is_some() && now >= next_live {
            let seen = live_got + live_lost;
            live(&Live {
                t_s: now.saturating_since(start).as_secs_f64(),
                rate_bps: (live_bytes * 8) as f64,
                rtt: None,
                loss: if seen > 0 {
                    live_lost as f64 / seen as f64
                } else {
                    0.0
                },
            });
            (live_bytes, live_lost, live_got) = (0, 0, 0);
            next_live += Duration::from_secs(1);
        }
        // Waiting for a sender, nothing is due: sleep a slice at a time (the live line's time
        // passed long ago, and waiting towards it would spin a core).
        let deadline = conn
            .as_ref()
            .map(|c| c.ep.poll_timeout().map_or(next_live, |t| t.min(next_live)));
        pacer::wait_towards(&clock, deadline);
    };
    let end = match (&conn, reason) {
        (Some(c), StopReason::PeerSilent(_)) => c.last_heard,
        _ => clock.now(),
    };
    let protocol = conn.as_ref().map(|c| c.protocol);
    let labels = FlowLabels {
        protocol: protocol.map_or("none", RtProtocol::name).to_string(),
        src: conn
            .as_ref()
            .map_or_else(String::new, |c| c.filter.peer.to_string()),
        dst: sock
            .local_addr()
            .map_or_else(|_| cfg.listen.to_string(), |a| a.to_string()),
        packet: protocol.map(|p| p.config(None).data_packet()),
    };
    // The receiver sees the flow only through its packets: it was active from the first to the
    // last (never until the receiver was stopped).
    let end = end.max(start);
    let span = rec.packet_span(start);
    Ok(RecvReport {
        output: rec.finish(end, span, &labels),
        stop: reason,
        protocol,
        ignored: ignored + conn.as_ref().map_or(0, |c| c.filter.ignored),
        malformed,
    })
}

/// Data packets skipped by `header`'s sequence number (per sub-connection), counting a gap once.
fn gap(highest: &mut [Option<u64>; 256], header: &Header) -> u64 {
    let Some((conn, seq)) = header.data_seq() else {
        return 0;
    };
    let h = &mut highest[usize::from(conn)];
    let expected = h.map_or(0, |v| v + 1);
    if seq < expected {
        return 0;
    }
    *h = Some(seq);
    seq - expected
}
