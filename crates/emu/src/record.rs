//! What an emulation produced, in the run record types (`fairstream-records`, re-exported
//! here), so that `fairstream-results` writes the same tables and `summary.json` as for a
//! simulated run: the flows' counts and the
//! links' as the forwarder saw them, the goodput and RTT the flows' own ends measured, their
//! metric records; and `emu.json`, what only an emulation has: each link's departure error (how
//! long after its logical instant a packet was handed on), packets forwarded late, what the
//! forwarder could not route, each flow's ends' own reports, and the machine's load.

use fairstream_core::Instant;
use fairstream_sim::LinkParams;
// Every module of the emulator takes the run records from here.
pub use fairstream_records::{
    ActiveSpan, FlowSeries, FlowSummary, LinkSeries, LinkSummary, MetricRecords, RunOutput,
};
use serde_json::{Value, json};

use crate::flows::FlowRecord;
use crate::forward::{Core, LATE, MAX_SPIN, SPIN, SPIN_SHARE};
use crate::plan::Plan;

/// The results of the emulation of `plan`, stopped at `end`.
pub(crate) fn output(
    plan: &Plan,
    core: &Core,
    records: &[(Option<FlowRecord>, Option<FlowRecord>)],
    end: Instant,
) -> RunOutput {
    let mut series = core.flow_series.clone();
    let n = plan.flows.len().max(1);
    // The ends' bins past the forwarder's last row (what arrived after the run's end, from
    // packets still in flight) go into that last row, so that the series add up to the summary.
    let last = (series.flow_id.len() / n).saturating_sub(1);
    for row in 0..series.flow_id.len() {
        let (flow, bin) = (series.flow_id[row] as usize, row / n);
        let (tx, rx) = &records[flow];
        if let Some(r) = rx {
            series.goodput_bytes[row] = row_bins(&r.goodput, bin, last).iter().sum();
        }
        if let Some(r) = tx {
            let (sum, count) = row_bins(&r.rtt, bin, last)
                .iter()
                .fold((0.0, 0), |(s, c), &(a, b)| (s + a, c + b));
            if count > 0 {
                series.rtt_mean_s[row] = sum / count as f64;
            }
        }
    }
    let mut metrics = MetricRecords::default();
    let mut flows = Vec::with_capacity(plan.flows.len());
    for (i, f) in plan.flows.iter().enumerate() {
        let (tx, rx) = &records[i];
        if plan.metrics {
            // Both ends' records, in time order (the sender's first at a tie), as the simulator
            // records a flow's.
            let ends: Vec<&MetricRecords> =
                [tx, rx].into_iter().flatten().map(|r| &r.metrics).collect();
            let mut rows: Vec<(f64, &'static str, f64)> = ends
                .iter()
                .flat_map(|m| (0..m.t.len()).map(|k| (m.t[k], m.metric[k], m.value[k])))
                .collect();
            rows.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (t, name, value) in rows {
                if !plan.metric_selection.keeps_name(name) {
                    continue;
                }
                metrics.t.push(t);
                metrics.flow_id.push(i as u32);
                metrics.metric.push(name);
                metrics.value.push(value);
            }
        }
        let c = core.flows_total[i];
        let goodput: u64 = rx.as_ref().map_or(0, |r| r.goodput.iter().sum());
        let (rtt_sum, rtt_n) = tx.as_ref().map_or((0.0, 0), |r| {
            r.rtt
                .iter()
                .fold((0.0, 0), |(s, n), &(a, b)| (s + a, n + b))
        });
        let span = ActiveSpan::scheduled(f.start, Some(f.stop), end);
        let packet = f.kind.data_packet();
        flows.push(FlowSummary {
            flow_id: i as u32,
            name: f.name.clone(),
            protocol: f.kind.label(),
            src: plan.hosts[f.src].name.clone(),
            dst: plan.hosts[f.dst].name.clone(),
            start_s: f.start.as_secs_f64(),
            stop_s: span.stop.as_secs_f64(),
            packet,
            packets_sent: c.packets_sent,
            bytes_sent: c.bytes_sent,
            packets_delivered: c.packets_delivered,
            bytes_delivered: c.bytes_delivered,
            goodput_bytes: goodput,
            packets_dropped: c.packets_dropped,
            retransmits: tx.as_ref().map_or(0, |r| r.retransmits),
            throughput_bps: span.bits_per_sec(c.bytes_delivered),
            goodput_bps: span.bits_per_sec(goodput),
            loss_rate: if c.packets_sent > 0 {
                c.packets_dropped as f64 / c.packets_sent as f64
            } else {
                0.0
            },
            mean_rtt_s: if rtt_n > 0 {
                rtt_sum / rtt_n as f64
            } else {
                f64::NAN
            },
            summaries: [tx, rx]
                .into_iter()
                .flatten()
                .flat_map(|r| r.summaries.iter().cloned())
                .collect(),
        });
    }
    let links = core
        .links()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let spec = &plan.links[i];
            let cap = l.capacity_bits(Instant::ZERO, end);
            LinkParams::of(spec, l.queue()).describe(LinkSummary {
                link_id: i as u32,
                name: plan.link_names[i].clone(),
                src: plan.nodes[spec.from.index()].clone(),
                dst: plan.nodes[spec.to.index()].clone(),
                rate_bps: spec.capacity.base().as_bps_f64(),
                delay_s: spec.delay.as_secs_f64(),
                packets_forwarded: l.total.packets_forwarded,
                bytes_forwarded: l.total.bytes_forwarded,
                packets_dropped: l.total.packets_dropped,
                packets_corrupted: l.total.packets_corrupted,
                utilisation: if cap > 0.0 {
                    (l.total.bytes_forwarded * 8) as f64 / cap
                } else {
                    0.0
                },
                mean_queue_packets: l.mean_queue(end),
                ..LinkSummary::default()
            })
        })
        .collect();
    RunOutput {
        duration: end.saturating_since(Instant::ZERO),
        seed: plan.seed,
        events: core.stats.packets_read,
        packets: core.stats.packets_read,
        flow_names: plan.flows.iter().map(|f| f.name.clone()).collect(),
        link_names: plan.link_names.clone(),
        flows,
        links,
        flow_series: series,
        link_series: core.link_series.clone(),
        metrics,
        summary_columns: fairstream_proto::ProtocolConfig::summary_columns(),
        ..RunOutput::default()
    }
}

