//! A TCP flow's window control: `control = "aimd" | "iiad" | "sqrt" | "binomial"` with the
//! binomial parameters `k`, `l`, `alpha` and `beta` (PROTOCOLS.md §9.1).

use fairstream_proto::tcp::{Aimd, Binomial, Control};
use toml::Value;

use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys this reader owns.
pub(crate) const CONTROL_KEYS: &[&str] = &["control", "k", "l", "alpha", "beta"];

/// Largest increase exponent accepted (the family is studied for small k).
const MAX_K: f64 = 10.0;

/// Reads `control` and its parameters; a control that is not TCP-compatible (k + l ≠ 1) is
/// accepted with a warning pushed onto `warnings`.
pub(crate) fn read_control(
    f: &mut Section<'_, '_>,
    warnings: &mut Vec<ScenarioError>,
) -> Result<Control> {
    let kind = f.choice("control", &["aimd", "iiad", "sqrt", "binomial"], "aimd")?;
    let base = match kind {
        "aimd" => {
            if let Some(key) = CONTROL_KEYS[1..].iter().find(|k| f.raw(k).is_some()) {
                return Err(f.error(
                    key,
                    "applies to binomial controls; set control = \"iiad\", \"sqrt\" or \"binomial\"",
                ));
            }
            return Ok(Control::Aimd(Aimd));
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
    let alpha = f.opt_float("alpha", 0.0, 1e6)?.unwrap_or(base.alpha);
    if alpha <= 0.0 {
        return Err(f.error("alpha", "the increase factor must be above 0"));
    }
    let beta = f.opt_float("beta", 0.0, 1.0)?.unwrap_or(base.beta);
    if beta <= 0.0 || beta >= 1.0 {
        return Err(f.error(
            "beta",
            "the decrease factor must be between 0 and 1, both excluded",
        ));
    }
    for (key, v) in [("k", k), ("l", l), ("alpha", alpha), ("beta", beta)] {
        f.set(key, Value::Float(v));
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
