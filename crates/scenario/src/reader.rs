//! Reading one TOML table of a scenario: typed getters that check every value, remember
//! which keys were read, write the resolved value (defaults filled in) to an output table,
//! and report unknown keys with the keys that are allowed.
//!
//! The resolved table lists its keys in the order the reader first asked for them (a getter
//! called for an absent key counts, as does the first [`Section::set`]), not in the order
//! values happened to be written. Whether a key was given or defaulted therefore does not move
//! it, and the resolved form of a resolved scenario is the same text: a fixed point.

use std::ops::Range;
use std::str::FromStr;

use fairstream_core::{Bitrate, DataSize, Duration, Probability, closest, did_you_mean};
use toml::de::{DeArray, DeTable, DeValue};
use toml::{Spanned, Value};

use crate::error::{ScenarioError, Source};

pub(crate) type Result<T> = std::result::Result<T, ScenarioError>;

/// The value of a parameter the model derives itself (RED's thresholds and weight).
pub(crate) const AUTO: &str = "auto";

/// A string value and where it stands in the file.
pub(crate) type Named<'t> = (&'t str, Range<usize>);

/// A table being read.
pub(crate) struct Section<'t, 'i> {
    pub(crate) src: Source<'t>,
    table: &'t DeTable<'i>,
    span: Range<usize>,
    path: String,
    /// The resolved form of this table, in the order values were written.
    out: toml::Table,
    /// Every key a getter or [`Section::set`] was called for, first call first: the order of
    /// the resolved table.
    asked: Vec<String>,
}

/// For an error about an unknown key: what the table is and the keys a table of its kind
/// takes, when they are fewer than every key allowed (a flow of one protocol takes its own
/// fields, though a flow table may hold any protocol's), or None.
pub(crate) type OwnKeys = fn(&DeTable<'_>) -> Option<(String, Vec<&'static str>)>;

impl<'t, 'i> Section<'t, 'i> {
    /// Opens `table` at `path`, rejecting keys outside `allowed`.
    pub(crate) fn new(
        src: Source<'t>,
        table: &'t DeTable<'i>,
        span: Range<usize>,
        path: impl Into<String>,
        allowed: &[&str],
    ) -> Result<Self> {
        Self::with_own_keys(src, table, span, path, allowed, |_| None)
    }

    /// [`Section::new`], an unknown key's error listing the keys `own` finds for the table
    /// (and suggesting among them) rather than every key allowed.
    pub(crate) fn with_own_keys(
        src: Source<'t>,
        table: &'t DeTable<'i>,
        span: Range<usize>,
        path: impl Into<String>,
        allowed: &[&str],
        own: OwnKeys,
    ) -> Result<Self> {
        let path = path.into();
        for key in table.keys() {
            if !allowed.contains(&key.get_ref().as_ref()) {
                let field = join(&path, key.get_ref());
                let (of, listed) = own(table).map_or_else(
                    || (String::new(), allowed.to_vec()),
                    |(what, keys)| (format!(" of {what}"), keys),
                );
                return Err(src.error(
                    key.span(),
                    &field,
                    format!(
                        "unknown field{of}; {}expected one of: {}",
                        did_you_mean(key.get_ref(), listed.iter().copied()),
                        listed.join(", ")
                    ),
                ));
            }
        }
        Ok(Self {
            src,
            table,
            span,
            path,
            out: toml::Table::new(),
            asked: Vec::new(),
        })
    }

    /// Notes that the reader asked for `key` (its place in the resolved table).
    fn ask(&mut self, key: &str) {
        if !self.asked.iter().any(|k| k == key) {
            self.asked.push(key.to_string());
        }
    }

