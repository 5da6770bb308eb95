//! The template reader: a YAML (short- or long-form intrinsics) or JSON
//! template back into the model.
//!
//! The file is parsed into the spanned syntax tree first; this module then
//! walks the tree and reports every problem it finds, located, instead of
//! stopping at the first one.

use std::sync::Arc;

use indexmap::IndexMap;

use super::expr::Expr;
use super::template::{FORMAT_VERSION, Output, Parameter, Resource, Template};
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::syntax::{self, Key, Node, Value};

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

const SECTIONS: &[&str] = &[
    "AWSTemplateFormatVersion",
    "Description",
    "Metadata",
    "Parameters",
    "Mappings",
    "Conditions",
    "Resources",
    "Outputs",
];

const PARAMETER_KEYS: &[&str] = &[
    "Type",
    "Description",
    "Default",
    "AllowedValues",
    "AllowedPattern",
    "ConstraintDescription",
    "MinLength",
    "MaxLength",
    "MinValue",
    "MaxValue",
    "NoEcho",
];

const RESOURCE_KEYS: &[&str] = &[
    "Type",
    "Condition",
    "DependsOn",
    "Metadata",
    "Properties",
    "CreationPolicy",
    "UpdatePolicy",
    "DeletionPolicy",
    "UpdateReplacePolicy",
];

const OUTPUT_KEYS: &[&str] = &["Description", "Condition", "Value", "Export"];

/// The intrinsic functions the model knows, by short name: `!Name` in
/// short form, `Fn::Name` in long form (`Ref` and `Condition` have no
/// `Fn::` prefix).
const INTRINSICS: &[&str] = &[
    "Ref",
    "GetAtt",
    "Sub",
    "Base64",
    "Join",
    "If",
    "Select",
    "Split",
    "GetAZs",
    "ImportValue",
    "FindInMap",
    "Cidr",
    "Equals",
    "And",
    "Or",
    "Not",
    "Condition",
];

/// Real CloudFormation functions the model cannot hold: reported as
/// unsupported rather than unknown.
const UNSUPPORTED: &[&str] = &["Transform", "Length", "ToJsonString", "ForEach", "GetParam"];

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
}

