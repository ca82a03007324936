//! A CBR flow in real time: the scenario's own `CbrSource` endpoint (rate schedule, on/off,
//! random gaps) paced on the emulation's clock, each datagram carrying its sequence number and
//! send instant; the receiver takes each datagram's one-way delay less what the links alone
//! account for (their propagation delays and transmission times: no queueing), the emulator's
//! own overhead as the flow sees it: to the kernel's receive stamp (when the packet reached the
//! receiving host), and to the instant the receiving thread had it.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use fairstream_core::{DataSize, Duration, FlowId, Instant, RngStream};
use fairstream_proto::cbr::CbrConfig;
use fairstream_proto::{Endpoint, FlowCtx, IP_UDP_HEADER, NullSink, ProtocolConfig};
use fairstream_rt::clock::Clock;
use fairstream_rt::pacer::{self, Lateness};
use serde_json::json;

use super::{FlowRecord, sleep_until, transient};
use crate::stamp::KernelClock;

/// What a CBR end needs.
#[derive(Clone, Debug)]
pub struct CbrEnd {
    /// The emulation's clock.
    pub clock: Clock,
    /// The flow's number.
    pub index: usize,
    /// The scenario's seed.
    pub seed: u64,
    /// Bins of the series.
    pub interval: Duration,
    /// The emulation's length.
    pub duration: Duration,
    /// When the source starts and stops.
    pub start: Instant,
    /// When it stops.
    pub stop: Instant,
    /// What the links alone take to carry a packet of `size` to the receiver: per link of the
    /// route, its delay and base rate.
    pub path: Vec<(Duration, fairstream_core::Bitrate)>,
}

impl CbrEnd {
    fn base(&self, size: DataSize) -> Duration {
        self.path.iter().fold(Duration::ZERO, |d, &(delay, rate)| {
            d + delay + rate.transmit_time(size)
        })
    }
}

/// Sends the flow from `sock` (bound in the sender's namespace) to `to` until its stop.
pub fn send(
    end: &CbrEnd,
    cfg: &CbrConfig,
    sock: &UdpSocket,
    to: SocketAddr,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    if !sleep_until(&end.clock, end.start, stop) {
        return Ok(rec);
    }
    let config = ProtocolConfig::Cbr(cfg.clone());
    let rng = RngStream::derive(end.seed, "cbr", end.index as u64);
    let ctx = FlowCtx::new(FlowId(end.index as u32), end.start, Some(end.stop), rng);
    let (mut ep, _) = config.endpoints(&ctx);
    let mut buf = vec![0u8; 65_536];
    let (mut sent, mut refused) = (0u64, 0u64);
    let mut lateness = Lateness::default();
    while !stop.load(Ordering::Relaxed) {
        let now = end.clock.now();
        if now >= end.stop {
            break;
        }
        let mut due = None;
        if let Some(t) = ep.poll_timeout().filter(|&t| t <= now) {
            ep.handle_timeout(now, &mut NullSink);
            due = Some(t);
        }
        while let Some(p) = ep.poll_transmit(now) {
            let n = (p.size.as_bytes().saturating_sub(IP_UDP_HEADER) as usize).min(buf.len());
            if n >= 16 {
                buf[..8].copy_from_slice(&sent.to_be_bytes());
                buf[8..16].copy_from_slice(&end.clock.now().as_nanos().to_be_bytes());
            }
            match sock.send_to(&buf[..n], to) {
                Ok(_) => sent += 1,
                Err(_) => refused += 1,
            }
            if let Some(t) = due {
                lateness.record(end.clock.now().saturating_since(t));
            }
        }
        let next = ep.poll_timeout().map_or(end.stop, |t| t.min(end.stop));
        pacer::wait_towards(&end.clock, Some(next));
    }
    rec.extra.insert("datagrams_sent".into(), json!(sent));
    rec.extra.insert("send_refused".into(), json!(refused));
    rec.extra.insert(
        "pacing_p99_us".into(),
        json!(lateness.quantile(0.99).as_nanos() / 1000),
    );
    Ok(rec)
}

/// Receives the flow on `sock` until `stop`. Each datagram's arrival is the kernel's receive
/// stamp (the instant it entered the receiving host's stack, as a wire would deliver it), so the
/// receiving thread's own wake-up plays no part in the link's delay; the delay as this thread
/// saw it (stamped on return from `recvmsg`) is reported beside it.
pub fn receive(end: &CbrEnd, sock: &UdpSocket, stop: &AtomicBool) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    sock.set_read_timeout(Some(std::time::Duration::from_millis(20)))
        .map_err(|e| e.to_string())?;
    // Without the option (never seen on Linux) each arrival is the thread's own instant.
    let _ = crate::sys::set_rx_timestamps(sock.as_fd());
    let mut buf = vec![0u8; 65_536];
    let (mut excess, mut excess_app) = (Lateness::default(), Lateness::default());
    let (mut early, mut got, mut stamps) = (0u64, 0u64, 0u64);
    let mut offset = KernelClock::new(&end.clock);
    while !stop.load(Ordering::Relaxed) {
        let (n, kernel) = match crate::sys::recv_stamped(sock.as_fd(), &mut buf) {
            Ok(r) => r,
            Err(e) if transient(&e) => {
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        let now = end.clock.now();
        let arrived = kernel.map_or(now, |k| offset.instant_of(k, now));
        got += 1;
        stamps += u64::from(kernel.is_some());
        rec.delivered(now, end.interval, n as u64);
        if n >= 16 {
            let mut t = [0u8; 8];
            t.copy_from_slice(&buf[8..16]);
            let sent = Instant::from_nanos(u64::from_be_bytes(t));
            let base = end.base(DataSize::bytes(n as u64 + IP_UDP_HEADER));
            let owd = arrived.saturating_since(sent);
            if owd < base {
                early += 1;
            }
            let over = |d: Duration| if d > base { d - base } else { Duration::ZERO };
            excess.record(over(owd));
            excess_app.record(over(now.saturating_since(sent)));
        }
    }
    let summary = |h: &Lateness| {
        let us = |q: f64| h.quantile(q).as_nanos() as f64 / 1e3;
        json!({
            "packets": h.count(),
            "p50_us": us(0.5),
            "p90_us": us(0.9),
            "p99_us": us(0.99),
            "p999_us": us(0.999),
            "max_us": h.max().as_nanos() as f64 / 1e3,
        })
    };
    let mut kernel = summary(&excess);
    kernel["what"] = json!(
        "one-way delay less the links' propagation delays and transmission times, to the kernel's receive stamp"
    );
    kernel["kernel_stamps"] = json!(stamps);
    kernel["earlier_than_the_links_allow"] = json!(early);
    rec.extra.insert("one_way_delay_excess".into(), kernel);
    let mut app = summary(&excess_app);
    app["what"] = json!("the same, to the instant the receiving thread had the datagram");
    rec.extra
        .insert("one_way_delay_excess_application".into(), app);
    rec.extra.insert("datagrams_received".into(), json!(got));
    Ok(rec)
}
