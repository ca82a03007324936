//! The receiver's loss intervals and the loss event rate p by the average loss interval method
//! (RFC 5348 §5.3–§5.5): the n = 8 most recent closed intervals, newest first, weighted
//! 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2, with optional history discounting. Fixed-size arrays only:
//! nothing here allocates.

/// Number of loss intervals averaged (RFC 5348 §5.4).
pub const INTERVALS: usize = 8;

/// RFC 5348 §5.4's weights: `w_i = 1` for `i < n/2`, else `2(n − i)/(n + 2)`.
pub const WEIGHTS: [f64; INTERVALS] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// The history discount factor's floor (RFC 5348 §5.5; ns-2 `minDiscountRatio_`).
const MIN_DISCOUNT: f64 = 0.5;

/// Loss events seen so far, as interval lengths in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossHistory {
    /// Closed intervals, newest first: `closed[0]` is I_1.
    closed: [f64; INTERVALS],
    /// Their discount factors DF_1..DF_n.
    discount: [f64; INTERVALS],
    /// How many of `closed` are in use.
    len: usize,
    /// Sequence number that started the newest loss event, if any.
    latest_start: Option<u64>,
    discounting: bool,
}

impl LossHistory {
    /// An empty history; `discounting` turns on RFC 5348 §5.5.
    pub fn new(discounting: bool) -> Self {
        Self {
            closed: [0.0; INTERVALS],
            discount: [1.0; INTERVALS],
            len: 0,
            latest_start: None,
            discounting,
        }
    }

    /// Whether any loss event has been seen.
    pub fn has_loss(&self) -> bool {
        self.latest_start.is_some()
    }

    /// The sequence number that started the newest loss event.
    pub fn latest_start(&self) -> Option<u64> {
        self.latest_start
    }

    /// Records the start of the first loss event at `seq`, with the synthetic interval of
    /// RFC 5348 §6.3.1 (`1/p` for the `p` at which the equation gives the receive rate) as I_1.
    pub fn first_event(&mut self, seq: u64, synthetic_interval: f64) {
        self.latest_start = Some(seq);
        self.len = 0;
        self.push_closed(synthetic_interval.max(1.0), 1.0);
    }

    /// Records a new loss event starting at `seq`, closing the open interval. Ignored when
    /// `seq` does not follow the newest event's start (a late duplicate).
    pub fn new_event(&mut self, seq: u64, open_discount: f64) {
        match self.latest_start {
            Some(start) if seq > start => {
                self.push_closed((seq - start) as f64, open_discount);
                self.latest_start = Some(seq);
            }
            Some(_) => {}
            None => self.first_event(seq, 1.0),
        }
    }

    fn push_closed(&mut self, interval: f64, open_discount: f64) {
        // Older history keeps the discount in force when the interval closed (ns-2's
        // `tfrc-sink.cc` shift rule; PROTOCOLS.md §2.7).
        for i in (1..INTERVALS).rev() {
            self.closed[i] = self.closed[i - 1];
            self.discount[i] = self.discount[i - 1] * open_discount;
        }
        self.closed[0] = interval;
        self.discount[0] = 1.0;
        self.len = (self.len + 1).min(INTERVALS);
    }

    /// The open interval I_0 when `highest` is the highest sequence number received.
    fn open_interval(&self, highest: u64) -> f64 {
        self.latest_start
            .map_or(0.0, |start| (highest.saturating_sub(start) + 1) as f64)
    }

    /// Σ I_i·w_{i−1}·DF_i over the closed intervals, and Σ w_{i−1}·DF_i.
    fn closed_weighted(&self) -> (f64, f64) {
        self.closed[..self.len]
            .iter()
            .zip(WEIGHTS.iter().zip(&self.discount))
            .fold((0.0, 0.0), |(sum, weight), (&interval, (&w, &df))| {
                (sum + interval * w * df, weight + w * df)
            })
    }

    /// The discount the open interval would apply to older history now (1 without
    /// discounting, or while I_0 is shorter than twice the closed mean).
    pub fn open_discount(&self, highest: u64) -> f64 {
        if !self.discounting || self.len == 0 {
            return 1.0;
        }
        let (sum, weight) = self.closed_weighted();
        let mean = sum / weight;
        let open = self.open_interval(highest);
        if open < 2.0 * mean {
            1.0
        } else {
            (2.0 * mean / open).max(MIN_DISCOUNT)
        }
    }

