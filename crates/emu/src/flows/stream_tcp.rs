//! Paper 000's streamer over a kernel TCP socket: the same server application the simulator runs
//! over its TCP ([`StreamServer`]: the frame schedule and the level rule), writing each released
//! frame into the socket while its **send-buffer rule** allows: bytes written and not yet
//! acknowledged (what the application wrote less `TCP_INFO`'s `tcpi_bytes_acked`) stay within the
//! flow's `send_buffer`, as the simulator's bounded send buffer counts them. The kernel's own
//! buffer (`SO_SNDBUF`) is set far larger, so it never decides first. The socket runs the
//! kernel's reno (chosen: the TCP of paper 000's time); the receiver is a kernel TCP receiver
//! reading as fast as it can ([`super::linux_tcp::receive`]).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use fairstream_core::{Duration, Instant};
use fairstream_proto::IP_TCP_HEADER;
use fairstream_proto::surestream::{StreamServer, SurestreamConfig};
use fairstream_rt::clock::Clock;
use serde_json::json;
use socket2::{Domain, Protocol, Socket, Type};

use super::FlowRecord;
use super::tcp_info::TcpInfo;

/// The congestion control of the streamer's socket (chosen).
pub const CONGESTION: &str = "reno";
/// How often the server looks at its socket for acknowledged bytes when it has a frame waiting.
const POLL: Duration = Duration::from_millis(1);

/// What the server of a streamer over kernel TCP needs.
#[derive(Clone, Debug)]
pub struct StreamEnd {
    /// The emulation's clock.
    pub clock: Clock,
    /// Bins of the series.
    pub interval: Duration,
    /// The emulation's length.
    pub duration: Duration,
    /// When the player connects.
    pub start: Instant,
    /// When the flow stops.
    pub stop: Instant,
    /// The streamer's configuration.
    pub config: SurestreamConfig,
}

/// The server's socket, bound to `bind` (called inside the server's namespace).
pub fn server_socket(config: &SurestreamConfig, bind: SocketAddr) -> Result<Socket, String> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| format!("a TCP socket: {e}"))?;
    s.set_tcp_congestion(CONGESTION.as_bytes())
        .map_err(|e| format!("congestion control {CONGESTION}: {e}"))?;
    let mss = config
        .packet_size
        .as_bytes()
        .saturating_sub(IP_TCP_HEADER)
        .max(88) as u32;
    s.set_tcp_mss(mss)
        .map_err(|e| format!("TCP_MAXSEG {mss}: {e}"))?;
    let room = (4 * config.send_buffer.as_bytes()).max(1 << 18) as usize;
    let _ = s.set_send_buffer_size(room);
    s.set_reuse_address(true).map_err(|e| e.to_string())?;
    s.bind(&bind.into())
        .map_err(|e| format!("bind {bind}: {e}"))?;
    Ok(s)
}

/// Connects at the flow's start and streams the clip until the flow's stop.
pub fn send(
    end: &StreamEnd,
    sock: Socket,
    to: SocketAddr,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    let Some(mut stream) = super::linux_tcp::connect_at(&end.clock, end.start, sock, to, stop)?
    else {
        return Ok(rec);
    };
    let config = &end.config;
    let capacity = config.send_buffer.as_bytes();
    let mut app = StreamServer::new(config, end.clock.now(), Some(end.stop));
    let zeros = vec![0u8; 1 << 16];
    let mut written = 0u64;
    let mut failure = None;
    let mut sink = MetricsInto(&mut rec);
    while !stop.load(Ordering::Relaxed) {
        let now = end.clock.now();
        if now >= end.stop {
            break;
        }
        if app.poll_timeout().is_some_and(|t| t <= now) {
            app.on_timeout(now, &mut sink);
        }
        let acked = TcpInfo::of(&stream)
            .ok()
            .and_then(|i| i.bytes_acked)
            .unwrap_or(written);
        let mut free = capacity.saturating_sub(written.saturating_sub(acked));
        app.pump(now, &mut sink, &mut |_, remaining| {
            let mut n = remaining.min(free);
            let mut done = 0;
            while n > 0 && failure.is_none() {
                let chunk = (n as usize).min(zeros.len());
                match stream.write(&zeros[..chunk]) {
                    Ok(k) => {
                        done += k as u64;
                        n -= k as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => failure = Some(format!("write: {e}")),
                }
            }
            free -= done;
            written += done;
            done
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let next = app
            .poll_timeout()
            .unwrap_or(end.stop)
            .min(now + POLL)
            .min(end.stop);
        let nap = next.saturating_since(end.clock.now());
        std::thread::sleep(std::time::Duration::from_nanos(nap.as_nanos()));
    }
    if let Ok(info) = TcpInfo::of(&stream) {
        rec.retransmits = u64::from(info.total_retrans);
    }
    rec.extra.insert("bytes_written".into(), json!(written));
    rec.extra.insert("congestion".into(), json!(CONGESTION));
    rec.extra.insert("final_level".into(), json!(app.level()));
    Ok(rec)
}

/// A metric sink that keeps the records in a [`FlowRecord`].
struct MetricsInto<'a>(&'a mut FlowRecord);

impl fairstream_proto::MetricSink for MetricsInto<'_> {
    fn record(&mut self, now: Instant, metric: fairstream_proto::Metric) {
        self.0.metric(now, metric.kind.name, metric.value);
    }
}
