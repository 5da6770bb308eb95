//! Decoding the syntax tree into typed values, collecting every error in
//! one pass instead of stopping at the first.

use std::sync::Arc;

use super::field::{Field, declares, names, range};
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::suggest::{closest, did_you_mean_or_list, listed};
use crate::syntax::{Key, Node, Value};

/// A value together with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Located<T> {
    pub fn new(value: T, span: Span) -> Located<T> {
        Located { value, span }
    }
}

/// Collects diagnostics while typed values are read from the tree.
pub struct Decoder {
    /// Every file read, indexed by [`Span::file`]: the blueprint first,
    /// then the bases it extends and the `--set` overrides.
    pub files: Vec<Arc<SourceFile>>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Decoder {
    /// A decoder over `files`: the blueprint first, then what it was
    /// composed from.
    pub fn new(files: Vec<Arc<SourceFile>>) -> Decoder {
        Decoder {
            files,
            diagnostics: Vec::new(),
        }
    }

    /// The file a span points into.
    pub fn file_of(&self, span: Span) -> &Arc<SourceFile> {
        self.files.get(span.file as usize).unwrap_or(&self.files[0])
    }

    pub fn error(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::error(self.file_of(span), Some(span), message));
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    pub fn warning(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::warning(self.file_of(span), Some(span), message));
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// A note: information only, which fails no command.
    pub fn note(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        let mut note = Diagnostic::warning(self.file_of(span), Some(span), message);
        note.severity = crate::diagnostic::Severity::Note;
        self.diagnostics.push(note);
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// Reports "expected X, found Y" for `field`; returns the diagnostic,
    /// for a caller that has help to add.
    pub fn wrong_type(&mut self, field: &str, node: &Node, expected: &str) -> &mut Diagnostic {
        let found = node.kind();
        let message = format!("`{field}` must be {expected}, found {found}");
        let diagnostic = self.error(node.span, message);
        diagnostic.label = Some(format!("expected {expected}"));
        diagnostic
    }

    /// Opens a mapping whose keys must all be fields of `known`, the
    /// table of its object.
    pub fn fields<'n>(
        &mut self,
        field: &str,
        node: &'n Node,
        known: &'static [Field],
    ) -> Option<Fields<'n>> {
        match &node.value {
            Value::Map(entries) => Some(Fields {
                entries,
                known,
                taken: vec![false; entries.len()],
            }),
            _ => {
                self.wrong_type(field, node, "a mapping");
                None
            }
        }
    }

    pub fn string(&mut self, field: &str, node: &Node) -> Option<Located<String>> {
        if node.tag.is_some() {
            self.unexpected_tag(node);
            return None;
        }
        match &node.value {
            Value::String(s) => {
                if let Some(bad) = s
                    .chars()
                    .find(|c| c.is_control() && *c != '\n' && *c != '\t')
                {
                    let message = format!(
                        "`{field}` contains the control character U+{:04X}",
                        u32::from(bad)
                    );
                    self.error(node.span, message);
                    return None;
                }
                Some(Located::new(s.clone(), node.span))
            }
            _ => {
                self.wrong_type(field, node, "a string");
                None
            }
        }
    }

    /// A string, also accepting a number written without quotes (`1.31`,
    /// `8`), which YAML would otherwise turn into a number.
    pub fn string_or_number(&mut self, field: &str, node: &Node) -> Option<Located<String>> {
        match &node.value {
            Value::Int(i) => Some(Located::new(i.to_string(), node.span)),
            Value::Float(f) => {
                let text = self.file_of(node.span).line_text(node.span.line);
                let start = node.span.column.saturating_sub(1);
                let raw: String = text
                    .chars()
                    .skip(start)
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let raw = if raw.is_empty() { f.to_string() } else { raw };
                Some(Located::new(raw, node.span))
            }
            _ => self.string(field, node),
        }
    }

    pub fn integer(
        &mut self,
        field: &str,
        node: &Node,
        min: i64,
        max: i64,
    ) -> Option<Located<i64>> {
        match node.value {
            Value::Int(i) if (min..=max).contains(&i) => Some(Located::new(i, node.span)),
            Value::Int(i) => {
                let message = format!("`{field}` is {i}, outside the allowed range {min} to {max}");
                let diagnostic = self.error(node.span, message);
                diagnostic.label = Some(format!("expected {min} to {max}"));
                None
            }
            _ => {
                self.wrong_type(field, node, "an integer");
                None
            }
        }
    }

    pub fn boolean(&mut self, field: &str, node: &Node) -> Option<Located<bool>> {
        match node.value {
            Value::Bool(b) => Some(Located::new(b, node.span)),
            _ => {
                self.wrong_type(field, node, "`true` or `false`");
                None
            }
        }
    }