/// The finding ID of a note about a transform.
const TRANSFORM_NOTE: &str = "I0004";
/// The finding ID of a note about a construct that is not checked.
const UNCHECKED_NOTE: &str = "I0005";

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

    /// The transforms of a `Transform` section: a name, a list of names, or
    /// `{Name, Parameters}` mappings.
    fn transform_names(node: &Node, names: &mut Vec<String>) {
        match &node.value {
            Value::String(name) => names.push(name.clone()),
            Value::Seq(items) => {
                for item in items {
                    Self::transform_names(item, names);
                }
            }
            Value::Map(entries) => {
                for (key, value) in entries {
                    if key.name == "Name"
                        && let Value::String(name) = &value.value
                    {
                        names.push(name.clone());
                    }
                }
            }
            _ => {}
        }
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

    fn template(&mut self, root: &Node) -> Template {
        let mut template = Template::default();
        let Some(entries) = self.mapping("a template", root) else {
            return template;
        };
        if self.lenient
            && let Some((_, node)) = entries.iter().find(|(key, _)| key.name == "Transform")
        {
            let mut names = Vec::new();
            Self::transform_names(node, &mut names);
            self.transformed = true;
            self.serverless = names.iter().any(|n| n.starts_with("AWS::Serverless"));
        }
        let serverless = self.serverless;
        for (key, node) in entries {
            match key.name.as_str() {
                "AWSTemplateFormatVersion" => {
                    if let Some(version) = self.string("`AWSTemplateFormatVersion`", node)
                        && version != FORMAT_VERSION
                    {
                        let diagnostic = self.error(
                            node.span,
                            format!("unsupported template format version `{version}`"),
                        );
                        diagnostic.help = Some(format!("the only version is \"{FORMAT_VERSION}\""));
                    }
                }
                "Description" => template.description = self.string("`Description`", node),
                "Metadata" => template.metadata = self.expr_map("`Metadata`", node),
                "Parameters" => {
                    for (name, parameter) in self.mapping("`Parameters`", node).unwrap_or_default()
                    {
                        let before = self.errors();
                        match self.parameter(name, parameter) {
                            Some(parameter) => {
                                template.parameters.insert(name.name.clone(), parameter);
                            }
                            None if self.lenient => {
                                template
                                    .parameters
                                    .insert(name.name.clone(), Parameter::new("String"));
                            }
                            None => {}
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Parameters/{}", name.name));
                        }
                    }
                }
                "Mappings" => template.mappings = self.expr_map("`Mappings`", node),
                "Conditions" => {
                    for (name, condition) in self.mapping("`Conditions`", node).unwrap_or_default()
                    {
                        if self.for_each(name, "conditions") {
                            continue;
                        }
                        let before = self.errors();
                        match self.expr(condition, Context::Value) {
                            Some(condition) => {
                                template.conditions.insert(name.name.clone(), condition);
                            }
                            // Kept, so that what uses it finds it.
                            None if self.lenient => {
                                template
                                    .conditions
                                    .insert(name.name.clone(), Expr::Bool(true));
                            }
                            None => {}
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Conditions/{}", name.name));
                        }
                    }
                }
                "Resources" => {
                    for (name, resource) in self.mapping("`Resources`", node).unwrap_or_default() {
                        if self.for_each(name, "resources") {
                            continue;
                        }
                        let before = self.errors();
                        match self.resource(name, resource) {
                            Some(resource) => {
                                template.resources.insert(name.name.clone(), resource);
                            }
                            None if self.lenient => {
                                template
                                    .resources
                                    .insert(name.name.clone(), Resource::default());
                            }
                            None => {}
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Resources/{}", name.name));
                        }
                    }
                }
                "Outputs" => {
                    for (name, output) in self.mapping("`Outputs`", node).unwrap_or_default() {
                        if self.for_each(name, "outputs") {
                            continue;
                        }
                        let before = self.errors();
                        if let Some(output) = self.output(name, output) {
                            template.outputs.insert(name.name.clone(), output);
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Outputs/{}", name.name));
                        }
                    }
                }
                "Transform" if self.lenient => {
                    let mut names = Vec::new();
                    Self::transform_names(node, &mut names);
                    let list = names
                        .iter()
                        .map(|name| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let diagnostic = self.note(
                        key.span,
                        TRANSFORM_NOTE,
                        format!(
                            "the template is processed by {} before it is deployed: \
                             what the transform creates or rewrites is not checked",
                            if names.len() == 1 {
                                format!("the transform {list}")
                            } else {
                                format!("the transforms {list}")
                            }
                        ),
                    );
                    diagnostic.label = Some("transform".to_string());
                    self.transforms.extend(names);
                }
                "Globals" if serverless => {}
                "Rules" | "Hooks" if self.lenient => {
                    let diagnostic = self.note(
                        key.span,
                        UNCHECKED_NOTE,
                        format!("the `{}` section is not checked", key.name),
                    );
                    diagnostic.label = Some("not checked".to_string());
                }
                "Transform" | "Rules" | "Hooks" => {
                    let diagnostic = self.error(
                        key.span,
                        format!("the `{}` section is not supported", key.name),
                    );
                    diagnostic.label = Some("unsupported section".to_string());
                }
                _ => {
                    let diagnostic =
                        self.error(key.span, format!("unknown template section `{}`", key.name));
                    diagnostic.label = Some("unknown section".to_string());
                    diagnostic.help = Some(format!("expected one of: {}", SECTIONS.join(", ")));
                }
            }
        }
        template
    }

    /// A `Fn::ForEach::Name` loop of the language extensions, where a
    /// section holds names: a note (when lenient), as what it makes is not
    /// checked.
    fn for_each(&mut self, name: &Key, what: &str) -> bool {
        if !self.lenient || !name.name.starts_with("Fn::ForEach::") {
            return false;
        }
        let diagnostic = self.note(
            name.span,
            UNCHECKED_NOTE,
            format!(
                "`{}` makes {what} by a loop: they are not checked",
                name.name
            ),
        );
        diagnostic.label = Some("not checked".to_string());
        true
    }

    fn parameter(&mut self, name: &Key, node: &Node) -> Option<Parameter> {
        let what = format!("parameter `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut parameter = Parameter::default();
        let mut kind = None;
        for (key, value) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Type" => kind = self.string(&field, value),
                "Description" => parameter.description = self.string(&field, value),
                "Default" => parameter.default = self.expr(value, Context::Value),
                "AllowedValues" => {
                    parameter.allowed_values = match (&value.value, app_tag(value)) {
                        (Value::Seq(items), None) => items
                            .iter()
                            .filter_map(|item| self.expr(item, Context::Value))
                            .collect(),
                        _ => {
                            self.wrong_type(&field, value, "a list");
                            Vec::new()
                        }
                    }
                }
                "AllowedPattern" => parameter.allowed_pattern = self.string(&field, value),
                "ConstraintDescription" => {
                    parameter.constraint_description = self.string(&field, value);
                }
                "MinLength" => parameter.min_length = self.integer(&field, value),
                "MaxLength" => parameter.max_length = self.integer(&field, value),
                "MinValue" => parameter.min_value = self.integer(&field, value),
                "MaxValue" => parameter.max_value = self.integer(&field, value),
                "NoEcho" => parameter.no_echo = self.boolean(&field, value).unwrap_or(false),
                _ => self.unknown_key(key, &what, PARAMETER_KEYS),
            }
        }
        match kind {
            Some(kind) => parameter.kind = kind,
            None if entries.iter().any(|(key, _)| key.name == "Type") => return None,
            None => {
                let diagnostic = self.error(name.span, format!("{what} has no `Type`"));
                diagnostic.help = Some("add a type, e.g. `Type: String`".to_string());
                return None;
            }
        }
        Some(parameter)
    }

    fn resource(&mut self, name: &Key, node: &Node) -> Option<Resource> {
        let what = format!("resource `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut resource = Resource::default();
        let mut kind = None;
        for (key, value) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Type" => kind = self.string(&field, value),
                "Condition" => resource.condition = self.string(&field, value),
                "DependsOn" => {
                    resource.depends_on = match (&value.value, app_tag(value)) {
                        (Value::String(one), None) => vec![one.clone()],
                        (Value::Seq(items), None) => items
                            .iter()
                            .filter_map(|item| self.string(&field, item))
                            .collect(),
                        _ => {
                            self.wrong_type(&field, value, "a resource name or a list of them");
                            Vec::new()
                        }
                    }
                }
                "Metadata" => resource.metadata = self.expr(value, Context::Value),
                "Properties" => resource.properties = self.expr_map(&field, value),
                "CreationPolicy" => resource.creation_policy = self.expr(value, Context::Value),
                "UpdatePolicy" => resource.update_policy = self.expr(value, Context::Value),
                "DeletionPolicy" | "UpdateReplacePolicy"
                    if self.lenient && Self::is_intrinsic(value) =>
                {
                    // Read for its own errors; the model holds a literal only.
                    if self.expr(value, Context::Value).is_some() {
                        let diagnostic = self.note(
                            value.span,
                            UNCHECKED_NOTE,
                            format!(
                                "`{}` of {what} is an intrinsic function: its value is not checked",
                                key.name
                            ),
                        );
                        diagnostic.label = Some("not checked".to_string());
                    }
                }
                "DeletionPolicy" => resource.deletion_policy = self.string(&field, value),
                "UpdateReplacePolicy" => {
                    resource.update_replace_policy = self.string(&field, value);
                }
                // An old attribute of custom resources, still accepted.
                "Version" if self.lenient => {}
                "IgnoreGlobals" if self.serverless => {}
                _ => self.unknown_key(key, &what, RESOURCE_KEYS),
            }
        }
        match kind {
            Some(kind) => resource.kind = kind,
            None if entries.iter().any(|(key, _)| key.name == "Type") => return None,
            None => {
                let diagnostic = self.error(name.span, format!("{what} has no `Type`"));
                diagnostic.help = Some(
                    "add the resource type, e.g. `Type: AWS::EC2::LaunchTemplate`".to_string(),
                );
                return None;
            }
        }
        Some(resource)
    }

    fn output(&mut self, name: &Key, node: &Node) -> Option<Output> {
        let what = format!("output `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut output = Output::default();
        let mut value = None;
        let mut complete = true;
        for (key, node) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Description" => output.description = self.string(&field, node),
                "Condition" => output.condition = self.string(&field, node),
                "Value" => {
                    value = self.expr(node, Context::Value);
                    complete &= value.is_some();
                }
                "Export" => {
                    output.export = self.export(&field, node);
                    complete &= output.export.is_some();
                }
                _ => self.unknown_key(key, &what, OUTPUT_KEYS),
            }
        }
        match value {
            Some(value) => output.value = value,
            None if !complete => return None,
            None => {
                self.error(name.span, format!("{what} has no `Value`"));
                return None;
            }
        }
        complete.then_some(output)
    }

    /// `Export: {Name: ...}`.
    fn export(&mut self, what: &str, node: &Node) -> Option<Expr> {
        let entries = self.mapping(what, node)?;
        let mut name = None;
        for (key, value) in entries {
            match key.name.as_str() {
                "Name" => name = Some(self.expr(value, Context::Value)),
                _ => self.unknown_key(key, what, &["Name"]),
            }
        }
        match name {
            Some(name) => name,
            None => {
                self.error(node.span, format!("{what} has no `Name`"));
                None
            }
        }
    }

    /// A mapping of names to values (`Metadata`, `Mappings`, `Properties`...).
    fn expr_map(&mut self, what: &str, node: &Node) -> IndexMap<String, Expr> {
        let Some(entries) = self.mapping(what, node) else {
            return IndexMap::new();
        };
        entries
            .iter()
            .filter_map(|(key, value)| Some((key.name.clone(), self.expr(value, Context::Value)?)))
            .collect()
    }

    /// Whether a node is an intrinsic function, short or long form.
    fn is_intrinsic(node: &Node) -> bool {
        app_tag(node).is_some()
            || matches!(&node.value, Value::Map(entries)
                if entries.len() == 1 && is_long_form_key(&entries[0].0.name))
    }

    /// Any value: a literal or an intrinsic, short or long form.
    fn expr(&mut self, node: &Node, context: Context) -> Option<Expr> {
        match app_tag(node) {
            Some(tag) => {
                let at = self.tag_span(node, tag);
                self.intrinsic(tag, node, Form::Short, at)
            }
            None => self.value(node, context),
        }
    }

    /// A value without looking at its tag: the literal, or a long-form
    /// intrinsic written as a single-key mapping.
    fn value(&mut self, node: &Node, context: Context) -> Option<Expr> {
        match &node.value {
            Value::Null => {
                let diagnostic = self.error(node.span, "a value is missing here (null)");
                diagnostic.help =
                    Some("write \"\" for an empty string, or remove the key".to_string());
                None
            }
            Value::Bool(b) => Some(Expr::Bool(*b)),
            Value::Int(i) => Some(Expr::Int(*i)),
            Value::Float(f) => Some(Expr::Float(*f)),
            Value::String(s) => Some(Expr::String(s.clone())),
            Value::Seq(items) => {
                // Read every item, even after a failure, to report them all.
                let items: Vec<Option<Expr>> = items
                    .iter()
                    .map(|item| self.expr(item, Context::Value))
                    .collect();
                items
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Expr::List)
            }
            Value::Map(entries) => {
                if let [(key, argument)] = entries.as_slice()
                    && (is_long_form_key(&key.name)
                        || (key.name == "Condition" && context == Context::Condition))
                {
                    return self.intrinsic(&key.name, argument, Form::Long, key.span);
                }
                let mut complete = true;
                let mut map = IndexMap::new();
                for (key, value) in entries {
                    if is_long_form_key(&key.name) {
                        let diagnostic = self.error(
                            key.span,
                            format!("`{}` must be the only key of its mapping", key.name),
                        );
                        diagnostic.help = Some(
                            "an intrinsic function is a mapping with exactly one key".to_string(),
                        );
                        complete = false;
                        continue;
                    }
                    match self.expr(value, Context::Value) {
                        Some(value) => {
                            map.insert(key.name.clone(), value);
                        }
                        None => complete = false,
                    }
                }
                complete.then_some(Expr::Map(map))
            }
        }
    }

    /// An intrinsic function, `written` as a tag (`Sub` for `!Sub`) or a
    /// long-form key (`Fn::Sub`). `argument` is the tagged node itself in
    /// short form and the mapping's value in long form; `at` is where the
    /// name was written.
    fn intrinsic(&mut self, written: &str, argument: &Node, form: Form, at: Span) -> Option<Expr> {
        let spelled = match form {
            Form::Short => format!("!{written}"),
            Form::Long => written.to_string(),
        };
        // `Ref` and `Condition` have no `Fn::` prefix; everything else does.
        let bare = match form {
            Form::Short => written,
            Form::Long => written.strip_prefix("Fn::").unwrap_or(written),
        };
        let known = INTRINSICS.contains(&bare)
            && (form == Form::Short || (bare == written) == matches!(bare, "Ref" | "Condition"));
        if !known && self.lenient && (form == Form::Long || UNSUPPORTED.contains(&bare)) {
            let why = if UNSUPPORTED.contains(&bare) {
                "is beyond eksynth's model"
            } else {
                "is not known to eksynth"
            };
            return self.opaque(written, argument, form, at, why);
        }
        if self.transformed && bare == "Ref" && !matches!(argument.value, Value::String(_)) {
            return self.opaque(
                written,
                argument,
                form,
                at,
                "of a computed name is left to the transform",
            );
        }
        if self.lenient
            && bare == "FindInMap"
            && let Value::Seq(items) = &argument.value
            && (items.len() == 4 || items.first().is_some_and(Self::is_intrinsic))
        {
            return self.opaque(
                written,
                argument,
                form,
                at,
                "with a default value or a computed mapping name is beyond eksynth's model",
            );
        }
        if !known {
            let diagnostic = if UNSUPPORTED.contains(&bare) {
                self.error(
                    at,
                    format!("the intrinsic function `{spelled}` is not supported"),
                )
            } else if form == Form::Short {
                self.error(at, format!("unknown tag `{spelled}`"))
            } else {
                self.error(at, format!("unknown intrinsic function `{spelled}`"))
            };
            diagnostic.label = Some("not a known intrinsic function".to_string());
            return None;
        }
        let name = bare;
        let mut args = Args {
            reader: self,
            spelled: &spelled,
            argument,
            form,
        };
        match name {
            "Ref" => args.string().map(Expr::Ref),
            "Condition" => args.string().map(Expr::Condition),
            "GetAtt" => args.get_att(),
            "Sub" => args.sub(),
            "Base64" => args.direct().map(|inner| Expr::Base64(Box::new(inner))),
            "GetAZs" => args.direct().map(|inner| Expr::GetAZs(Box::new(inner))),
            "ImportValue" => args
                .direct()
                .map(|inner| Expr::ImportValue(Box::new(inner))),
            "Join" => {
                let [delimiter, items] = args.list::<2>("a delimiter and a list")?;
                let delimiter = args.item_string(delimiter, "the delimiter");
                let items = args.item(items, Context::Value);
                Some(Expr::Join {
                    delimiter: delimiter?,
                    items: Box::new(items?),
                })
            }
            "If" => {
                let [condition, then, otherwise] =
                    args.list::<3>("a condition name and two values")?;
                let condition = args.item_string(condition, "the condition name");
                let then = args.item(then, Context::Value);
                let otherwise = args.item(otherwise, Context::Value);
                Some(Expr::If {
                    condition: condition?,
                    then: Box::new(then?),
                    otherwise: Box::new(otherwise?),
                })
            }
            "Select" => {
                let [index, list] = args.list::<2>("an index and a list")?;
                let index = args.item(index, Context::Value);
                let list = args.item(list, Context::Value);
                Some(Expr::Select {
                    index: Box::new(index?),
                    list: Box::new(list?),
                })
            }
            "Split" => {
                let [delimiter, source] = args.list::<2>("a delimiter and a string")?;
                let delimiter = args.item_string(delimiter, "the delimiter");
                let source = args.item(source, Context::Value);
                Some(Expr::Split {
                    delimiter: delimiter?,
                    source: Box::new(source?),
                })
            }
            "FindInMap" => {
                let [map, top_key, second_key] = args.list::<3>("a mapping name and two keys")?;
                let map = args.item_string(map, "the mapping name");
                let top_key = args.item(top_key, Context::Value);
                let second_key = args.item(second_key, Context::Value);
                Some(Expr::FindInMap {
                    map: map?,
                    top_key: Box::new(top_key?),
                    second_key: Box::new(second_key?),
                })
            }
            "Cidr" => {
                let [block, count, bits] =
                    args.list::<3>("an IP block, a count and a number of bits")?;
                let block = args.item(block, Context::Value);
                let count = args.item(count, Context::Value);
                let bits = args.item(bits, Context::Value);
                Some(Expr::Cidr {
                    block: Box::new(block?),
                    count: Box::new(count?),
                    bits: Box::new(bits?),
                })
            }
            "Equals" => {
                let [left, right] = args.list::<2>("two values")?;
                let left = args.item(left, Context::Value);
                let right = args.item(right, Context::Value);
                Some(Expr::Equals(Box::new(left?), Box::new(right?)))
            }
            "And" | "Or" => {
                let items = args.any_list("a list of conditions")?;
                let items: Vec<Option<Expr>> = items
                    .iter()
                    .map(|item| args.item(item, Context::Condition))
                    .collect();
                let items = items.into_iter().collect::<Option<Vec<_>>>()?;
                Some(if name == "And" {
                    Expr::And(items)
                } else {
                    Expr::Or(items)
                })
            }
            "Not" => {
                let [inner] = args.list::<1>("a list of one condition")?;
                args.item(inner, Context::Condition)
                    .map(|inner| Expr::Not(Box::new(inner)))
            }
            // `known` above admits only the names matched here.
            _ => None,
        }
    }
}

