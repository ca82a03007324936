//! [`ScenarioError`]: what is wrong with a scenario, and where (file, line, column, field).

use std::fmt;
use std::ops::Range;

/// A scenario that cannot be run. Its `Display` is one line:
/// `FILE:LINE:COLUMN: field `FIELD`: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given by the caller.
    pub file: String,
    /// 1-based line of the offending text (0 if unknown).
    pub line: usize,
    /// 1-based column of the offending text (0 if unknown).
    pub column: usize,
    /// Dotted path of the field, e.g. `topology.link[2].rate` (empty for syntax errors).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Where errors point: the file's name and text, to turn byte spans into lines and columns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
}

impl Source<'_> {
    /// An error at byte `span` of the text about `field`.
    pub(crate) fn error(
        &self,
        span: Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        let at = span.start.min(self.text.len());
        let before = &self.text[..at];
        let line = before.matches('\n').count() + 1;
        // In characters, as editors count them (`é` is one column, not two bytes).
        let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
        let column = before[line_start..].chars().count() + 1;
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            field: field.to_string(),
            message: message.into(),
        }
    }
}
