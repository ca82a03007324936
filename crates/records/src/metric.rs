//! The metric schema. A metric is declared once, as a `static` [`MetricKind`] beside the protocol
//! that records it: its name in `metrics.parquet`, its unit, what it means, and, where the flow
//! summary shows it, the [`Summary`] column and how the records fold into it. An endpoint
//! records a [`Metric`] (the kind and a value in its unit) into a [`MetricSink`]; the drivers'
//! recorders, the Parquet writer, the docs test and the report read the declaration. No list of
//! metrics is kept anywhere else.
//!
//! Recording costs what it did as an enum: a `Metric` is a pointer and a float, its name a load.

use fairstream_core::{Bitrate, Duration, Instant};

use crate::column::{Column, Declared, Value};

/// Which metrics a run's metric table keeps: every one, or those it names. Summaries and
/// counters see every record either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricSelection {
    /// Every metric the flows record.
    All,
    /// Only the metrics of these names.
    Named(Vec<&'static str>),
}

impl MetricSelection {
    /// Whether the table keeps the records of `kind`.
    #[inline]
    pub fn keeps(&self, kind: &MetricKind) -> bool {
        self.keeps_name(kind.name)
    }

    /// Whether the table keeps the records of the metric called `name`.
    #[inline]
    pub fn keeps_name(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Named(names) => names.contains(&name),
        }
    }
}

/// A metric, declared once beside the protocol that records it.
#[derive(Debug)]
pub struct MetricKind {
    /// Its name in `metrics.parquet` (`cwnd`, `rtt`, …), unique across protocols.
    pub name: &'static str,
    /// The unit of its values, in words (`"packets"`, `"seconds"`, `"bit/s"`, `"1 per event"`).
    pub unit: &'static str,
    /// What it is, one sentence.
    pub meaning: &'static str,
    /// The flow summary's column that summarises its records, if any.
    pub summary: Option<&'static Summary>,
}

impl MetricKind {
    /// A metric `name` in `unit`, meaning `meaning`, shown in no summary column.
    pub const fn new(name: &'static str, unit: &'static str, meaning: &'static str) -> Self {
        Self {
            name,
            unit,
            meaning,
            summary: None,
        }
    }

    /// The same metric, summarised in the flow summary by `summary`.
    pub const fn summarised(self, summary: &'static Summary) -> Self {
        Self {
            summary: Some(summary),
            ..self
        }
    }

    /// A record of `value`, in the metric's unit.
    #[inline]
    pub fn at(&'static self, value: f64) -> Metric {
        Metric { kind: self, value }
    }

    /// A record of a duration, in seconds.
    #[inline]
    pub fn secs(&'static self, d: Duration) -> Metric {
        self.at(d.as_secs_f64())
    }

    /// A record of a rate, in bit/s.
    #[inline]
    pub fn bps(&'static self, r: Bitrate) -> Metric {
        self.at(r.as_bps_f64())
    }

    /// A record of a count.
    #[inline]
    pub fn count(&'static self, n: u64) -> Metric {
        self.at(n as f64)
    }

    /// A record of a state: 1 on, 0 off.
    #[inline]
    pub fn flag(&'static self, on: bool) -> Metric {
        self.at(f64::from(u8::from(on)))
    }

    /// A record of an event: 1.
    #[inline]
    pub fn event(&'static self) -> Metric {
        self.at(1.0)
    }
}

/// A flow-summary column that summarises a metric's records: the column, and how they fold.
#[derive(Debug)]
pub struct Summary {
    /// The column.
    pub column: Column,
    /// How the flow's records of the metric become the column's value.
    pub fold: Fold,
}

/// How a metric's records become a summary value (null for a flow that recorded none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// The last value recorded.
    Last,
    /// The number of records after the first (a metric recorded at its start and at each
    /// change: the changes).
    ChangesAfterFirst,
    /// The time-weighted mean of the values as a step function, from the first record to the
    /// flow's stop.
    TimeMean,
}

/// One record of a metric: which one, and its value in the metric's unit.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// The metric.
    pub kind: &'static MetricKind,
    /// Its value.
    pub value: f64,
}

impl Metric {
    /// Whether this is a record of `kind` (metrics are told apart by identity: each is one
    /// `static`).
    #[inline]
    pub fn is(&self, kind: &MetricKind) -> bool {
        std::ptr::eq(self.kind, kind)
    }

    /// The value, if this is a record of `kind`.
    pub fn of(&self, kind: &MetricKind) -> Option<f64> {
        self.is(kind).then_some(self.value)
    }
}

impl PartialEq for Metric {
    fn eq(&self, other: &Self) -> bool {
        self.is(other.kind) && self.value == other.value
    }
}

/// Where endpoints report their [`Metric`]s.
pub trait MetricSink {
    /// Records `metric` observed at `now`.
    fn record(&mut self, now: Instant, metric: Metric);
}

/// A sink that drops every record.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl MetricSink for NullSink {
    fn record(&mut self, _now: Instant, _metric: Metric) {}
}

/// A sink that keeps every record in order (for tests and small runs).
#[derive(Debug, Default, Clone)]
pub struct VecSink(pub Vec<(Instant, Metric)>);

