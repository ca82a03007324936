//! `toml_dumps`: a Python dict written as TOML text by the `toml` crate (the writer of
//! `fairstream.tomlio.dumps`). A reproduction writes thousands of scenario dicts before its first
//! run; a writer in Python took half a millisecond for each.
//!
//! What it takes is what TOML holds: mappings with string keys, lists and tuples, str, bool,
//! int (64 bits) and float (NaN and the infinities included). Anything else is a TypeError that
//! names the key path of the value, such as `flow.0.rate`, so that a scenario dict with a hole
//! in it says where.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use toml::{Table, Value};

/// `doc` (a mapping) as TOML text that `tomllib` reads back into an equal dict.
#[pyfunction]
pub(crate) fn toml_dumps(doc: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut path = Vec::new();
    let Some(table) = table(doc, &mut path)? else {
        return Err(unwritable(doc, &path)?);
    };
    toml::to_string(&table).map_err(|e| PyValueError::new_err(format!("cannot write TOML: {e}")))
}

fn dotted(path: &[String]) -> String {
    if path.is_empty() {
        "<root>".to_string()
    } else {
        path.join(".")
    }
}

/// The TypeError for a value TOML cannot hold.
fn unwritable(value: &Bound<'_, PyAny>, path: &[String]) -> PyResult<PyErr> {
    Ok(PyTypeError::new_err(format!(
        "cannot write {} value {} at {} as TOML",
        value.get_type().name()?,
        value.repr()?,
        dotted(path)
    )))
}

/// A mapping as a table; None when `value` is no mapping.
fn table(value: &Bound<'_, PyAny>, path: &mut Vec<String>) -> PyResult<Option<Table>> {
    let items = if let Ok(dict) = value.cast::<PyDict>() {
        dict.items()
    } else if let Ok(mapping) = value.cast::<PyMapping>() {
        mapping.items()?
    } else {
        return Ok(None);
    };
    let mut out = Table::with_capacity(items.len());
    for item in items.iter() {
        let (key, item): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let Ok(name) = key.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "TOML keys must be strings, got {} at {}",
                key.repr()?,
                dotted(path)
            )));
        };
        let name = name.to_str()?.to_string();
        path.push(name.clone());
        let v = toml_value(&item, path)?;
        path.pop();
        out.insert(name, v);
    }
    Ok(Some(out))
}

/// Any value TOML holds; the TypeError of `unwritable` for anything else. Scalars are tried
/// first: most values are, and asking whether one is a mapping asks `collections.abc`.
fn toml_value(value: &Bound<'_, PyAny>, path: &mut Vec<String>) -> PyResult<Value> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Boolean(b.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        return match value.extract::<i64>() {
            Ok(i) => Ok(Value::Integer(i)),
            Err(_) => Err(unwritable(value, path)?), // TOML's integers are 64-bit
        };
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(list) = value.cast::<PyList>() {
        Some(list.iter().collect())
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        Some(tuple.iter().collect())
    } else {
        None
    };
    if let Some(items) = items {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            path.push(i.to_string());
            out.push(toml_value(item, path)?);
            path.pop();
        }
        return Ok(Value::Array(out));
    }
    match table(value, path)? {
        Some(t) => Ok(Value::Table(t)),
        None => Err(unwritable(value, path)?),
    }
}
