//! A windowed running maximum (Kathleen Nichols' algorithm, as Linux's `lib/win_minmax.c`):
//! the best of the samples in the last `window` units of time (for BBR, rounds), kept as three
//! samples: the best, and the best of the later sub-windows, so that when the best ages out the
//! next takes over without keeping every sample.

/// A sample at time `t` (any monotone unit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

/// The running maximum over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// The maximum now.
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forgets everything but `v` at `t`.
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [Sample { t, v }; 3];
    }

    /// Feeds `v` measured at `t` with a window of `win`; returns the maximum.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let new = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].v {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        self.subwindow(win, new)
    }

    /// Ages the samples: a best older than the window gives way to the next.
    fn subwindow(&mut self, win: u64, new: Sample) -> f64 {
        let dt = new.t.saturating_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if new.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = new;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with the best unchanged: a later second choice.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed: a later third choice.
            self.s[2] = new;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_ages_out_after_the_window() {
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 0, 5.0), 5.0);
        assert_eq!(f.update(10, 1, 3.0), 5.0);
        assert_eq!(f.update(10, 2, 8.0), 8.0);
        for t in 3..=12 {
            assert_eq!(f.update(10, t, 4.0), 8.0, "t = {t}");
        }
        // Round 13: the 8 of round 2 is 11 rounds old: the best of the later samples remains.
        assert_eq!(f.update(10, 13, 4.0), 4.0);
        // A window of nothing but smaller samples brings the maximum down to them.
        for t in 14..40 {
            f.update(10, t, 2.0);
        }
        assert_eq!(f.get(), 2.0);
    }
}