impl MetricSink for VecSink {
    fn record(&mut self, now: Instant, metric: Metric) {
        self.0.push((now, metric));
    }
}

/// The round-trip-time sample: the one metric every driver's summary reads itself (a flow's
/// `mean_rtt_s`, a bin's `rtt_mean_s`), whichever protocol records it.
pub static RTT: MetricKind = MetricKind::new("rtt", "seconds", "a round-trip-time sample");

/// A flow's summary columns as its metric records come in, folded as each column's [`Fold`]
/// says (a few columns per flow at most: a media flow's).
#[derive(Clone, Debug, Default)]
pub struct SummaryFolds(Vec<(&'static Summary, FoldState)>);

#[derive(Clone, Copy, Debug)]
struct FoldState {
    last: f64,
    records: u64,
    mean: TimeMean,
}

impl SummaryFolds {
    /// Takes one record of a metric `summary` summarises, of `value` at `t` seconds.
    pub fn take(&mut self, summary: &'static Summary, t: f64, value: f64) {
        let i = match self.0.iter().position(|(s, _)| std::ptr::eq(*s, summary)) {
            Some(i) => i,
            None => {
                let state = FoldState {
                    last: value,
                    records: 0,
                    mean: TimeMean::default(),
                };
                self.0.push((summary, state));
                self.0.len() - 1
            }
        };
        let s = &mut self.0[i].1;
        s.last = value;
        s.records += 1;
        if summary.fold == Fold::TimeMean {
            s.mean.step(t, value);
        }
    }

    /// The columns' values for a flow that stopped at `stop` seconds.
    pub fn values(&self, stop: f64) -> Declared {
        self.0
            .iter()
            .filter_map(|(summary, s)| {
                let v = match summary.fold {
                    Fold::Last => s.last,
                    Fold::ChangesAfterFirst => (s.records - 1) as f64,
                    Fold::TimeMean => s.mean.mean(stop)?,
                };
                Some((&summary.column, Value::of(summary.column.kind, v)))
            })
            .collect()
    }
}

/// The time-weighted mean of a step function fed its steps in time order.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TimeMean {
    /// The first step's time, the last step (time, value) and the integral up to it.
    first: Option<f64>,
    last: (f64, f64),
    area: f64,
}

impl TimeMean {
    /// The function takes `value` from `t` on.
    fn step(&mut self, t: f64, value: f64) {
        if self.first.is_some() {
            self.area += self.last.1 * (t - self.last.0);
        } else {
            self.first = Some(t);
        }
        self.last = (t, value);
    }

    /// The mean from the first step to `end` (`None` before any step; the last value when no
    /// time has passed).
    fn mean(&self, end: f64) -> Option<f64> {
        let first = self.first?;
        let span = end - first;
        if span <= 0.0 {
            return Some(self.last.1);
        }
        Some((self.area + self.last.1 * (end - self.last.0).max(0.0)) / span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ColumnKind;

    static LEVEL: Summary = Summary {
        column: Column::new("level_changes", ColumnKind::Count, "", "Changes."),
        fold: Fold::ChangesAfterFirst,
    };
    static RATE: Summary = Summary {
        column: Column::new("mean_rate_bps", ColumnKind::Real, "bit/s", "A mean."),
        fold: Fold::TimeMean,
    };
    static SENT: Summary = Summary {
        column: Column::new("sent", ColumnKind::Count, "", "The last count."),
        fold: Fold::Last,
    };
    static A: MetricKind = MetricKind::new("a", "", "A.").summarised(&LEVEL);
    static B: MetricKind = MetricKind::new("b", "", "B.").summarised(&LEVEL);

    #[test]
    fn records_fold_into_their_columns() {
        let mut f = SummaryFolds::default();
        // Two metrics feed one column: its records count together.
        f.take(A.summary.unwrap(), 0.0, 2.0);
        f.take(B.summary.unwrap(), 1.0, 3.0);
        f.take(A.summary.unwrap(), 2.0, 1.0);
        f.take(&RATE, 1.0, 100.0);
        f.take(&RATE, 3.0, 200.0);
        f.take(&SENT, 1.0, 5.0);
        f.take(&SENT, 2.0, 7.0);
        let v = f.values(5.0);
        let get = |c: &Column| crate::column::value_of(&v, c);
        assert_eq!(get(&LEVEL.column), Some(Value::Count(2)));
        // 100 for 2 s then 200 for 2 s.
        assert_eq!(get(&RATE.column), Some(Value::Real(150.0)));
        assert_eq!(get(&SENT.column), Some(Value::Count(7)));
        assert!(SummaryFolds::default().values(5.0).is_empty());
    }

    #[test]
    fn records_are_told_apart_by_their_kind() {
        assert!(A.count(3).is(&A) && !A.count(3).is(&B));
        assert_eq!(A.flag(true).value, 1.0);
        assert_eq!(RTT.secs(Duration::from_millis(20)).of(&RTT), Some(0.02));
        assert_eq!(A.event(), A.at(1.0));
        assert_ne!(A.event(), B.event());
    }
}
