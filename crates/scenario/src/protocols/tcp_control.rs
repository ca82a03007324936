//! A TCP flow's congestion control: `control = "aimd" | "iiad" | "sqrt" | "binomial" | "cubic"
//! | "bbr"` with the binomial parameters `k`, `l`, `alpha` and `beta` (PROTOCOLS.md §9.1) or
//! CUBIC's table `cubic = { c, beta, fast_convergence, hystart }` (RFC 9438, RFC 9406).

use fairstream_proto::tcp::{Aimd, BbrParams, Binomial, Control, CubicParams};
use toml::Value;
use toml::de::DeTable;

use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys this reader owns.
pub(crate) const CONTROL_KEYS: &[&str] = &["control", "k", "l", "alpha", "beta", "cubic"];

/// The keys of the `cubic` table.
const CUBIC_KEYS: &[&str] = &["c", "beta", "fast_convergence", "hystart"];

/// The controls a flow may name.
const CONTROLS: &[&str] = &["aimd", "iiad", "sqrt", "binomial", "cubic", "bbr"];

/// Largest increase exponent accepted (the family is studied for small k).
const MAX_K: f64 = 10.0;

/// Reads `control` and its parameters, `default` (a preset's control) when absent; a binomial
/// control that is not TCP-compatible (k + l ≠ 1) is accepted with a warning pushed onto
/// `warnings`.
pub(crate) fn read_control(
    f: &mut Section<'_, '_>,
    warnings: &mut Vec<ScenarioError>,
    default: &Control,
) -> Result<Control> {
    let default_name = match default {
        Control::Aimd(_) => "aimd",
        Control::Binomial(_) => "binomial",
        Control::Cubic(_) => "cubic",
        Control::Bbr(_) => "bbr",
    };
    let kind = f.choice("control", CONTROLS, default_name)?;
    if kind != "cubic" && f.raw("cubic").is_some() {
        return Err(f.error("cubic", "applies to control = \"cubic\""));
    }
    let binomial_keys = &CONTROL_KEYS[1..5];
    if matches!(kind, "aimd" | "cubic" | "bbr")
        && let Some(key) = binomial_keys.iter().find(|k| f.raw(k).is_some())
    {
        return Err(f.error(
            key,
            "applies to binomial controls; set control = \"iiad\", \"sqrt\" or \"binomial\" (CUBIC's β is `cubic.beta`)",
        ));
    }
    let base = match kind {
        "aimd" => return Ok(Control::Aimd(Aimd)),
        "bbr" => return Ok(Control::Bbr(BbrParams::default())),
        "cubic" => {
            let base = match default {
                Control::Cubic(p) => *p,
                _ => CubicParams::default(),
            };
            return read_cubic(f, base).map(Control::Cubic);
        }
        "iiad" => Binomial::IIAD,
        "sqrt" => Binomial::SQRT,
        _ => {
            for key in ["k", "l"] {
                if f.raw(key).is_none() {
                    return Err(f.error(
                        key,
                        "missing field; a binomial control needs `k` and `l` (IIAD: k = 1, l = 0; SQRT: k = l = 0.5)",
                    ));
                }
            }
            // k and l are required (checked above); α and β default as for IIAD and SQRT.
            Binomial::SQRT
        }
    };
    let k = f.opt_float("k", 0.0, MAX_K)?;
    let l = f.opt_float("l", 0.0, 1.0)?;
    // A named control fixes k and l; its own values are accepted (the resolved form writes them).
    if kind != "binomial" {
        for (key, given, fixed) in [("k", k, base.k), ("l", l, base.l)] {
            if given.is_some_and(|v| v != fixed) {
                return Err(f.error(
                    key,
                    format!(
                        "is fixed by control = \"{kind}\" (k = {}, l = {}); use control = \"binomial\" to set k and l",
                        base.k, base.l
                    ),
                ));
            }
        }
    }
    let (k, l) = (k.unwrap_or(base.k), l.unwrap_or(base.l));
    let alpha = f.float_or("alpha", 0.0, 1e6, base.alpha)?;
    if alpha <= 0.0 {
        return Err(f.error("alpha", "the increase factor must be above 0"));
    }
    let beta = f.float_or("beta", 0.0, 1.0, base.beta)?;
    if beta <= 0.0 || beta >= 1.0 {
        return Err(f.error(
            "beta",
            "the decrease factor must be between 0 and 1, both excluded",
        ));
    }
    for (key, v) in [("k", k), ("l", l)] {
        f.set(key, Value::Float(v)); // a preset's when not given (alpha and beta: `float_or`)
    }
    let control = Binomial { k, l, alpha, beta };
    if !control.is_tcp_compatible() {
        warnings.push(f.error(
            "control",
            format!(
                "warning: k + l = {} is not 1, so this control is not TCP-compatible (its \
                 throughput does not scale as 1/sqrt(p))",
                k + l
            ),
        ));
    }
    Ok(Control::Binomial(control))
}

/// Reads the `cubic` table over `base` (RFC 9438's values, HyStart++ off unless a preset turns it
/// on), and writes it back resolved.
fn read_cubic(f: &mut Section<'_, '_>, base: CubicParams) -> Result<CubicParams> {
    let empty = DeTable::new();
    let mut t = match f.opt_table("cubic", CUBIC_KEYS)? {
        Some(t) => t,
        None => f.absent_table("cubic", &empty, CUBIC_KEYS)?,
    };
    let c = t.float_or("c", 0.0, 1e6, base.c)?;
    if c <= 0.0 {
        return Err(t.error("c", "CUBIC's C must be above 0 (RFC 9438: 0.4)"));
    }
    let beta = t.float_or("beta", 0.0, 1.0, base.beta)?;
    if beta <= 0.0 || beta >= 1.0 {
        return Err(t.error(
            "beta",
            "CUBIC's β is the share of the window kept on a loss, between 0 and 1 excluded (RFC 9438: 0.7)",
        ));
    }
    let fast_convergence = t.bool_or("fast_convergence", base.fast_convergence)?;
    let hystart = t.bool_or("hystart", base.hystart)?;
    f.set("cubic", Value::Table(t.take_resolved()));
    Ok(CubicParams {
        c,
        beta,
        fast_convergence,
        hystart,
    })
}
