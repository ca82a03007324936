//! `summary.json`: the run's facts and the per-flow and per-link totals.

use fairstream_sim::RunOutput;
use serde_json::{Value, json};

use crate::RunInfo;

/// A JSON number, or `null` for NaN and infinities (JSON has no NaN).
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// The summary as a JSON value.
pub fn summary_value(info: &RunInfo, out: &RunOutput) -> Value {
    let flows: Vec<Value> = out
        .flows
        .iter()
        .map(|f| {
            json!({
                "flow_id": f.flow_id, "name": f.name, "protocol": f.protocol, "src": f.src, "dst": f.dst,
                "start_s": num(f.start_s), "stop_s": num(f.stop_s),
                "packets_sent": f.packets_sent, "bytes_sent": f.bytes_sent,
                "packets_delivered": f.packets_delivered, "bytes_delivered": f.bytes_delivered,
                "goodput_bytes": f.goodput_bytes, "throughput_bps": num(f.throughput_bps), "goodput_bps": num(f.goodput_bps),
                "packets_dropped": f.packets_dropped, "loss_rate": num(f.loss_rate), "retransmits": f.retransmits,
                "mean_rtt_s": num(f.mean_rtt_s),
            })
        })
        .collect();
    let links: Vec<Value> = out
        .links
        .iter()
        .map(|l| {
            json!({
                "link_id": l.link_id, "name": l.name, "src": l.src, "dst": l.dst,
                "rate_bps": num(l.rate_bps), "delay_s": num(l.delay_s), "queue": l.queue,
                "packets_forwarded": l.packets_forwarded, "bytes_forwarded": l.bytes_forwarded,
                "packets_dropped": l.packets_dropped, "packets_corrupted": l.packets_corrupted,
                "utilisation": num(l.utilisation), "mean_queue_packets": num(l.mean_queue_packets),
            })
        })
        .collect();
    let wall = info.wall_time_s;
    json!({
        "name": info.name,
        "seed": out.seed,
        "duration_s": out.duration.as_secs_f64(),
        "events": out.events,
        "packets": out.packets,
        "wall_time_s": num(wall),
        "events_per_s": num(if wall > 0.0 { out.events as f64 / wall } else { f64::NAN }),
        "fairstream_version": env!("CARGO_PKG_VERSION"),
        "flows": flows,
        "links": links,
    })
}

/// The summary as pretty-printed JSON text.
pub fn summary_json(info: &RunInfo, out: &RunOutput) -> String {
    let mut s = serde_json::to_string_pretty(&summary_value(info, out))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
