//! Diagnostics: one error or warning with a source location, rendered in
//! the style of rustc (file:line:column, the offending line, a caret and a
//! `help:` line) through miette.

use std::fmt;
use std::sync::Arc;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};

use crate::source::{SourceFile, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// A located message about an input file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
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

    /// Renders the diagnostic for a terminal or a log, without colour.
    pub fn render(&self) -> String {
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(120)
            .with_context_lines(1);
        let mut out = String::new();
        if handler.render_report(&mut out, self).is_err() {
            out = self.to_string();
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

    /// `file:line:column` for one-line summaries.
    pub fn location(&self) -> String {
        match self.span {
            Some(span) => format!("{}:{}:{}", self.file.name, span.line, span.column),
            None => self.file.name.clone(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
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
            Severity::Warning => miette::Severity::Warning,
            Severity::Error => miette::Severity::Error,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&*self.file)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (start, len) = self.byte_range()?;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            self.label.clone(),
            start,
            len,
        ))))
    }
}
