//! The template reader: a YAML (short- or long-form intrinsics) or JSON
//! template back into the model.
//!
//! The file is parsed into the spanned syntax tree first; this module then
//! walks the tree and reports every problem it finds, located, instead of
//! stopping at the first one.

use std::sync::Arc;

use super::expr::Expr;
use super::template::Template;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::syntax::{self, Key, Node, Value};

mod intrinsics;
mod sections;

/// Reads a template file. Every problem found is returned, located.
pub fn read(file: &Arc<SourceFile>) -> Result<Template, Vec<Diagnostic>> {
    let root = syntax::parse(file).map_err(|diagnostic| vec![*diagnostic])?;
    read_parsed(file, &root)
}

/// [`read`] of a file already parsed into `root`.
pub fn read_parsed(
    file: &Arc<SourceFile>,
    root: &syntax::Node,
) -> Result<Template, Vec<Diagnostic>> {
    let mut reader = Reader::new(std::slice::from_ref(file), false);
    let template = reader.template(root);
    if reader.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(reader.diagnostics);
    }
    Ok(template)
}

/// A template read for validation: whatever could be read, and what was
/// said about the rest.
#[derive(Debug, Default)]
pub struct Reading {
    /// Everything that could be read. A resource or parameter that could not
    /// be read is here anyway, empty, so that references to it resolve.
    pub template: Template,
    /// Errors about what is wrong, and notes (`I0004`, `I0005`) about what
    /// is legal but beyond the model: the section or value is not checked.
    pub diagnostics: Vec<Diagnostic>,
    /// The transforms the template declares (`Transform`), in order.
    pub transforms: Vec<String>,
    /// Template paths (`Resources/Name`, `Parameters/Name`...) of the parts
    /// that had an error: what validation says of them would only repeat it.
    pub damaged: Vec<String>,
}

/// Reads a template for validation, as CloudFormation accepts it: a
/// construct the model cannot hold (a transform, the `Rules` section, an
/// intrinsic function it does not know, an intrinsic where the model wants a
/// literal) is a note at that construct, never an error, and an error in
/// one part does not stop the reading of the others.
pub fn read_lenient(file: &Arc<SourceFile>, root: &syntax::Node) -> Reading {
    let mut reader = Reader::new(std::slice::from_ref(file), true);
    let template = reader.template(root);
    Reading {
        template,
        diagnostics: reader.diagnostics,
        transforms: reader.transforms,
        damaged: reader.damaged,
    }
}

/// One value written anywhere (a literal, or an intrinsic in short or long
/// form) read as a template value, such as a blueprint's override. `files`
/// are the files the node's spans point into (`Span::file`).
pub fn read_value(files: &[Arc<SourceFile>], node: &Node) -> Result<Expr, Vec<Diagnostic>> {
    let mut reader = Reader::new(files, false);
    match reader.expr(node, Context::Value) {
        Some(value) if reader.diagnostics.is_empty() => Ok(value),
        _ => Err(reader.diagnostics),
    }
}

/// How an intrinsic was written, for messages and for how its argument is
/// read: a short form's argument is the tagged node itself, so its tag is
/// the function's, not the argument's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Short,
    Long,
}

/// Whether a `{"Condition": name}` mapping means a condition reference
/// here: only as an argument of `Fn::And`, `Fn::Or` and `Fn::Not`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Value,
    Condition,
}

struct Reader<'f> {
    /// The files spans point into; a template's spans all point at the first.
    files: &'f [Arc<SourceFile>],
    diagnostics: Vec<Diagnostic>,
    /// Whether a construct beyond the model is a note ([`read_lenient`])
    /// rather than an error.
    lenient: bool,
    transforms: Vec<String>,
    damaged: Vec<String>,
    /// The template declares a transform: what it rewrites may take forms
    /// CloudFormation alone does not.
    transformed: bool,
    /// One of them is the SAM transform (`Globals`, `IgnoreGlobals`).
    serverless: bool,
    /// One of them is `AWS::LanguageExtensions`, which `Fn::ForEach` needs.
    language_extensions: bool,
}

/// The finding ID of a note about a transform.
const TRANSFORM_NOTE: &str = "I0004";
/// The finding ID of a note about a construct that is not checked.
const UNCHECKED_NOTE: &str = "I0005";
/// The finding ID of an `Fn::ForEach` without the transform that expands it.
const FOR_EACH_WITHOUT_TRANSFORM: &str = "E0006";
/// The transform that expands `Fn::ForEach` (and `Fn::Length`,
/// `Fn::ToJsonString`...).
const LANGUAGE_EXTENSIONS: &str = "AWS::LanguageExtensions";

