//! Diagnostics: one error, warning or note with a source location, rendered in
//! the style of rustc (file:line:column, the offending line, a caret and a
//! `help:` line). They also implement `miette::Diagnostic`, so a program
//! using eksynth as a library can hand them to any miette reporter.

use std::fmt;
use std::sync::Arc;

use miette::{LabeledSpan, SourceCode};

use crate::escape;
use crate::source::{SourceFile, Span};

/// How serious a diagnostic (or a validation finding) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Information that needs no change: never fails a command, not even
    /// `validate --strict`.
    Note,
    Warning,
    Error,
}

impl Severity {
    /// The severity of a finding by its ID's first letter: `E`, `W`, or
    /// `I` (and anything else) for a note.
    pub fn of_id(id: &str) -> Severity {
        match id.as_bytes().first() {
            Some(b'E') => Severity::Error,
            Some(b'W') => Severity::Warning,
            _ => Severity::Note,
        }
    }

    /// How the level is written: in rendered diagnostics, JSON reports and
    /// SARIF alike.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A located message about an input file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable identifier such as `E2001`, for findings.
    pub code: Option<&'static str>,
    pub message: String,
    pub file: Arc<SourceFile>,
    pub span: Option<Span>,
    pub label: Option<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(file: &Arc<SourceFile>, span: Option<Span>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code: None,
            message: message.into(),
            file: Arc::clone(file),
            span,
            label: None,
            help: None,
        }
    }

    pub fn warning(file: &Arc<SourceFile>, span: Option<Span>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, span, message)
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders the diagnostic the way rustc does: the message, the
    /// location, the offending line with a caret under the marked text, and
    /// the help. Everything that may hold the input's text (the message,
    /// the file name, the line, the label, the help) is printed by the
    /// terminal rule of [`escape`], the caret counted on the escaped line.
    pub fn render(&self) -> String {
        let severity = self.severity.name();
        let code = self.code.map(|c| format!("[{c}]")).unwrap_or_default();
        let name = escape::terminal(&self.file.name);
        let mut out = format!("{severity}{code}: {}\n", escape::terminal(&self.message));
        let help = self.help.as_deref().map(escape::terminal);
        let Some(span) = self.span else {
            out.push_str(&format!(" --> {name}\n"));
            if let Some(help) = help {
                out.push_str(&format!("  = help: {help}\n"));
            }
            return out;
        };
        let number = span.line.to_string();
        let gutter = " ".repeat(number.len());
        out.push_str(&format!(
            "{gutter}--> {name}:{}:{}\n",
            span.line, span.column
        ));
        out.push_str(&format!("{gutter} |\n"));
        let line = self.file.line_text(span.line);
        // Tabs keep their width as spaces; any other control character is
        // shown escaped, and the caret moves with it.
        let shown = |text: &str| escape::terminal(&text.replace('\t', "    ")).into_owned();
        let before: String = line.chars().take(span.column.saturating_sub(1)).collect();
        let marked: String = line
            .chars()
            .skip(span.column.saturating_sub(1))
            .take(span.len.max(1))
            .collect();
        let (text, indent, carets) = window(
            &shown(line),
            shown(&before).chars().count(),
            shown(&marked).chars().count().max(1),
        );
        out.push_str(&format!("{number} | {text}\n"));
        out.push_str(&format!(
            "{gutter} | {}{}",
            " ".repeat(indent),
            "^".repeat(carets)
        ));
        if let Some(label) = &self.label {
            out.push(' ');
            out.push_str(&escape::terminal(label));
        }
        out.push('\n');
        if let Some(help) = help {
            out.push_str(&format!("{gutter} |\n{gutter} = help: {help}\n"));
        }
        out
    }

    /// The byte range in the source text that the span covers.
    fn byte_range(&self) -> Option<(usize, usize)> {
        let span = self.span?;
        let text = &self.file.text;
        let mut offset = 0;
        for (index, line) in text.split_inclusive('\n').enumerate() {
            if index + 1 == span.line {
                let start = offset
                    + line
                        .char_indices()
                        .nth(span.column.saturating_sub(1))
                        .map_or(line.trim_end().len(), |(i, _)| i);
                let rest = &text[start..];
                let len: usize = rest
                    .chars()
                    .take(span.len.max(1))
                    .take_while(|c| *c != '\n')
                    .map(char::len_utf8)
                    .sum();
                return Some((start, len));
            }
            offset += line.len();
        }
        Some((text.len(), 0))
    }

    /// `file:line:column` for one-line summaries, by the terminal rule.
    pub fn location(&self) -> String {
        let name = escape::terminal(&self.file.name);
        match self.span {
            Some(span) => format!("{name}:{}:{}", span.line, span.column),
            None => name.into_owned(),
        }
    }
}

