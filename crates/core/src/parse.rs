//! Parsing of human-written quantities: `"11Mbps"`, `"1.5 Mbit/s"`, `"35ms"`, `"1500B"`, `"1%"`.
//!
//! Each type implements [`std::str::FromStr`]; errors say what was expected, so that the
//! scenario loader can put them beside the file, line and field.

use std::str::FromStr;

use crate::{Bitrate, DataSize, Duration, Probability};

/// A quantity that could not be parsed; the message names the expected form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UnitError {
    message: String,
    /// The form was right but the value out of what the type holds.
    out_of_range: bool,
}

impl UnitError {
    /// Whether the quantity was well formed but too large or too small for its type (as
    /// opposed to not being a quantity of this kind at all).
    pub fn is_out_of_range(&self) -> bool {
        self.out_of_range
    }

    fn expected(what: &str, input: &str, example: &str) -> Self {
        Self {
            message: format!(
                "`{}` is not {what}; expected a form such as {example}",
                escape_controls(input)
            ),
            out_of_range: false,
        }
    }
    fn negative(what: &str, input: &str) -> Self {
        Self {
            message: format!("`{}`: {what} must not be negative", escape_controls(input)),
            out_of_range: true,
        }
    }
}

/// `input` as a message shows it: control characters escaped (`\u{1b}`), so that an escape
/// sequence in a scenario never reaches the terminal through an error.
pub fn escape_controls(input: &str) -> std::borrow::Cow<'_, str> {
    if input.chars().any(char::is_control) {
        let escaped = input
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        std::borrow::Cow::Owned(escaped)
    } else {
        std::borrow::Cow::Borrowed(input)
    }
}

/// Checks a parsed, non-negative `value` (in the type's base unit) against what the type can
/// hold: at most `max`, and not a non-zero value below `resolution`, which would silently become
/// zero. `limit` prints a limit in a form the user reads.
fn in_range(
    value: f64,
    (resolution, max): (f64, f64),
    what: &str,
    input: &str,
    limit: impl Fn(f64) -> String,
) -> Result<f64, UnitError> {
    let input = escape_controls(input);
    if value > max {
        Err(UnitError {
            message: format!("`{input}` is too large: {what} is at most {}", limit(max)),
            out_of_range: true,
        })
    } else if value > 0.0 && value < resolution / 2.0 {
        Err(UnitError {
            message: format!(
                "`{input}` is too small: the smallest {what} above zero is {}",
                limit(resolution)
            ),
            out_of_range: true,
        })
    } else {
        Ok(value)
    }
}

/// Largest bit rate accepted: 10 Tbit/s.
pub(crate) const MAX_BITRATE_BPS: f64 = 1e13;
/// Largest data size accepted: 1 TB.
pub(crate) const MAX_DATA_SIZE_BYTES: f64 = 1e12;
/// Longest duration accepted: 10⁹ s (about 31.7 years).
pub(crate) const MAX_DURATION_S: f64 = 1e9;

/// Splits `"1.5 Mbit/s"` into `(1.5, "Mbit/s")`, the unit as written.
///
/// A number that is not zero but too small for an `f64` (`"1e-400"`) is kept as the smallest
/// positive one, so that the range check calls it too small rather than it silently becoming 0.
fn split_number(input: &str) -> Option<(f64, &str)> {
    let s = input.trim();
    let candidate = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E')))
        .unwrap_or(s.len());
    // The longest prefix that is a number: "1e-3s" keeps its exponent, "5e" gives back the "e".
    (1..=candidate).rev().find_map(|end| {
        let text = &s[..end];
        let number: f64 = text.parse().ok()?;
        let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
        let underflow = number == 0.0 && mantissa.chars().any(|c| matches!(c, '1'..='9'));
        let number = if underflow {
            f64::MIN_POSITIVE.copysign(number)
        } else {
            number
        };
        number.is_finite().then(|| (number, s[end..].trim()))
    })
}

