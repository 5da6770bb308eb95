//! Source files and the spans that point into them.

use std::sync::Arc;

/// A named piece of input text: a blueprint, a template, or standard input.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
        })
    }

    /// The text of a 1-indexed line, without its line ending.
    pub fn line_text(&self, line: usize) -> &str {
        self.text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .trim_end_matches('\r')
    }
}

/// A location in a source file: 1-indexed line and column (counted in
/// characters) and the length of the marked text in characters. `file`
/// says which file when several are read together (a blueprint and the
/// bases it extends): 0 is the file named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub line: usize,
    pub column: usize,
    pub len: usize,
    pub file: u32,
}

impl Span {
    pub fn new(line: usize, column: usize, len: usize) -> Span {
        Span {
            line,
            column,
            len,
            file: 0,
        }
    }
}
