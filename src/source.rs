//! Source files and the spans that point into them.

use std::sync::{Arc, OnceLock};

/// A named piece of input text: a blueprint, a template, or standard input.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// The byte offset where each line starts, found on first use: each
    /// diagnostic asks for its lines (and the template reader for the line
    /// of a tag it reports), so scanning the text from its start each time
    /// would make reporting many findings quadratic.
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
            line_starts: OnceLock::new(),
        })
    }

    /// The text of a 1-indexed line, without its line ending; `""` past
    /// the end.
    pub fn line_text(&self, line: usize) -> &str {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|at| at + 1))
                .collect()
        });
        let index = line.saturating_sub(1);
        let Some(&start) = starts.get(index) else {
            return "";
        };
        let end = starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        self.text[start..end].trim_end_matches('\r')
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

#[cfg(test)]
mod tests {
    use super::SourceFile;

    /// Line `n` is what `str::lines` gives as its `n`th, without a `\r`:
    /// with CRLF endings, a trailing newline or none, blank lines, and
    /// past the end.
    #[test]
    fn line_text_is_the_nth_line_without_its_ending() {
        for text in ["", "a", "a\n", "a\r\nb\r\n", "a\n\nc", "x\ny\r", "\n\n"] {
            let file = SourceFile::new("t", text);
            for line in 0..6 {
                let expected = text
                    .lines()
                    .nth(line.max(1) - 1)
                    .unwrap_or("")
                    .trim_end_matches('\r');
                assert_eq!(file.line_text(line), expected, "{text:?} line {line}");
            }
        }
    }
}
