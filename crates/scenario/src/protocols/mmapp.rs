//! A `protocol = "mmapp"` flow: MM_APP, media scaling over UDP with fixed-size frames sent at
//! the rate of the receiver's scale (paper 001; PROTOCOLS.md §6).

use fairstream_core::Bitrate;
use fairstream_proto::ProtocolConfig;
use fairstream_proto::media_scaling::MmAppConfig;
use fairstream_proto::media_scaling::config::{DATA_HEADERS, SCALES};
use toml::Value;

use super::media_scaling::{SCALING_KEYS, read_scaling};
use super::read_packet_size;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys only an MM_APP flow takes (`packet_size` is every protocol's).
pub(crate) fn keys() -> Vec<&'static str> {
    [&["rates", "random"], SCALING_KEYS].concat()
}

/// Reads an MM_APP flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let d = MmAppConfig::default();
    let packet_size = read_packet_size(
        f,
        d.packet_size,
        DATA_HEADERS + 1,
        "an MM_APP packet (its IP, UDP, frame and media headers and at least one byte)",
    )?;
    let rates = read_rates(f, d.rates)?;
    let random = f.bool_or("random", d.random)?;
    let scaling = read_scaling(f)?;
    Ok(ProtocolConfig::MmApp(MmAppConfig {
        rates,
        packet_size,
        random,
        scaling,
    }))
}

/// `rates`: five bit rates, scale 0 first, each above zero and none below the one before.
fn read_rates(f: &mut Section<'_, '_>, default: [Bitrate; SCALES]) -> Result<[Bitrate; SCALES]> {
    let field = f.field("rates");
    let Some(items) = f.opt_str_list("rates")? else {
        f.set(
            "rates",
            Value::Array(
                default
                    .iter()
                    .map(|r| Value::String(r.to_string()))
                    .collect(),
            ),
        );
        return Ok(default);
    };
    if items.len() != SCALES {
        return Err(f.error(
            "rates",
            format!(
                "{} rates given; expected {SCALES}, one per scale from 0 to 4, such as [\"300kbps\", \"500kbps\", \"700kbps\", \"900kbps\", \"1100kbps\"]",
                items.len()
            ),
        ));
    }
    let mut rates = default;
    for (k, (text, span)) in items.iter().enumerate() {
        let rate: Bitrate = text.parse().map_err(|e: fairstream_core::UnitError| {
            f.src.error(span.clone(), &field, e.to_string())
        })?;
        if rate.is_zero() {
            return Err(f.src.error(
                span.clone(),
                &field,
                format!("the rate of scale {k} is zero; expected a rate above 0"),
            ));
        }
        if k > 0 && rate < rates[k - 1] {
            return Err(f.src.error(
                span.clone(),
                &field,
                format!("the rate of scale {k} ({rate}) is below scale {}'s ({}); a higher scale sends at least as fast", k - 1, rates[k - 1]),
            ));
        }
        rates[k] = rate;
    }
    f.set(
        "rates",
        Value::Array(rates.iter().map(|r| Value::String(r.to_string())).collect()),
    );
    Ok(rates)
}