impl FromStr for Bitrate {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"11Mbps\", \"1.5 Mbit/s\" or \"512kbps\"";
        let (n, written) =
            split_number(input).ok_or_else(|| UnitError::expected("a bit rate", input, EXAMPLE))?;
        let unit = written.to_ascii_lowercase();
        let scale = match unit.as_str() {
            "bps" | "bit/s" => 1.0,
            "kbps" | "kbit/s" | "kb/s" => 1e3,
            "mbps" | "mbit/s" | "mb/s" => 1e6,
            "gbps" | "gbit/s" | "gb/s" => 1e9,
            _ => return Err(UnitError::expected("a bit rate", input, EXAMPLE)),
        };
        let prefix = match unit.as_bytes()[0] {
            b'k' => "k",
            b'm' => "M",
            b'g' => "G",
            _ => "",
        };
        if !unit.contains("bit") && written.as_bytes()[prefix.len()] == b'B' {
            // "MBps", "MB/s": bytes per second, which read as bits would be 8 times too slow.
            return Err(UnitError {
                message: format!(
                    "`{}` is in bytes per second (B); a bit rate is written in bits (b): {}{prefix}bps",
                    escape_controls(input),
                    n * 8.0,
                ),
                out_of_range: false,
            });
        }
        if n < 0.0 {
            return Err(UnitError::negative("a bit rate", input));
        }
        let bps = in_range(
            n * scale,
            (1.0, MAX_BITRATE_BPS),
            "a bit rate",
            input,
            |x| Self::from_bps_f64(x).to_string(),
        )?;
        Ok(Self::from_bps_f64(bps))
    }
}

impl FromStr for DataSize {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"1500B\", \"10KB\" or \"64KiB\"";
        let (n, unit) = split_number(input)
            .ok_or_else(|| UnitError::expected("a data size", input, EXAMPLE))?;
        let scale = match unit.to_ascii_lowercase().as_str() {
            "b" | "byte" | "bytes" => 1.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "kib" => 1024.0,
            "mib" => 1024.0 * 1024.0,
            "gib" => 1024.0 * 1024.0 * 1024.0,
            _ => return Err(UnitError::expected("a data size", input, EXAMPLE)),
        };
        if n < 0.0 {
            return Err(UnitError::negative("a data size", input));
        }
        let bytes = in_range(
            n * scale,
            (1.0, MAX_DATA_SIZE_BYTES),
            "a data size",
            input,
            |x| Self::bytes(x.round() as u64).to_string(),
        )?;
        Ok(Self::bytes(bytes.round() as u64))
    }
}

impl FromStr for Duration {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"35ms\", \"1.5s\" or \"300 s\" (units: ns, us, ms, s, min, h)";
        let (n, unit) =
            split_number(input).ok_or_else(|| UnitError::expected("a duration", input, EXAMPLE))?;
        let scale = match unit.to_ascii_lowercase().as_str() {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(UnitError::expected("a duration", input, EXAMPLE)),
        };
        if n < 0.0 {
            return Err(UnitError::negative("a duration", input));
        }
        let secs = in_range(
            n * scale,
            (1e-9, MAX_DURATION_S),
            "a duration",
            input,
            |x| Self::from_secs_f64(x).to_string(),
        )?;
        Ok(Self::from_secs_f64(secs))
    }
}