    pub fn list<'n>(&mut self, field: &str, node: &'n Node) -> &'n [Node] {
        match &node.value {
            Value::Seq(items) => items,
            _ => {
                self.wrong_type(field, node, "a list");
                &[]
            }
        }
    }

    /// A list of strings; `None` when the node is not a list or an item is
    /// not a string (both reported), so that a caller does not also report
    /// the list as empty or missing.
    pub fn string_list(&mut self, field: &str, node: &Node) -> Option<Vec<Located<String>>> {
        let Value::Seq(items) = &node.value else {
            self.wrong_type(field, node, "a list");
            return None;
        };
        let strings: Vec<Located<String>> = items
            .iter()
            .filter_map(|item| self.string(field, item))
            .collect();
        (strings.len() == items.len()).then_some(strings)
    }

    /// A mapping of strings to strings (labels, tags), in written order.
    pub fn string_map(
        &mut self,
        field: &str,
        node: &Node,
    ) -> Vec<(Located<String>, Located<String>)> {
        let Value::Map(entries) = &node.value else {
            self.wrong_type(field, node, "a mapping of names to strings");
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(key, value)| {
                let value = match &value.value {
                    Value::Bool(b) => {
                        let hint = format!("quote it: `\"{b}\"`");
                        let message =
                            format!("`{field}.{}` must be a string, found a boolean", key.name);
                        self.error(value.span, message).help = Some(hint);
                        return None;
                    }
                    _ => self.string_or_number(&format!("{field}.{}", key.name), value)?,
                };
                Some((Located::new(key.name.clone(), key.span), value))
            })
            .collect()
    }

    /// Picks one of `choices`, reporting the closest when the value is not one.
    pub fn choice<T: Copy>(
        &mut self,
        field: &str,
        node: &Node,
        choices: &[(&str, T)],
    ) -> Option<Located<T>> {
        let text = self.string_or_number(field, node)?;
        if let Some((_, value)) = choices.iter().find(|(name, _)| *name == text.value) {
            return Some(Located::new(*value, text.span));
        }
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        let message = format!("`{field}` cannot be `{}`", text.value);
        let diagnostic = self.error(text.span, message);
        diagnostic.label = Some(format!("expected one of {}", listed(&names)));
        if let Some(best) = closest(&text.value, &names) {
            diagnostic.help = Some(format!("did you mean `{best}`?"));
        }
        None
    }

    /// One of `names`, the value being the name itself.
    pub fn name_choice(
        &mut self,
        field: &str,
        node: &Node,
        names: &[&'static str],
    ) -> Option<Located<&'static str>> {
        let choices: Vec<(&str, &'static str)> = names.iter().map(|n| (*n, *n)).collect();
        self.choice(field, node, &choices)
    }

    fn unexpected_tag(&mut self, node: &Node) {
        let tag = node.tag.clone().unwrap_or_default();
        let message = format!("a blueprint does not use YAML tags such as `{tag}`");
        self.error(node.span, message).help = Some(
            "template values are written `{parameter: Name}` or `{import: ExportName}`".to_string(),
        );
    }
}

/// The entries of one mapping, with the fields its table declares.
pub struct Fields<'n> {
    entries: &'n [(Key, Node)],
    known: &'static [Field],
    taken: Vec<bool>,
}

impl<'n> Fields<'n> {
    /// The node for `name`, if present.
    pub fn get(&mut self, name: &str) -> Option<&'n Node> {
        debug_assert!(declares(self.known, name), "field {name} is not declared");
        let index = self.entries.iter().position(|(key, _)| key.name == name)?;
        self.taken[index] = true;
        let node = &self.entries[index].1;
        // `field:` with no value means "not set", as in most YAML tools.
        (!matches!(node.value, Value::Null)).then_some(node)
    }

    /// The range the table declares for the integer field `name`.
    pub fn range(&self, name: &str) -> (i64, i64) {
        range(self.known, name)
    }

    /// Whether `name` is written with a value (`name:` alone is not). A
    /// field given but not decoded had its error reported where it is
    /// written, so it must not also be reported as missing.
    pub fn given(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|(key, node)| key.name == name && !matches!(node.value, Value::Null))
    }

    /// Where the key `name` is written, if present.
    pub fn key_span(&self, name: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(key, _)| key.name == name)
            .map(|(key, _)| key.span)
    }

    /// Reports every key that is not a known field, with a suggestion.
    /// Returns the fields suggested, so that a misspelt field is not also
    /// reported as missing.
    pub fn finish(&self, decoder: &mut Decoder, context: &str) -> Vec<&'static str> {
        let mut suggested = Vec::new();
        for ((key, _), taken) in self.entries.iter().zip(&self.taken) {
            if *taken || declares(self.known, &key.name) {
                continue;
            }
            let known = names(self.known);
            let message = format!("unknown field `{}` in {context}", key.name);
            let diagnostic = decoder.error(key.span, message);
            diagnostic.label = Some("unknown field".to_string());
            suggested.extend(closest(&key.name, &known));
            diagnostic.help = Some(did_you_mean_or_list(
                &key.name,
                &known,
                &format!("the fields of {context} are"),
            ));
        }
        suggested
    }
}