    /// The loss event rate p (0 before the first loss event), with `highest` the highest
    /// sequence number received. The open interval counts only when it lowers p.
    pub fn loss_event_rate(&self, highest: u64) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        let df = self.open_discount(highest);
        let open = self.open_interval(highest);
        // With the open interval: I_0·w_0 + Σ I_i·w_i (i = 1..), the closed ones discounted.
        let (mut tot0, mut w0) = (open * WEIGHTS[0], WEIGHTS[0]);
        for i in 0..self.len.min(INTERVALS - 1) {
            let w = WEIGHTS[i + 1] * self.discount[i] * df;
            tot0 += self.closed[i] * w;
            w0 += w;
        }
        // Without it: Σ I_i·w_{i−1}.
        let (tot1, w1) = self.closed_weighted();
        let mean = (tot0 / w0).max(tot1 / w1);
        if mean > 0.0 {
            (1.0 / mean).min(1.0)
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_of_eight_intervals_by_hand() {
        let mut h = LossHistory::new(false);
        // Events at 0 (synthetic I = 100), then 10, 30, 60, 100, 150, 210, 280, 360:
        // closed intervals newest first 80, 70, 60, 50, 40, 30, 20, 10.
        h.first_event(0, 100.0);
        for s in [10, 30, 60, 100, 150, 210, 280, 360] {
            h.new_event(s, 1.0);
        }
        // Without I_0: (80+70+60+50 + 0.8·40 + 0.6·30 + 0.4·20 + 0.2·10) / 6
        //            = (260 + 32 + 18 + 8 + 2) / 6 = 320 / 6 = 53.33.
        // With I_0 = 361 − 360 = 1 (highest 360): smaller, so p = 6/320.
        assert!((h.loss_event_rate(360) - 6.0 / 320.0).abs() < 1e-12);
        // A long open interval counts: I_0 = 1000 − 360 + 1 = 641:
        // (641 + 80+70+60 + 0.8·50 + 0.6·40 + 0.4·30 + 0.2·20) / 6 = 931 / 6.
        assert!((h.loss_event_rate(1000) - 6.0 / 931.0).abs() < 1e-12);
    }

    #[test]
    fn fewer_intervals_normalise_by_the_weights_used() {
        let mut h = LossHistory::new(false);
        assert_eq!(h.loss_event_rate(50), 0.0);
        h.first_event(20, 40.0);
        // I_1 = 40; I_0 = 25 − 20 + 1 = 6: mean max(40, (6 + 40)/2 = 23) = 40.
        assert!((h.loss_event_rate(25) - 1.0 / 40.0).abs() < 1e-12);
        h.new_event(50, 1.0); // I_1 = 30, I_2 = 40; I_0 = 1.
        assert!((h.loss_event_rate(50) - 2.0 / 70.0).abs() < 1e-12);
        h.new_event(40, 1.0); // older than the newest event: ignored
        assert!((h.loss_event_rate(50) - 2.0 / 70.0).abs() < 1e-12);
    }

    #[test]
    fn discounting_lowers_old_weights_in_a_long_loss_free_run() {
        let mut plain = LossHistory::new(false);
        let mut disc = LossHistory::new(true);
        for h in [&mut plain, &mut disc] {
            h.first_event(0, 10.0);
            for s in [10, 20, 30] {
                h.new_event(s, 1.0);
            }
        }
        // I_0 = 400 ≥ 2·10: DF = max(0.5, 20/400) = 0.5 halves the closed weights with I_0.
        assert_eq!(disc.open_discount(429), 0.5);
        assert_eq!(plain.open_discount(429), 1.0);
        // Four closed intervals of 10 (the synthetic one included). Plain:
        // (400 + 10 + 10 + 10 + 0.8·10) / 4.8 = 438 / 4.8; discounted: (400 + 0.5·38) / 2.9.
        assert!((plain.loss_event_rate(429) - 4.8 / 438.0).abs() < 1e-12);
        assert!((disc.loss_event_rate(429) - 2.9 / 419.0).abs() < 1e-12);
    }
}