impl FromStr for Probability {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"1%\", \"0.5 %\" or \"0.01\"";
        let (n, unit) = split_number(input)
            .ok_or_else(|| UnitError::expected("a probability", input, EXAMPLE))?;
        let p = match unit {
            "%" => n / 100.0,
            "" => n,
            _ => return Err(UnitError::expected("a probability", input, EXAMPLE)),
        };
        Self::new(p).ok_or_else(|| UnitError {
            message: format!(
                "`{}` is not a probability between 0 and 1 (0% and 100%)",
                escape_controls(input)
            ),
            out_of_range: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rates() {
        assert_eq!("11Mbps".parse::<Bitrate>().unwrap(), Bitrate::mbps(11));
        assert_eq!(
            "1.5 Mbit/s".parse::<Bitrate>().unwrap(),
            Bitrate::kbps(1500)
        );
        assert_eq!("512kbps".parse::<Bitrate>().unwrap(), Bitrate::kbps(512));
        assert_eq!("1Gbps".parse::<Bitrate>().unwrap(), Bitrate::gbps(1));
    }

    #[test]
    fn rejects_bad_rates_with_the_expected_form() {
        let err = "10 Mbs".parse::<Bitrate>().unwrap_err().to_string();
        assert!(err.contains("10 Mbs") && err.contains("11Mbps"), "{err}");
        assert!(
            "-1Mbps"
                .parse::<Bitrate>()
                .unwrap_err()
                .to_string()
                .contains("negative")
        );
        assert!("Mbps".parse::<Bitrate>().is_err());
    }

    #[test]
    fn parses_durations_sizes_and_probabilities() {
        assert_eq!(
            "35ms".parse::<Duration>().unwrap(),
            Duration::from_millis(35)
        );
        assert_eq!(
            "300 s".parse::<Duration>().unwrap(),
            Duration::from_secs(300)
        );
        assert_eq!(
            "1.5s".parse::<Duration>().unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            "1e-3s".parse::<Duration>().unwrap(),
            Duration::from_millis(1)
        );
        assert!(
            "-5ms"
                .parse::<Duration>()
                .unwrap_err()
                .to_string()
                .contains("negative")
        );
        assert_eq!("10KB".parse::<DataSize>().unwrap(), DataSize::bytes(10_000));
        assert_eq!(
            "64KiB".parse::<DataSize>().unwrap(),
            DataSize::bytes(65_536)
        );
        assert_eq!("1%".parse::<Probability>().unwrap().value(), 0.01);
        assert_eq!("0.5 %".parse::<Probability>().unwrap().value(), 0.005);
        assert!("150%".parse::<Probability>().is_err());
    }

    #[test]
    fn values_a_type_cannot_hold_are_refused_not_clamped() {
        for (input, says) in [
            ("1e30Mbps", "too large"),
            ("1e-3bps", "too small"),
            ("1e30B", "too large"),
            ("0.1B", "too small"),
            ("1e20s", "too large"),
            ("18446744073s", "too large"),
            ("0.1ns", "too small"),
        ] {
            let err = match input.chars().last() {
                Some('s') if input.ends_with("bps") => input.parse::<Bitrate>().unwrap_err(),
                Some('s') => input.parse::<Duration>().unwrap_err(),
                _ => input.parse::<DataSize>().unwrap_err(),
            }
            .to_string();
            assert!(err.contains(says) && err.contains(input), "{input}: {err}");
        }
        assert_eq!("0bps".parse::<Bitrate>().unwrap(), Bitrate::ZERO);
        assert!("10000Gbps".parse::<Bitrate>().is_ok());
        let err = "10001Gbps".parse::<Bitrate>().unwrap_err().to_string();
        assert!(err.contains("at most 10000Gbps"), "{err}");
        assert_eq!("1h".parse::<Duration>().unwrap(), Duration::from_secs(3600));
        let err = "1 day".parse::<Duration>().unwrap_err().to_string();
        assert!(err.contains("units: ns, us, ms, s, min, h"), "{err}");
    }

    #[test]
    fn a_rate_in_bytes_per_second_is_refused_with_its_bit_rate() {
        for (input, says) in [
            ("10MBps", "80Mbps"),
            ("10MB/s", "80Mbps"),
            ("1.5 KBps", "12kbps"),
            ("2GBps", "16Gbps"),
            ("100Bps", "800bps"),
        ] {
            let err = input.parse::<Bitrate>().unwrap_err().to_string();
            assert!(
                err.contains("bytes per second") && err.contains(says),
                "{input}: {err}"
            );
        }
        // Bits, whatever the case of the prefix.
        assert_eq!("10mbps".parse::<Bitrate>().unwrap(), Bitrate::mbps(10));
        assert_eq!("10Mb/s".parse::<Bitrate>().unwrap(), Bitrate::mbps(10));
        assert_eq!("10 MBIT/S".parse::<Bitrate>().unwrap(), Bitrate::mbps(10));
    }

    #[test]
    fn a_value_too_small_for_a_float_is_too_small_not_zero() {
        for input in ["1e-400Mbps", "1e-400s", "1e-400B"] {
            let err = match input.chars().last() {
                Some('s') if input.ends_with("bps") => input.parse::<Bitrate>().unwrap_err(),
                Some('s') => input.parse::<Duration>().unwrap_err(),
                _ => input.parse::<DataSize>().unwrap_err(),
            }
            .to_string();
            assert!(err.contains("too small"), "{input}: {err}");
        }
        assert_eq!("0e-400Mbps".parse::<Bitrate>().unwrap(), Bitrate::ZERO);
        assert_eq!("0.0s".parse::<Duration>().unwrap(), Duration::ZERO);
    }

    #[test]
    fn control_characters_in_a_value_are_escaped_in_its_error() {
        for err in [
            "\u{1b}[31mred".parse::<Bitrate>().unwrap_err(),
            "1\u{1b}[31m".parse::<Duration>().unwrap_err(),
            "-1\nB".parse::<DataSize>().unwrap_err(),
            "2\u{7}".parse::<Probability>().unwrap_err(),
        ] {
            let text = err.to_string();
            assert!(!text.chars().any(char::is_control), "{text:?}");
            assert!(
                text.contains("\\u{1b}") || text.contains("\\n") || text.contains("\\u{7}"),
                "{text}"
            );
        }
        assert_eq!(escape_controls("plain µs"), "plain µs");
    }

    #[test]
    fn display_round_trips() {
        for s in ["11Mbps", "1.5Mbps", "56kbps", "100bps"] {
            assert_eq!(s.parse::<Bitrate>().unwrap().to_string(), s);
        }
        for s in ["35ms", "1.5s", "12us", "300s"] {
            assert_eq!(s.parse::<Duration>().unwrap().to_string(), s);
        }
    }
}
