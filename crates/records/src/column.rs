//! Columns a component declares for a table it adds to: a queue discipline's parameters in the
//! link summary, a protocol's metric summaries in the flow summary, a queue's interval series.
//! Each is declared once, beside the component (name, unit, meaning, type), as a `static`; the
//! records hold `&'static Column`s with their values, and the Parquet writer, `summary.json`, the
//! docs test and the report read the declaration. No table has a closed list of such columns to
//! extend.

/// A declared column.
#[derive(Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name in the table (`snake_case`, unit suffixed where it has one: `_s`, `_bps`,
    /// `_bytes`).
    pub name: &'static str,
    /// Its unit in words (`"bit/s"`, `"bytes"`, `"seconds"`, `"packets"`; empty for none).
    pub unit: &'static str,
    /// What it means, one sentence (docs/results.md says the same).
    pub meaning: &'static str,
    /// Its type.
    pub kind: ColumnKind,
}

impl Column {
    /// A column `name` of `kind` in `unit`, meaning `meaning`.
    pub const fn new(
        name: &'static str,
        kind: ColumnKind,
        unit: &'static str,
        meaning: &'static str,
    ) -> Self {
        Self {
            name,
            unit,
            meaning,
            kind,
        }
    }
}

/// The type of a declared column's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// A count or another whole number (unsigned 64-bit).
    Count,
    /// A real number (64-bit float; not finite is written as null).
    Real,
    /// A word (a keyword such as `"pfifo"`).
    Text,
    /// Yes or no.
    Flag,
}

/// A value of a declared column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Of a [`ColumnKind::Count`] column.
    Count(u64),
    /// Of a [`ColumnKind::Real`] column.
    Real(f64),
    /// Of a [`ColumnKind::Text`] column.
    Text(&'static str),
    /// Of a [`ColumnKind::Flag`] column.
    Flag(bool),
}

impl Value {
    /// A real number `v` as a value of a column of `kind` (a count rounds down; a flag is
    /// whether `v` is not zero; a word cannot be made of a number: the number stays).
    pub fn of(kind: ColumnKind, v: f64) -> Self {
        match kind {
            ColumnKind::Count => Self::Count(v as u64),
            ColumnKind::Flag => Self::Flag(v != 0.0),
            ColumnKind::Real | ColumnKind::Text => Self::Real(v),
        }
    }
}

/// The values a row holds for declared columns: those it has, each with its column (the others
/// are null in the table).
pub type Declared = Vec<(&'static Column, Value)>;

/// The value row `row` holds for `column`, if any (columns are compared by identity: each is
/// one `static`).
pub fn value_of(row: &[(&'static Column, Value)], column: &Column) -> Option<Value> {
    row.iter()
        .find(|(c, _)| std::ptr::eq(*c, column))
        .map(|&(_, v)| v)
}

/// The columns of `declared` lists, each once, in the order first seen.
pub fn union<'a>(
    declared: impl IntoIterator<Item = &'a [&'static Column]>,
) -> Vec<&'static Column> {
    let mut out: Vec<&'static Column> = Vec::new();
    for list in declared {
        for &c in list {
            if !out.iter().any(|o| std::ptr::eq(*o, c)) {
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    static A: Column = Column::new("a_bps", ColumnKind::Real, "bit/s", "A rate.");
    static B: Column = Column::new("b", ColumnKind::Count, "", "A count.");

    #[test]
    fn columns_are_told_apart_by_identity_and_listed_once() {
        let row = vec![(&B, Value::Count(3))];
        assert_eq!(value_of(&row, &B), Some(Value::Count(3)));
        assert_eq!(value_of(&row, &A), None);
        let all = union([&[&A, &B][..], &[&B][..], &[&A][..]]);
        assert_eq!(
            all.iter().map(|c| c.name).collect::<Vec<_>>(),
            ["a_bps", "b"]
        );
    }
}