    /// Writes `value` as the resolved value of `key`.
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        self.ask(key);
        self.out.insert(key.to_string(), value);
    }

    /// Whether `key` has a resolved value yet.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.out.contains_key(key)
    }

    /// The resolved table, its keys in the order they were first asked for; this section's is
    /// left empty.
    pub(crate) fn take_resolved(&mut self) -> toml::Table {
        let mut out = std::mem::take(&mut self.out);
        let mut sorted = toml::Table::new();
        for key in &self.asked {
            if let Some((k, v)) = out.remove_entry(key) {
                sorted.insert(k, v);
            }
        }
        sorted.extend(out);
        sorted
    }

    /// The dotted path of `key` in this table.
    pub(crate) fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The raw value of `key`, if present.
    pub(crate) fn raw(&self, key: &str) -> Option<&'t Spanned<DeValue<'i>>> {
        self.table.get(key)
    }

    /// An error about `key` (at its value, or at the table if absent).
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let span = self
            .raw(key)
            .map_or_else(|| self.span.clone(), Spanned::span);
        self.src.error(span, &self.field(key), message)
    }

    /// A required field is missing.
    fn missing(&self, key: &str, expected: &str) -> ScenarioError {
        self.src.error(
            self.span.clone(),
            &self.field(key),
            format!("missing field; expected {expected}"),
        )
    }

    /// `key` as a string, or an error saying `expected`.
    pub(crate) fn opt_str(&mut self, key: &str, expected: &str) -> Result<Option<&'t str>> {
        self.ask(key);
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::String(s) => {
                    if let Some(c) = s.chars().find(|c| c.is_control()) {
                        return Err(self.error(key, control_character(c)));
                    }
                    self.set(key, Value::String(s.to_string()));
                    Ok(Some(s.as_ref()))
                }
                other => Err(self.error(
                    key,
                    format!("expected {expected}, found {}", a(other.type_str())),
                )),
            },
        }
    }

    /// `key` as a required string.
    pub(crate) fn req_str(&mut self, key: &str, expected: &str) -> Result<&'t str> {
        self.opt_str(key, expected)?
            .ok_or_else(|| self.missing(key, expected))
    }

    /// `key` as one of `choices`, defaulting to `default`.
    pub(crate) fn choice(
        &mut self,
        key: &str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str> {
        let expected = format!("one of \"{}\"", choices.join("\", \""));
        let v = self.opt_str(key, &expected)?.unwrap_or(default);
        let c = choices.iter().find(|&&c| c == v).ok_or_else(|| {
            let hint = closest(v, choices.iter().copied())
                .map_or_else(String::new, |c| format!("; did you mean \"{c}\"?"));
            self.error(key, format!("`{v}` is not {expected}{hint}"))
        })?;
        self.set(key, Value::String((*c).to_string()));
        Ok(c)
    }

    /// `key` as an integer in `[min, max]`.
    pub(crate) fn opt_int(&mut self, key: &str, min: i64, max: i64) -> Result<Option<i64>> {
        self.ask(key);
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let expected = format!("an integer from {min} to {max}");
        let out_of_range = |s: &Self, text: &str| {
            s.error(key, format!("{text} is out of range; expected {expected}"))
        };
        // A whole number beyond what 64 bits hold is out of range as written, never wrapped or
        // saturated into one that is in range.
        let n = match v.get_ref() {
            DeValue::Integer(i) => {
                let digits = i.as_str().replace('_', "");
                match i64::from_str_radix(&digits, i.radix()) {
                    Ok(n) => Some(n),
                    Err(_)
                        if digits
                            .trim_start_matches(['+', '-'])
                            .chars()
                            .all(|c| c.is_digit(i.radix())) =>
                    {
                        return Err(out_of_range(self, i.as_str()));
                    }
                    Err(_) => None,
                }
            }
            DeValue::Float(f) => match f.as_str().replace('_', "").parse::<f64>() {
                Ok(x) if x.fract() == 0.0 && x.abs() < 9.2e18 => Some(x as i64),
                Ok(x) if x.fract() == 0.0 => return Err(out_of_range(self, f.as_str())),
                _ => None,
            },
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => {
                self.set(key, Value::Integer(n));
                Ok(Some(n))
            }
            Some(n) => Err(out_of_range(self, &n.to_string())),
            None => Err(self.error(
                key,
                format!("expected {expected}, found {}", a(v.get_ref().type_str())),
            )),
        }
    }

    /// `key` as an integer with a default.
    pub(crate) fn int_or(&mut self, key: &str, min: i64, max: i64, default: i64) -> Result<i64> {
        let n = self.opt_int(key, min, max)?.unwrap_or(default);
        self.set(key, Value::Integer(n));
        Ok(n)
    }

    /// `key` as a real number.
    pub(crate) fn opt_float(&mut self, key: &str, min: f64, max: f64) -> Result<Option<f64>> {
        self.ask(key);
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match number(v.get_ref()) {
            Some(x) if x.is_finite() && (min..=max).contains(&x) => {
                self.set(key, Value::Float(x));
                Ok(Some(x))
            }
            _ => Err(self.error(key, format!("expected a number from {min} to {max}"))),
        }
    }

    /// `key` as a real number with a default, which the resolved scenario then shows.
    pub(crate) fn float_or(&mut self, key: &str, min: f64, max: f64, default: f64) -> Result<f64> {
        let x = self.opt_float(key, min, max)?.unwrap_or(default);
        self.set(key, Value::Float(x));
        Ok(x)
    }

    /// `key` as a real number in `[min, max]` or `"auto"` (derived by the model); `Some(None)`
    /// for `"auto"`, `None` when absent. The resolved value is the number or `"auto"`.
    pub(crate) fn opt_float_or_auto(
        &mut self,
        key: &str,
        min: f64,
        max: f64,
    ) -> Result<Option<Option<f64>>> {
        if let Some(DeValue::String(s)) = self.raw(key).map(Spanned::get_ref) {
            if s.trim() != AUTO {
                return Err(self.error(
                    key,
                    format!("`{s}` is neither a number from {min} to {max} nor \"{AUTO}\""),
                ));
            }
            self.set(key, Value::String(AUTO.into()));
            return Ok(Some(None));
        }
        Ok(self.opt_float(key, min, max)?.map(Some))
    }

    /// `key` as a number strictly between 0 and 1, with a default.
    pub(crate) fn open_fraction_or(&mut self, key: &str, default: f64) -> Result<f64> {
        let x = self.float_or(key, f64::MIN, f64::MAX, default)?;
        if x <= 0.0 || x >= 1.0 {
            return Err(self.error(
                key,
                format!("{x} is out of range; expected a number strictly between 0 and 1"),
            ));
        }
        Ok(x)
    }

    /// `key` as a boolean with a default.
    pub(crate) fn bool_or(&mut self, key: &str, default: bool) -> Result<bool> {
        self.ask(key);
        let b = match self.raw(key) {
            None => default,
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| self.error(key, "expected true or false"))?,
        };
        self.set(key, Value::Boolean(b));
        Ok(b)
    }

    /// `key` as a quantity written with its unit (`"35ms"`, `"11Mbps"`, `"1500B"`, `"1%"`).
    pub(crate) fn opt_unit<T>(&mut self, key: &str) -> Result<Option<T>>
    where
        T: FromStr<Err = fairstream_core::UnitError> + std::fmt::Display + Unit,
    {
        self.ask(key);
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let parsed = match v.get_ref() {
            DeValue::String(s) => s.parse::<T>().map_err(|e| self.error(key, e.to_string()))?,
            DeValue::Float(_) | DeValue::Integer(_) if T::BARE_NUMBER_OK => {
                let x = self.opt_float(key, 0.0, 1.0)?.unwrap_or_default();
                x.to_string()
                    .parse::<T>()
                    .map_err(|e| self.error(key, e.to_string()))?
            }
            other => {
                return Err(self.error(
                    key,
                    format!(
                        "expected {} written as a string with its unit, such as {}, found {}",
                        T::WHAT,
                        T::EXAMPLE,
                        a(other.type_str())
                    ),
                ));
            }
        };
        self.set(key, Value::String(parsed.to_string()));
        Ok(Some(parsed))
    }

    /// A required quantity.
    pub(crate) fn req_unit<T>(&mut self, key: &str) -> Result<T>
    where
        T: FromStr<Err = fairstream_core::UnitError> + std::fmt::Display + Unit,
    {
        self.opt_unit(key)?
            .ok_or_else(|| self.missing(key, &format!("{} such as {}", T::WHAT, T::EXAMPLE)))
    }

    /// A quantity with a default.
    pub(crate) fn unit_or<T>(&mut self, key: &str, default: T) -> Result<T>
    where
        T: FromStr<Err = fairstream_core::UnitError> + std::fmt::Display + Unit + Copy,
    {
        let v = self.opt_unit(key)?.unwrap_or(default);
        self.set(key, Value::String(v.to_string()));
        Ok(v)
    }

    /// An error at the first of `keys` the table sets, which do not apply to `what` (a kind of
    /// queue, topology, loss model...): a key the reader would otherwise ignore in silence.
    pub(crate) fn none_of(&self, keys: &[&str], what: &str) -> Result<()> {
        match keys.iter().find(|k| self.raw(k).is_some()) {
            Some(k) => Err(self.error(k, format!("does not apply to {what}"))),
            None => Ok(()),
        }
    }

    /// `key` as a sub-table.
    pub(crate) fn opt_table(&self, key: &str, allowed: &[&str]) -> Result<Option<Self>> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v.get_ref() {
            DeValue::Table(t) => {
                Section::new(self.src, t, v.span(), self.field(key), allowed).map(Some)
            }
            other => Err(self.error(
                key,
                format!("expected a table, found {}", a(other.type_str())),
            )),
        }
    }

    /// The sub-table `key`, which is absent, read as if it were written empty (`key = {}`): its
    /// defaults then resolve through the same getters, in the same order, as a table that sets
    /// some of them. `empty` is an empty table the caller keeps alive while the section is read.
    pub(crate) fn absent_table<'a>(
        &self,
        key: &str,
        empty: &'a DeTable<'i>,
        allowed: &[&str],
    ) -> Result<Section<'a, 'i>>
    where
        't: 'a,
    {
        debug_assert!(empty.is_empty() && self.raw(key).is_none());
        Section::new(self.src, empty, self.span.clone(), self.field(key), allowed)
    }

    /// `key` as an array of tables (an empty list if absent).
    pub(crate) fn tables(&self, key: &str, allowed: &[&str]) -> Result<Vec<Self>> {
        self.tables_with_own_keys(key, allowed, |_| None)
    }

    /// [`Section::tables`], each table opened by [`Section::with_own_keys`].
    pub(crate) fn tables_with_own_keys(
        &self,
        key: &str,
        allowed: &[&str],
        own: OwnKeys,
    ) -> Result<Vec<Self>> {
        let Some(v) = self.raw(key) else {
            return Ok(Vec::new());
        };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(
                key,
                format!(
                    "expected an array of tables ([[{key}]]), found {}",
                    a(v.get_ref().type_str())
                ),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let path = format!("{}[{i}]", self.field(key));
                match item.get_ref() {
                    DeValue::Table(t) => {
                        Section::with_own_keys(self.src, t, item.span(), path, allowed, own)
                    }
                    other => Err(self.src.error(
                        item.span(),
                        &path,
                        format!("expected a table, found {}", a(other.type_str())),
                    )),
                }
            })
            .collect()
    }

    /// `key` as an array: its items, each with its span, for the caller to read (and resolve
    /// with [`Section::set`]).
    pub(crate) fn opt_array(&mut self, key: &str) -> Result<Option<&'t DeArray<'i>>> {
        self.ask(key);
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v.get_ref() {
            DeValue::Array(items) => Ok(Some(items)),
            other => Err(self.error(
                key,
                format!("expected an array, found {}", a(other.type_str())),
            )),
        }
    }

    /// `key` as an array of strings.
    pub(crate) fn opt_str_list(&mut self, key: &str) -> Result<Option<Vec<Named<'t>>>> {
        self.ask(key);
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(key, "expected an array of strings"));
        };
        let mut out = Vec::new();
        for item in items.iter() {
            match item.get_ref() {
                DeValue::String(s) => {
                    if let Some(c) = s.chars().find(|c| c.is_control()) {
                        return Err(self.src.error(
                            item.span(),
                            &self.field(key),
                            control_character(c),
                        ));
                    }
                    out.push((s.as_ref(), item.span()));
                }
                _ => {
                    return Err(self
                        .src
                        .error(item.span(), &self.field(key), "expected a string"));
                }
            }
        }
        self.set(
            key,
            Value::Array(
                out.iter()
                    .map(|(s, _)| Value::String((*s).to_string()))
                    .collect(),
            ),
        );
        Ok(Some(out))
    }
}

