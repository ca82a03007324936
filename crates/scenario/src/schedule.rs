//! A rate schedule (`schedule = [{ at = "60s", rate = "3Mbps" }, …]`): the steps a link's
//! capacity or a constant-bit-rate source's rate takes from given instants of the run.

use fairstream_core::{Bitrate, Duration, Instant, RateSchedule};
use toml::Value;

use crate::reader::{Result, Section};

/// Reads the optional `schedule` of `s` into a schedule starting at `base`; the resolved form
/// lists the steps as given.
pub(crate) fn read_schedule(s: &mut Section<'_, '_>, base: Bitrate) -> Result<RateSchedule> {
    let mut steps = Vec::new();
    let mut resolved = Vec::new();
    for mut step in s.tables("schedule", &["at", "rate"])? {
        let at: Duration = step.req_unit("at")?;
        let rate: Bitrate = step.req_unit("rate")?;
        steps.push((Instant::ZERO + at, rate));
        resolved.push(Value::Table(step.take_resolved()));
    }
    if !resolved.is_empty() {
        s.set("schedule", Value::Array(resolved));
    }
    Ok(RateSchedule::new(base, steps))
}
