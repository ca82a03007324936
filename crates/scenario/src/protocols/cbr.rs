//! A `protocol = "cbr"` flow: unresponsive UDP at a constant bit rate.

use fairstream_core::{Bitrate, DataSize, Duration};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::cbr::{CbrConfig, OnOff};

use super::read_packet_size;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};
use crate::schedule::read_schedule;

/// The keys only a CBR flow takes (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &["rate", "on", "off", "random", "schedule"];

/// Reads a CBR flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let base: Bitrate = f.req_unit("rate")?;
    let rate = read_schedule(f, base)?;
    let packet_size = read_packet_size(
        f,
        DataSize::bytes(1000),
        28,
        "a UDP packet (its IP and UDP headers)",
    )?;
    let on: Option<Duration> = f.opt_unit("on")?;
    let off: Option<Duration> = f.opt_unit("off")?;
    let on_off = match (on, off) {
        (None, None) => None,
        (Some(on), Some(off)) if !on.is_zero() => Some(OnOff { on, off }),
        (Some(_), Some(_)) => {
            return Err(f.error("on", "the on period must be longer than zero"));
        }
        _ => {
            return Err(f.error(
                if on.is_none() { "on" } else { "off" },
                "give both `on` and `off`, or neither",
            ));
        }
    };
    let random = f.bool_or("random", false)?;
    Ok(ProtocolConfig::Cbr(CbrConfig {
        rate,
        packet_size,
        on_off,
        random,
    }))
}