/// The error for a string holding control character `c` (an ANSI escape would reach the
/// terminal through result tables and messages).
fn control_character(c: char) -> String {
    format!(
        "contains the control character U+{:04X}; scenario strings are printed in tables and messages, so they may hold none",
        u32::from(c)
    )
}

/// A TOML integer or float as a real number (`None` for anything else or an unreadable one).
pub(crate) fn number(v: &DeValue<'_>) -> Option<f64> {
    match v {
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
            .ok()
            .map(|n| n as f64),
        DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
        _ => None,
    }
}

/// A TOML type's name with its article: "an integer", "a string".
pub(crate) fn a(type_name: &str) -> String {
    let vowel = type_name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {type_name}", if vowel { "an" } else { "a" })
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// What a unit type is called in error messages.
pub(crate) trait Unit {
    const WHAT: &'static str;
    const EXAMPLE: &'static str;
    /// Whether a bare number is accepted (probabilities only).
    const BARE_NUMBER_OK: bool = false;
}

impl Unit for Duration {
    const WHAT: &'static str = "a duration";
    const EXAMPLE: &'static str = "\"35ms\"";
}
impl Unit for Bitrate {
    const WHAT: &'static str = "a bit rate";
    const EXAMPLE: &'static str = "\"11Mbps\"";
}
impl Unit for DataSize {
    const WHAT: &'static str = "a data size";
    const EXAMPLE: &'static str = "\"1500B\"";
}
impl Unit for Probability {
    const WHAT: &'static str = "a probability";
    const EXAMPLE: &'static str = "\"1%\" or 0.01";
    const BARE_NUMBER_OK: bool = true;
}