impl Reader<'_> {
    /// An intrinsic function the model cannot hold, kept as the mapping it
    /// is in long form (`{"Fn::Name": argument}`), its argument read as any
    /// value; a note says it is not checked.
    fn opaque(
        &mut self,
        written: &str,
        argument: &Node,
        form: Form,
        at: Span,
        why: &str,
    ) -> Option<Expr> {
        let long = match form {
            Form::Short if written == "Ref" || written == "Condition" => written.to_string(),
            Form::Short => format!("Fn::{written}"),
            Form::Long => written.to_string(),
        };
        let argument = match form {
            Form::Short => self.value(argument, Context::Value),
            Form::Long => self.expr(argument, Context::Value),
        }?;
        let diagnostic = self.note(
            at,
            UNCHECKED_NOTE,
            format!("`{long}` {why}: its result is not checked"),
        );
        diagnostic.label = Some("not checked".to_string());
        Some(Expr::Map(IndexMap::from([(long, argument)])))
    }
}

/// Reads the argument of one intrinsic function.
struct Args<'r, 'f, 'n> {
    reader: &'r mut Reader<'f>,
    spelled: &'r str,
    argument: &'n Node,
    form: Form,
}

impl<'n> Args<'_, '_, 'n> {
    /// The argument's own tag. In short form the node's tag is the
    /// function's, so the argument has none.
    fn own_tag(&self) -> Option<&'n str> {
        match self.form {
            Form::Short => None,
            Form::Long => app_tag(self.argument),
        }
    }

    fn wrong(&mut self, expected: &str) {
        let found = match self.own_tag() {
            Some(tag) => format!("`!{tag}`"),
            None => self.argument.kind().to_string(),
        };
        let message = format!("`{}` takes {expected}, found {found}", self.spelled);
        let diagnostic = self.reader.error(self.argument.span, message);
        diagnostic.label = Some(format!("expected {expected}"));
    }

    /// A plain string argument (`!Ref Name`).
    fn string(&mut self) -> Option<String> {
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => Some(s.clone()),
            _ => {
                self.wrong("a name (a string)");
                None
            }
        }
    }

    /// An argument that is any value (`!Base64 value`).
    fn direct(&mut self) -> Option<Expr> {
        match self.form {
            Form::Short => self.reader.value(self.argument, Context::Value),
            Form::Long => self.reader.expr(self.argument, Context::Value),
        }
    }

    fn any_list(&mut self, expected: &str) -> Option<&'n [Node]> {
        match (&self.argument.value, self.own_tag()) {
            (Value::Seq(items), None) => Some(items),
            _ => {
                self.wrong(expected);
                None
            }
        }
    }

    /// A list of exactly `N` items.
    fn list<const N: usize>(&mut self, expected: &str) -> Option<&'n [Node; N]> {
        let items = self.any_list(&format!("a list of {expected}"))?;
        match <&[Node; N]>::try_from(items) {
            Ok(items) => Some(items),
            Err(_) => {
                let message = format!(
                    "`{}` takes a list of {N} ({expected}), found {} item{}",
                    self.spelled,
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                );
                let diagnostic = self.reader.error(self.argument.span, message);
                diagnostic.label = Some(format!("expected {N} items"));
                None
            }
        }
    }

    fn item(&mut self, node: &Node, context: Context) -> Option<Expr> {
        self.reader.expr(node, context)
    }

    fn item_string(&mut self, node: &Node, what: &str) -> Option<String> {
        self.reader
            .string(&format!("{what} of `{}`", self.spelled), node)
    }

    /// `Res.Attr` or `[Res, Attr]`.
    fn get_att(&mut self) -> Option<Expr> {
        let expected = "`Resource.Attribute` or a list of a resource and an attribute";
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => match s.split_once('.') {
                Some((resource, attribute)) => Some(Expr::get_att(resource, attribute)),
                None => {
                    self.wrong(expected);
                    None
                }
            },
            (Value::Seq(_), None) => {
                let [resource, attribute] = self.list::<2>("a resource and an attribute")?;
                let resource = self.item_string(resource, "the resource");
                let attribute = self.item_string(attribute, "the attribute");
                Some(Expr::get_att(resource?, attribute?))
            }
            _ => {
                self.wrong(expected);
                None
            }
        }
    }

    /// `template` or `[template, {variables}]`.
    fn sub(&mut self) -> Option<Expr> {
        let expected = "a string, or a list of a string and a mapping of variables";
        match (&self.argument.value, self.own_tag()) {
            (Value::String(s), None) => Some(Expr::sub(s.as_str())),
            (Value::Seq(_), None) => {
                let [template, variables] = self.list::<2>("a string and a mapping")?;
                let template = self.item_string(template, "the template");
                let variables = match (&variables.value, app_tag(variables)) {
                    (Value::Map(_), None) => {
                        let what = format!("the variables of `{}`", self.spelled);
                        // Variables are complete only when every value read.
                        let before = self.reader.diagnostics.len();
                        let map = self.reader.expr_map(&what, variables);
                        (self.reader.diagnostics.len() == before).then_some(map)
                    }
                    _ => {
                        let what = format!("the variables of `{}`", self.spelled);
                        self.reader.wrong_type(&what, variables, "a mapping");
                        None
                    }
                };
                Some(Expr::Sub {
                    template: template?,
                    variables: variables?,
                })
            }
            _ => {
                self.wrong(expected);
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
