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
}

impl UnitError {
    fn expected(what: &str, input: &str, example: &str) -> Self {
        Self {
            message: format!("`{input}` is not {what}; expected a form such as {example}"),
        }
    }
    fn negative(what: &str, input: &str) -> Self {
        Self {
            message: format!("`{input}`: {what} must not be negative"),
        }
    }
}

/// Splits `"1.5 Mbit/s"` into `(1.5, "mbit/s")`; the unit is lower-cased.
fn split_number(input: &str) -> Option<(f64, String)> {
    let s = input.trim();
    let candidate = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E')))
        .unwrap_or(s.len());
    // The longest prefix that is a number: "1e-3s" keeps its exponent, "5e" gives back the "e".
    (1..=candidate).rev().find_map(|end| {
        let number: f64 = s[..end].parse().ok()?;
        number
            .is_finite()
            .then(|| (number, s[end..].trim().to_ascii_lowercase()))
    })
}

impl FromStr for Bitrate {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"11Mbps\", \"1.5 Mbit/s\" or \"512kbps\"";
        let (n, unit) =
            split_number(input).ok_or_else(|| UnitError::expected("a bit rate", input, EXAMPLE))?;
        let scale = match unit.as_str() {
            "bps" | "bit/s" => 1.0,
            "kbps" | "kbit/s" | "kb/s" => 1e3,
            "mbps" | "mbit/s" | "mb/s" => 1e6,
            "gbps" | "gbit/s" | "gb/s" => 1e9,
            _ => return Err(UnitError::expected("a bit rate", input, EXAMPLE)),
        };
        if n < 0.0 {
            return Err(UnitError::negative("a bit rate", input));
        }
        Ok(Self::from_bps_f64(n * scale))
    }
}

impl FromStr for DataSize {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"1500B\", \"10KB\" or \"64KiB\"";
        let (n, unit) = split_number(input)
            .ok_or_else(|| UnitError::expected("a data size", input, EXAMPLE))?;
        let scale = match unit.as_str() {
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
        Ok(Self::bytes((n * scale).round() as u64))
    }
}

impl FromStr for Duration {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"35ms\", \"1.5s\" or \"300 s\"";
        let (n, unit) =
            split_number(input).ok_or_else(|| UnitError::expected("a duration", input, EXAMPLE))?;
        let scale = match unit.as_str() {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "min" => 60.0,
            _ => return Err(UnitError::expected("a duration", input, EXAMPLE)),
        };
        if n < 0.0 {
            return Err(UnitError::negative("a duration", input));
        }
        Ok(Self::from_secs_f64(n * scale))
    }
}

impl FromStr for Probability {
    type Err = UnitError;
    fn from_str(input: &str) -> Result<Self, UnitError> {
        const EXAMPLE: &str = "\"1%\", \"0.5 %\" or \"0.01\"";
        let (n, unit) = split_number(input)
            .ok_or_else(|| UnitError::expected("a probability", input, EXAMPLE))?;
        let p = match unit.as_str() {
            "%" => n / 100.0,
            "" => n,
            _ => return Err(UnitError::expected("a probability", input, EXAMPLE)),
        };
        Self::new(p).ok_or_else(|| UnitError {
            message: format!("`{input}` is not a probability between 0 and 1 (0% and 100%)"),
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
    fn display_round_trips() {
        for s in ["11Mbps", "1.5Mbps", "56kbps", "100bps"] {
            assert_eq!(s.parse::<Bitrate>().unwrap().to_string(), s);
        }
        for s in ["35ms", "1.5s", "12us", "300s"] {
            assert_eq!(s.parse::<Duration>().unwrap().to_string(), s);
        }
    }
}