/// The application tag of a node (`Ref` for `!Ref`), if any. The YAML core
/// tags (`!!str` and the like) and the non-specific `!` only steer how the
/// parser resolves a scalar, so they do not count.
fn app_tag(node: &Node) -> Option<&str> {
    let tag = node.tag.as_deref()?;
    if tag == "!" || tag.starts_with("!!") || tag.starts_with("tag:yaml.org,2002:") {
        return None;
    }
    Some(tag.strip_prefix('!').unwrap_or(tag))
}

/// Whether a mapping key names an intrinsic function in long form.
fn is_long_form_key(key: &str) -> bool {
    key == "Ref" || key.starts_with("Fn::")
}

impl<'f> Reader<'f> {
    fn new(files: &'f [Arc<SourceFile>], lenient: bool) -> Self {
        Reader {
            files,
            diagnostics: Vec::new(),
            lenient,
            transforms: Vec::new(),
            damaged: Vec::new(),
            transformed: false,
            serverless: false,
            language_extensions: false,
        }
    }

    /// A reader with this one's view of the template (its transforms) and
    /// nothing said yet, for a part read on its own.
    fn fork(&self) -> Self {
        Reader {
            transformed: self.transformed,
            serverless: self.serverless,
            language_extensions: self.language_extensions,
            ..Reader::new(self.files, self.lenient)
        }
    }

    fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// A note with its finding ID.
    fn note(
        &mut self,
        span: Span,
        code: &'static str,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let mut diagnostic = Diagnostic::error(self.file_of(span), Some(span), message);
        diagnostic.severity = crate::diagnostic::Severity::Note;
        diagnostic.code = Some(code);
        self.diagnostics.push(diagnostic);
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    fn file_of(&self, span: Span) -> &Arc<SourceFile> {
        self.files.get(span.file as usize).unwrap_or(&self.files[0])
    }

    fn error(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::error(self.file_of(span), Some(span), message));
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// Where `!tag` was written: the parser's span covers only the tagged
    /// value, so the tag is looked for just before it, on the same line or
    /// the line above (`!Base64` followed by a block mapping). Falls back to
    /// the value's span.
    fn tag_span(&self, node: &Node, tag: &str) -> Span {
        let spelled = format!("!{tag}");
        let width = spelled.chars().count();
        let is_tag_at = |line: &str, byte: usize| {
            line[byte + spelled.len()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        };
        let file = self.file_of(node.span);
        let same_line = file.line_text(node.span.line);
        let before: String = same_line
            .chars()
            .take(node.span.column.saturating_sub(1))
            .collect();
        if let Some(byte) = before
            .rmatch_indices(spelled.as_str())
            .map(|(byte, _)| byte)
            .find(|byte| is_tag_at(&before, *byte))
        {
            let column = before[..byte].chars().count() + 1;
            return Span::new(node.span.line, column, width);
        }
        if node.span.line > 1 {
            let above = file.line_text(node.span.line - 1);
            if let Some(byte) = above
                .rmatch_indices(spelled.as_str())
                .map(|(byte, _)| byte)
                .find(|byte| is_tag_at(above, *byte))
            {
                let column = above[..byte].chars().count() + 1;
                return Span::new(node.span.line - 1, column, width);
            }
        }
        node.span
    }

    fn wrong_type(&mut self, what: &str, node: &Node, expected: &str) {
        let found = match app_tag(node) {
            Some(tag) => format!("`!{tag}`"),
            None => node.kind().to_string(),
        };
        let diagnostic = self.error(
            node.span,
            format!("{what} must be {expected}, found {found}"),
        );
        diagnostic.label = Some(format!("expected {expected}"));
    }

    fn unknown_key(&mut self, key: &Key, what: &str, known: &[&str]) {
        let diagnostic = self.error(key.span, format!("unknown key `{}` in {what}", key.name));
        diagnostic.label = Some("unknown key".to_string());
        diagnostic.help = Some(format!("expected one of: {}", known.join(", ")));
    }

    /// The entries of a mapping, or a diagnostic.
    fn mapping<'n>(&mut self, what: &str, node: &'n Node) -> Option<&'n [(Key, Node)]> {
        match (&node.value, app_tag(node)) {
            (Value::Map(entries), None) => Some(entries),
            _ => {
                self.wrong_type(what, node, "a mapping");
                None
            }
        }
    }

