//! A fairstream protocol over UDP through the real-time driver (`fairstream-rt`), unchanged:
//! its sender and receiver loops run with the scenario's configuration of the flow, on sockets
//! bound inside the hosts' namespaces. The driver's clocks start when its loops start; what they
//! record is moved onto the emulation's clock here.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;

use fairstream_core::{Duration, Instant};
use fairstream_proto::ProtocolConfig;
use fairstream_rt::clock::Clock;
use fairstream_rt::{RecvConfig, RtProtocol, SendConfig};
use serde_json::json;

use super::{FlowRecord, sleep_until};

/// What an end of a real-time-driver flow needs.
#[derive(Clone, Debug)]
pub struct RtEnd {
    /// The emulation's clock.
    pub clock: Clock,
    /// Bins of the series.
    pub interval: Duration,
    /// The emulation's length.
    pub duration: Duration,
    /// When the flow starts.
    pub start: Instant,
    /// When it stops.
    pub stop: Instant,
    /// The protocol and its configuration.
    pub protocol: RtProtocol,
    /// Its configuration.
    pub config: ProtocolConfig,
}

/// Runs the sender, bound to `bind`, to the receiver at `to`, from the flow's start to its stop.
pub fn send(
    end: &RtEnd,
    bind: SocketAddr,
    to: SocketAddr,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    if !sleep_until(&end.clock, end.start, stop) {
        return Ok(rec);
    }
    let t0 = end.clock.now();
    let mut cfg = SendConfig::new(to, end.protocol, end.stop.saturating_since(t0));
    cfg.bind = bind;
    cfg.interval = end.interval;
    cfg.config = Some(end.config.clone());
    // As in the simulator, which has no circuit breaker: a stream that loses half its packets
    // for a while (the streamer's start-up burst into a small bucket) goes on.
    cfg.circuit_breaker = false;
    let r = fairstream_rt::run_sender(&cfg, stop, &mut |_| {}).map_err(|e| e.to_string())?;
    rec.real_time_metrics(
        &r.output.metrics,
        t0.saturating_since(Instant::ZERO),
        end.interval,
    );
    rec.summaries = summaries(&r.output);
    let pacing = &r.lateness;
    rec.extra
        .insert("stop_reason".into(), json!(r.stop.to_string()));
    rec.extra.insert(
        "pacing_p99_us".into(),
        json!(pacing.quantile(0.99).as_nanos() / 1000),
    );
    rec.extra
        .insert("feedback_reports".into(), json!(r.feedback));
    rec.extra.insert("lying_reports".into(), json!(r.lies));
    rec.extra
        .insert("send_buffer_drops".into(), json!(r.send_drops));
    Ok(rec)
}

/// Runs the receiver on `sock` (bound in the receiver's namespace) until `stop`.
pub fn receive(
    end: &RtEnd,
    sock: &std::net::UdpSocket,
    listen: SocketAddr,
    stop: &AtomicBool,
) -> Result<FlowRecord, String> {
    let mut rec = FlowRecord::new(end.interval, end.duration);
    let mut cfg = RecvConfig::new(listen);
    cfg.interval = end.interval;
    cfg.idle_timeout = end.duration + Duration::from_secs(10);
    cfg.protocols = vec![end.protocol];
    cfg.config = Some(end.config.clone());
    let t0 = end.clock.now();
    let r =
        fairstream_rt::run_receiver(&cfg, sock, stop, &mut |_| {}).map_err(|e| e.to_string())?;
    let shift = t0.saturating_since(Instant::ZERO);
    let s = &r.output.flow_series;
    for i in 0..s.t_start.len() {
        let at = |x: f64| Instant::from_secs_f64(x) + shift;
        rec.delivered_over(
            at(s.t_start[i]),
            at(s.t_end[i]),
            end.interval,
            s.goodput_bytes[i],
        );
    }
    // A player's records (playout, frames) and the summaries they fold into.
    rec.real_time_metrics(&r.output.metrics, shift, end.interval);
    rec.summaries = summaries(&r.output);
    rec.extra
        .insert("receiver_stop_reason".into(), json!(r.stop.to_string()));
    rec.extra
        .insert("ignored_datagrams".into(), json!(r.ignored));
    rec.extra
        .insert("malformed_datagrams".into(), json!(r.malformed));
    Ok(rec)
}

/// The declared summary columns of a real-time run's one flow.
fn summaries(out: &fairstream_records::RunOutput) -> fairstream_records::Declared {
    out.flows
        .first()
        .map(|f| f.summaries.clone())
        .unwrap_or_default()
}