/// A shown line longer than this many characters (a minified JSON
/// template, a document past the reader's limits) is cut to a window of
/// this width around the marked text.
const MAX_LINE_CHARS: usize = 400;
/// Characters of such a line kept before the marked text.
const CONTEXT_CHARS: usize = 100;

/// The part of a shown `line` to print, with the columns before the caret
/// and the number of carets, when `indent` characters come before the
/// marked text and `carets` are marked.
fn window(line: &str, indent: usize, carets: usize) -> (String, usize, usize) {
    let length = line.chars().count();
    if length <= MAX_LINE_CHARS {
        return (line.to_string(), indent, carets);
    }
    let start = indent.saturating_sub(CONTEXT_CHARS).min(length);
    let end = (start + MAX_LINE_CHARS).min(length);
    let mut text: String = line.chars().skip(start).take(end - start).collect();
    let mut indent = indent - start;
    if start > 0 {
        text.insert(0, '…');
        indent += 1;
    }
    if end < length {
        text.push('…');
    }
    let carets = carets.min((end - start).saturating_sub(indent)).max(1);
    (text, indent, carets)
}

/// The message by the terminal rule, as `render` prints it (and a miette
/// reporter, which takes the message from here).
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape::terminal(&self.message))
    }
}

impl std::error::Error for Diagnostic {}

/// miette reads source files directly; the name is what the report header shows.
impl SourceCode for SourceFile {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let contents = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            contents.column(),
            contents.line_count(),
        )))
    }
}

impl miette::Diagnostic for Diagnostic {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Note => miette::Severity::Advice,
            Severity::Warning => miette::Severity::Warning,
            Severity::Error => miette::Severity::Error,
        })
    }

    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code
            .map(|code| Box::new(code) as Box<dyn fmt::Display>)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_deref()
            .map(|help| Box::new(escape::terminal(help)) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&*self.file)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (start, len) = self.byte_range()?;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            self.label
                .as_deref()
                .map(|label| escape::terminal(label).into_owned()),
            start,
            len,
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_as_a_window_around_its_caret() {
        let line = format!("a: [{}]", "1,".repeat(1000));
        let file = SourceFile::new("big.yaml", format!("{line}\n"));
        let rendered = Diagnostic::error(&file, Some(Span::new(1, 701, 1)), "too large")
            .with_label("here")
            .render();
        let lines: Vec<&str> = rendered.lines().collect();
        let shown = lines[3].strip_prefix("1 | ").expect("the line");
        assert_eq!(shown.chars().count(), MAX_LINE_CHARS + 2, "{rendered}");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{rendered}");
        let caret = lines[4].strip_prefix("  | ").expect("the caret line");
        assert_eq!(caret, format!("{}^ here", " ".repeat(CONTEXT_CHARS + 1)));
    }

    #[test]
    fn a_library_reporter_gets_the_message_escaped() {
        let file = SourceFile::new("x.yaml", "x: 1\n".to_string());
        let diagnostic = Diagnostic::error(&file, None, "bad `a\u{1b}[2J\nb`");
        assert_eq!(diagnostic.to_string(), "bad `a\\u{1b}[2J\\nb`");
    }
}