    fn string(&mut self, what: &str, node: &Node) -> Option<String> {
        match (&node.value, app_tag(node)) {
            (Value::String(s), None) => Some(s.clone()),
            _ => {
                self.wrong_type(what, node, "a string");
                None
            }
        }
    }

    /// An integer, also accepted as a string of digits as JSON templates
    /// often write them.
    fn integer(&mut self, what: &str, node: &Node) -> Option<i64> {
        let number = match (&node.value, app_tag(node)) {
            (Value::Int(i), None) => Some(*i),
            (Value::String(s), None) => s.trim().parse().ok(),
            _ => None,
        };
        if number.is_none() {
            self.wrong_type(what, node, "an integer");
        }
        number
    }

    /// A boolean, also accepted as the string `"true"` or `"false"`.
    fn boolean(&mut self, what: &str, node: &Node) -> Option<bool> {
        match (&node.value, app_tag(node)) {
            (Value::Bool(b), None) => Some(*b),
            (Value::String(s), None) if s == "true" => Some(true),
            (Value::String(s), None) if s == "false" => Some(false),
            _ => {
                self.wrong_type(what, node, "a boolean");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Template, Vec<Diagnostic>> {
        read(&SourceFile::new("t.yaml", text))
    }

    /// A template large enough to have its resources read side by side,
    /// with mistakes spread through it: everything is reported as one
    /// reader going through the file would, in file order.
    #[test]
    fn resources_read_side_by_side_are_reported_in_file_order() {
        let mut text = String::from("Resources:\n");
        for i in 0..400 {
            match i % 97 {
                0 => text.push_str(&format!("  R{i}:\n    Properties: {{}}\n")),
                1 => text.push_str(&format!("  R{i}:\n    Type: T\n    Typo: x\n")),
                2 => text.push_str(&format!(
                    "  Fn::ForEach::L{i}:\n    - X\n    - [a]\n    - R${{X}}:\n        Type: T\n"
                )),
                _ => text.push_str(&format!("  R{i}:\n    Type: T\n")),
            }
        }
        let file = SourceFile::new("t.yaml", text.as_str());
        let root = crate::syntax::parse(&file).expect("YAML");
        let reading = read_lenient(&file, &root);
        let lines: Vec<usize> = reading
            .diagnostics
            .iter()
            .filter_map(|d| d.span.map(|s| s.line))
            .collect();
        assert_eq!(lines.len(), 15, "{:?}", reading.diagnostics);
        assert!(lines.is_sorted(), "{lines:?}");
        let damaged: Vec<&str> = reading.damaged.iter().map(String::as_str).collect();
        assert_eq!(
            damaged,
            [0, 1, 97, 98, 194, 195, 291, 292, 388, 389]
                .map(|i| format!("Resources/R{i}"))
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        // Every resource but the loops, in file order.
        let names: Vec<String> = reading.template.resources.keys().cloned().collect();
        let expected: Vec<String> = (0..400)
            .filter(|i| i % 97 != 2)
            .map(|i| format!("R{i}"))
            .collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn short_and_long_forms_read_the_same() {
        let short = read_str(
            "Resources:\n  A:\n    Type: T\n    Properties:\n      X: !GetAtt B.Arn\n      Y: !Base64\n        Fn::Sub: \"a ${B}\"\n",
        )
        .map_err(|d| format!("{d:?}"));
        let long = read_str(
            r#"{"Resources": {"A": {"Type": "T", "Properties": {"X": {"Fn::GetAtt": ["B", "Arn"]}, "Y": {"Fn::Base64": {"Fn::Sub": "a ${B}"}}}}}}"#,
        )
        .map_err(|d| format!("{d:?}"));
        assert_eq!(short, long);
        let template = short.unwrap_or_default();
        assert_eq!(
            template.resources["A"].properties["Y"],
            Expr::base64(Expr::sub("a ${B}"))
        );
    }

    #[test]
    fn every_problem_is_reported() {
        let errors = read_str(
            "Bogus: 1\nResources:\n  A:\n    Properties:\n      X: !Nope x\n      Y: {Fn::Join: [\",\"]}\n",
        )
        .err()
        .unwrap_or_default();
        let messages: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].contains("unknown template section `Bogus`"));
        assert!(messages.iter().any(|m| m.contains("unknown tag `!Nope`")));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("`Fn::Join` takes a list of 2"))
        );
        assert!(messages.iter().any(|m| m.contains("has no `Type`")));
    }
}
