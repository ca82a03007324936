//! The flows' ends, each on a thread of its own inside its host's namespace, all on the
//! emulation's clock: [`cbr`] (the scenario's CBR source endpoint paced in real time, and a
//! receiver that measures each packet's one-way delay), [`rt`] (a fairstream protocol through
//! the real-time driver), [`linux_tcp`] (the kernel's TCP, `TCP_INFO` sampled every record
//! interval). Each end returns a [`FlowRecord`]: what its application saw, binned on the
//! emulation's interval grid, and its metric records.

pub mod cbr;
pub mod linux_tcp;
pub mod rt;
pub mod stream_tcp;
pub mod tcp_info;

use crate::record::MetricRecords;
use fairstream_core::{Duration, Instant};

/// What one end of a flow recorded.
#[derive(Debug, Default)]
pub struct FlowRecord {
    /// Application bytes delivered in order, by bin of the emulation's grid.
    pub goodput: Vec<u64>,
    /// Sum and count of RTT samples (seconds), by bin.
    pub rtt: Vec<(f64, u64)>,
    /// Metric records (flow id filled in later).
    pub metrics: MetricRecords,
    /// Retransmitted segments (kernel TCP).
    pub retransmits: u64,
    /// The flow-summary columns this end's metrics summarise into (a player's playout), as the
    /// real-time driver folded them.
    pub summaries: fairstream_records::Declared,
    /// What else the end reports, for `emu.json`.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl FlowRecord {
    /// A record on bins `interval` wide over `duration`.
    pub fn new(interval: Duration, duration: Duration) -> Self {
        let bins = (duration.as_nanos() / interval.as_nanos().max(1) + 2) as usize;
        Self {
            goodput: vec![0; bins],
            rtt: vec![(0.0, 0); bins],
            ..Self::default()
        }
    }

    fn bin(&self, t: Instant, interval: Duration) -> usize {
        ((t.as_nanos() / interval.as_nanos().max(1)) as usize).min(self.goodput.len() - 1)
    }

    /// `bytes` delivered at `t`.
    pub fn delivered(&mut self, t: Instant, interval: Duration, bytes: u64) {
        let b = self.bin(t, interval);
        self.goodput[b] += bytes;
    }

    /// `bytes` delivered evenly over `[t0, t1)`, split among the bins it overlaps.
    pub fn delivered_over(&mut self, t0: Instant, t1: Instant, interval: Duration, bytes: u64) {
        let span = t1.saturating_since(t0).as_nanos();
        if span == 0 {
            self.delivered(t0, interval, bytes);
            return;
        }
        let (first, last) = (self.bin(t0, interval), self.bin(t1, interval));
        let mut given = 0u64;
        for b in first..=last {
            let lo = (b as u64 * interval.as_nanos()).max(t0.as_nanos());
            let hi = ((b as u64 + 1) * interval.as_nanos()).min(t1.as_nanos());
            let share = if b == last {
                bytes - given
            } else {
                (bytes as u128 * u128::from(hi.saturating_sub(lo)) / u128::from(span)) as u64
            };
            self.goodput[b] += share;
            given += share;
        }
    }

    /// An RTT sample at `t`.
    pub fn rtt_sample(&mut self, t: Instant, interval: Duration, rtt: Duration) {
        let b = self.bin(t, interval);
        self.rtt[b].0 += rtt.as_secs_f64();
        self.rtt[b].1 += 1;
    }

    /// The metric records of a real-time run that started at `shift` on the emulation's
    /// clock, with the RTT samples also binned.
    pub fn real_time_metrics(&mut self, m: &MetricRecords, shift: Duration, interval: Duration) {
        for i in 0..m.t.len() {
            let t = Instant::from_secs_f64(m.t[i]) + shift;
            if m.metric[i] == "rtt" {
                self.rtt_sample(t, interval, Duration::from_secs_f64(m.value[i]));
            }
            self.metric(t, m.metric[i], m.value[i]);
        }
    }

    /// A metric record at `t`.
    pub fn metric(&mut self, t: Instant, name: &'static str, value: f64) {
        let m = &mut self.metrics;
        m.t.push(t.as_secs_f64());
        m.flow_id.push(0);
        m.metric.push(name);
        m.value.push(value);
    }
}

/// Whether an I/O error only says "not now" (a timeout of a blocking call, a signal, a
/// non-blocking socket with nothing to do), so that the loop just goes round.
pub(crate) fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

/// Sleeps until `t` on `clock`, or until `stop`; returns whether `t` came.
pub(crate) fn sleep_until(
    clock: &fairstream_rt::clock::Clock,
    t: Instant,
    stop: &std::sync::atomic::AtomicBool,
) -> bool {
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        let now = clock.now();
        if now >= t {
            return true;
        }
        let nap = t.saturating_since(now).min(Duration::from_millis(20));
        std::thread::sleep(std::time::Duration::from_nanos(nap.as_nanos()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_over_a_span_are_split_by_overlap() {
        let ms = |n| Instant::ZERO + Duration::from_millis(n);
        let i = Duration::from_millis(100);
        let mut r = FlowRecord::new(i, Duration::from_secs(1));
        r.delivered_over(ms(50), ms(250), i, 1000);
        assert_eq!(&r.goodput[..4], &[250, 500, 250, 0]);
    }
}