/// The bins of an end's record that series row `bin` takes: its own, and for the `last` row
/// every bin after it too.
fn row_bins<T>(values: &[T], bin: usize, last: usize) -> &[T] {
    let end = if bin == last {
        values.len()
    } else {
        (bin + 1).min(values.len())
    };
    values.get(bin..end).unwrap_or_default()
}

/// `emu.json`.
pub(crate) fn emu_json(
    plan: &Plan,
    core: &Core,
    records: &[(Option<FlowRecord>, Option<FlowRecord>)],
    device: crate::device::DeviceKind,
    load_before: Option<f64>,
    load_after: Option<f64>,
) -> Value {
    let links: Vec<Value> = core
        .errors
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let us = |q: f64| e.quantile(q).as_nanos() as f64 / 1e3;
            json!({
                "link_id": i,
                "name": plan.link_names[i],
                "packets": e.count(),
                "departure_error_p50_us": us(0.5),
                "departure_error_p90_us": us(0.9),
                "departure_error_p99_us": us(0.99),
                "departure_error_p999_us": us(0.999),
                "departure_error_max_us": e.max().as_nanos() as f64 / 1e3,
            })
        })
        .collect();
    let flows: Vec<Value> = plan
        .flows
        .iter()
        .zip(records)
        .map(|(f, (tx, rx))| {
            json!({
                "name": f.name,
                "protocol": f.kind.label(),
                "sender": tx.as_ref().map(|r| Value::Object(r.extra.clone())),
                "receiver": rx.as_ref().map(|r| Value::Object(r.extra.clone())),
            })
        })
        .collect();
    let s = &core.stats;
    json!({
        "emulated": true,
        "accurate": s.late == 0 && s.oversize == 0 && s.device_drops == 0,
        "device": device.name(),
        "batch_window_us": s.batch_window_us,
        "device_drops": s.device_drops,
        "entered_late": {
            "what": "packets read after the links had run past the instant they left their host, and how much later they entered",
            "packets": s.entered_late,
            "p99_us": s.entered_late_by.quantile(0.99).as_nanos() as f64 / 1e3,
            "max_us": s.entered_late_by.max().as_nanos() as f64 / 1e3,
        },
        "late_threshold_us": LATE.as_nanos() / 1000,
        "packets_forwarded_late": s.late,
        "spin_us": {
            "least": SPIN.as_nanos() / 1000,
            "most": MAX_SPIN.as_nanos() / 1000,
            "share_of_the_gap_since_the_last_hand_over": 1.0 / SPIN_SHARE as f64,
        },
        "forwarder_realtime": s.realtime,
        "forwarder_cpu_s": s.cpu_s,
        "packets_read": s.packets_read,
        "unrouted_packets": s.unrouted,
        "misdirected_packets": s.misdirected,
        "oversize_packets": s.oversize,
        "largest_packet_bytes": s.largest_packet,
        "write_failures": s.write_failures,
        "arena_grown": s.arena_grown,
        "mtu": plan.mtu,
        "hosts": plan.hosts.iter().map(|h| json!({"name": h.name, "address": h.addr.to_string()})).collect::<Vec<_>>(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "links": links,
        "flows": flows,
    })
}

#[cfg(test)]
mod tests {
    use super::row_bins;

    #[test]
    fn the_last_row_takes_every_bin_after_it() {
        let bins = [1u64, 2, 3, 4, 5];
        assert_eq!(row_bins(&bins, 1, 2), [2]);
        assert_eq!(row_bins(&bins, 2, 2), [3, 4, 5]);
        assert!(row_bins(&bins, 7, 9).is_empty());
        assert!(row_bins(&bins[..1], 3, 3).is_empty());
    }
}
