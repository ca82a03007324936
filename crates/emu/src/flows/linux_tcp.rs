//! A flow of the kernel's TCP: a sender socket with the flow's congestion control
//! (`TCP_CONGESTION`) and MSS (`TCP_MAXSEG`), fed by a bulk source (always data to send) or an
//! application writing at the flow's `rate`, its `TCP_INFO` sampled every record interval into
//! the metric records; the receiver reads as fast as it can and counts what its application
//! got (the goodput). SACK and timestamps are the hosts' namespace settings (see `crate::run`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};

use fairstream_core::{Duration, Instant};
use fairstream_rt::clock::Clock;
use fairstream_scenario::LinuxTcpConfig;
use serde_json::json;
use socket2::{Domain, Protocol, Socket, Type};

use super::tcp_info::TcpInfo;
use super::{FlowRecord, sleep_until, transient};

/// What an end of a kernel TCP flow needs.
#[derive(Clone, Debug)]
pub struct TcpEnd {
    /// The emulation's clock.
    pub clock: Clock,
    /// Bins of the series (and how often `TCP_INFO` is sampled).
    pub interval: Duration,
    /// The emulation's length.
    pub duration: Duration,
    /// When the flow starts.
    pub start: Instant,
    /// When it stops.
    pub stop: Instant,
    /// Its settings.
    pub tcp: LinuxTcpConfig,
}

/// How long a blocking call waits before the loop looks at the clock again.
const TICK: std::time::Duration = std::time::Duration::from_millis(5);

/// A socket for the sender with the flow's settings, bound to `bind` (called inside the
/// sender's namespace). Refuses a congestion control the kernel does not offer.
pub fn sender_socket(tcp: &LinuxTcpConfig, bind: SocketAddr) -> Result<Socket, String> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| format!("a TCP socket: {e}"))?;
    s.set_tcp_congestion(tcp.congestion.as_bytes())
        .map_err(|e| {
            let offered = fairstream_scenario::kernel::available_congestion()
                .map_or_else(|| "unknown".to_string(), |v| v.join(", "));
            format!(
                "congestion control `{}`: {e} (the kernel offers: {offered})",
                tcp.congestion
            )
        })?;
    s.set_tcp_mss(tcp.mss())
        .map_err(|e| format!("TCP_MAXSEG {}: {e}", tcp.mss()))?;
    s.set_reuse_address(true).map_err(|e| e.to_string())?;
    s.bind(&bind.into())
        .map_err(|e| format!("bind {bind}: {e}"))?;
    Ok(s)
}

/// Connects `sock` to `to` at `start` on `clock` (`None`: stopped before).
pub(crate) fn connect_at(
    clock: &Clock,
    start: Instant,
    sock: Socket,
    to: SocketAddr,
    stop: &AtomicBool,
) -> Result<Option<TcpStream>, String> {
    if !sleep_until(clock, start, stop) {
        return Ok(None);
    }
    sock.connect_timeout(&to.into(), std::time::Duration::from_secs(3))
        .map_err(|e| format!("connect to {to}: {e}"))?;
    Ok(Some(sock.into()))
}

/// Connects `sock` to `to` at the flow's start and sends until its stop.
pub fn send(
    end: &TcpEnd,
    sock: Socket,
    to: SocketAddr,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    let Some(mut stream) = connect_at(&end.clock, end.start, sock, to, stop)? else {
        return Ok(rec);
    };
    stream
        .set_write_timeout(Some(TICK))
        .map_err(|e| e.to_string())?;
    let chunk = match end.tcp.rate {
        Some(_) => end.tcp.mss() as usize,
        None => 1 << 16,
    };
    let buf = vec![0x5au8; chunk];
    let mut next_sample = end.clock.now();
    let mut next_write = end.clock.now();
    let mut written = 0u64;
    let mut last = TcpInfo::default();
    while !stop.load(Ordering::Relaxed) {
        let now = end.clock.now();
        if now >= end.stop {
            break;
        }
        if now >= next_sample {
            if let Ok(info) = TcpInfo::of(&stream) {
                record_info(&mut rec, now, end.interval, &info);
                last = info;
            }
            next_sample += end.interval;
        }
        if let Some(rate) = end.tcp.rate
            && now < next_write
        {
            let until = next_write.min(next_sample).min(end.stop);
            let nap = until.saturating_since(now);
            std::thread::sleep(std::time::Duration::from_nanos(nap.as_nanos()));
            let _ = rate;
            continue;
        }
        match stream.write(&buf) {
            Ok(n) => {
                written += n as u64;
                if let Some(rate) = end.tcp.rate {
                    next_write += rate.transmit_time(fairstream_core::DataSize::bytes(n as u64));
                }
            }
            Err(e) if transient(&e) => {}
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    if let Ok(info) = TcpInfo::of(&stream) {
        last = info;
    }
    rec.retransmits = u64::from(last.total_retrans);
    rec.extra.insert("bytes_written".into(), json!(written));
    rec.extra.insert("mss".into(), json!(last.snd_mss));
    rec.extra
        .insert("congestion".into(), json!(end.tcp.congestion.clone()));
    Ok(rec)
}

/// `TCP_INFO` at `now` as metric records (and the smoothed RTT as the bin's RTT sample).
fn record_info(rec: &mut FlowRecord, now: Instant, interval: Duration, i: &TcpInfo) {
    rec.metric(now, "cwnd", f64::from(i.cwnd));
    if i.ssthresh < 0x7fff_ffff {
        rec.metric(now, "ssthresh", f64::from(i.ssthresh));
    }
    if !i.srtt.is_zero() {
        rec.metric(now, "srtt", i.srtt.as_secs_f64());
        rec.rtt_sample(now, interval, i.srtt);
    }
    rec.metric(now, "rto", i.rto.as_secs_f64());
    rec.metric(now, "retransmits", f64::from(i.total_retrans));
    if let Some(r) = i.delivery_rate {
        rec.metric(now, "delivery_rate", (r * 8) as f64);
    }
    if let Some(r) = i.pacing_rate.filter(|&r| r != u64::MAX) {
        rec.metric(now, "pacing_rate", (r * 8) as f64);
    }
    if let Some(m) = i.min_rtt.filter(|m| !m.is_zero()) {
        rec.metric(now, "min_rtt", m.as_secs_f64());
    }
    if let Some(n) = i.notsent_bytes {
        rec.metric(now, "notsent_bytes", f64::from(n));
    }
}

/// Accepts the sender's connection on `listener` and reads until `stop`.
pub fn receive(
    end: &TcpEnd,
    listener: &TcpListener,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut stream = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(rec);
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(TICK),
            Err(e) => return Err(format!("accept: {e}")),
        }
    };
    stream.set_nonblocking(false).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(TICK))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 1 << 17];
    let mut total = 0u64;
    while !stop.load(Ordering::Relaxed) {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                rec.delivered(end.clock.now(), end.interval, n as u64);
            }
            Err(e) if transient(&e) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    rec.extra.insert("bytes_read".into(), json!(total));
    Ok(rec)
}
