//! `overrides:`, the escape hatch: the last word on any generated
//! resource, as the AWS CDK's `addPropertyOverride`. Each entry names a
//! logical ID and a path (`Properties.LaunchTemplateData.CpuOptions`), and
//! sets a value there (intrinsics included) or deletes what is there.
//!
//! An entry is decoded and checked with the rest of the blueprint; it is
//! applied to the lowered template, before the stack split and before
//! validation, so that the provider schemas and every other check judge the
//! result. Whether the logical ID exists, and whether the path goes through
//! mappings and lists only, can only be known then: [`apply`] reports those
//! mistakes as blueprint errors, located like every other.

use std::sync::Arc;

use super::decode::{Decoder, Located};
use super::field::{Field, Ty};
use crate::cfn::patch::{self, Change, PatchError};
use crate::cfn::{Template, read};
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::suggest::{closest, did_you_mean_or_list, listed};
use crate::syntax::Node;

/// `path` in the JSON Schema: an attribute section the patch knows, then
/// dotted keys.
fn path_schema(doc: &str) -> serde_json::Value {
    let sections = patch::SECTIONS.join("|");
    serde_json::json!({"type": "string", "pattern": format!("^({sections})(\\.[^.]+)*$"), "description": doc})
}

pub(super) const OVERRIDE_FIELDS: &[Field] = &[
    Field::new(
        "resource",
        Ty::STRING,
        "The logical ID of a generated resource (`eksynth explain` lists them)",
    )
    .required(),
    Field::new(
        "path",
        Ty::Custom {
            schema: path_schema,
            reads: "string: an attribute section, then mapping keys and list indexes, dotted",
        },
        "Where in the resource, dotted: an attribute section, then mapping keys \
        and list indexes (`Properties.Tags.0.Value`)",
    )
    .required(),
    Field::new(
        "value",
        Ty::Anything,
        "The new value, intrinsic functions included",
    ),
    Field::new(
        "delete",
        Ty::Boolean,
        "Delete the value at the path instead of setting one",
    ),
];

/// One entry of `overrides`.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The logical ID of the resource, where it is written.
    pub resource: Located<String>,
    /// The path's segments, each where it is written; the first is an
    /// attribute section ([`patch::SECTIONS`]).
    pub path: Vec<Located<String>>,
    /// Where the whole path is written: validation findings at or below
    /// the path are located here.
    pub path_span: Span,
    pub change: Change,
}

impl Override {
    /// The path as written, with dots.
    pub fn dotted(&self) -> String {
        dotted(&self.path)
    }
}

fn dotted(segments: &[Located<String>]) -> String {
    let names: Vec<&str> = segments.iter().map(|s| s.value.as_str()).collect();
    names.join(".")
}

/// Decodes the `overrides` list.
pub(super) fn decode(d: &mut Decoder, node: &Node) -> Vec<Override> {
    let mut out = Vec::new();
    for item in d.list("overrides", node) {
        let Some(mut fields) = d.fields("overrides[]", item, OVERRIDE_FIELDS) else {
            continue;
        };
        let resource = fields
            .get("resource")
            .and_then(|n| d.string("overrides[].resource", n));
        let path = fields.get("path").and_then(|n| decode_path(d, n));
        let value = fields.get("value");
        let delete = fields
            .get("delete")
            .and_then(|n| d.boolean("overrides[].delete", n));
        let misspelt = fields.finish(d, "an override");
        let start = Span {
            len: 1,
            ..item.span
        };
        for (field, present, help) in [
            (
                "resource",
                fields.key_span("resource"),
                "the logical ID of a generated resource, e.g. `resource: GeneralLaunchTemplate` (`eksynth explain` lists them)",
            ),
            (
                "path",
                fields.key_span("path"),
                "where in the resource, e.g. `path: Properties.LaunchTemplateData.CpuOptions`",
            ),
        ] {
            if present.is_none() && !misspelt.contains(&field) {
                d.error(start, format!("missing field `{field}` in override"))
                    .help = Some(format!("add {help}"));
            }
        }
        let change = match (value, delete.map(|d| d.value)) {
            (Some(_), Some(true)) => {
                let at = fields.key_span("delete").unwrap_or(start);
                d.error(at, "an override sets a `value` or deletes, not both")
                    .help = Some("remove `value`, or `delete: true`".into());
                None
            }
            (Some(value), _) => match read::read_value(&d.files, value) {
                Ok(expr) => {
                    let whole = path.as_ref().filter(|(segments, _)| segments.len() == 1);
                    if let Some(expected) =
                        whole.and_then(|(segments, _)| patch::misfit(&segments[0].value, &expr))
                    {
                        let message = format!(
                            "`value` of an override of `{}` must be {expected}",
                            whole.map_or(String::new(), |(segments, _)| dotted(segments))
                        );
                        d.error(value.span, message).label = Some(format!("expected {expected}"));
                        None
                    } else {
                        Some(Change::Set(expr))
                    }
                }
                Err(errors) => {
                    d.diagnostics.extend(errors);
                    None
                }
            },
            (None, Some(true)) => Some(Change::Delete),
            (None, _) if misspelt.contains(&"value") => None,
            (None, _) => {
                d.error(start, "missing field `value` in override").help = Some(
                    "add the new value, e.g. `value: {CoreCount: 2}`, or `delete: true` to remove what is there".into(),
                );
                None
            }
        };
        if let (Some(resource), Some((path, path_span)), Some(change)) = (resource, path, change) {
            out.push(Override {
                resource,
                path,
                path_span,
                change,
            });
        }
    }
    out
}

/// A dotted path, each segment located within the path as written. The
/// first segment must be an attribute section, and a section that holds a
/// single value ends the path.
fn decode_path(d: &mut Decoder, node: &Node) -> Option<(Vec<Located<String>>, Span)> {
    let path = d.string("overrides[].path", node)?;
    let segments = segments(d, node, &path.value);
    if segments.iter().any(|s| s.value.is_empty()) {
        d.error(
            path.span,
            format!("the path `{}` has an empty segment", path.value),
        )
        .help = Some(
            "separate keys with single dots: `Properties.LaunchTemplateData.CpuOptions`".into(),
        );
        return None;
    }
    let section = &segments[0];
    if !patch::SECTIONS.contains(&section.value.as_str()) {
        let message = format!(
            "a path starts with a resource attribute section, not `{}`",
            section.value
        );
        let diagnostic = d.error(section.span, message);
        diagnostic.label = Some("not an attribute section".into());
        diagnostic.help = Some(did_you_mean_or_list(
            &section.value,
            patch::SECTIONS,
            "the sections are",
        ));
        return None;
    }
    if patch::WHOLE_SECTIONS.contains(&section.value.as_str()) && segments.len() > 1 {
        let message = format!(
            "`{}` holds a single value: the path ends there",
            section.value
        );
        d.error(segments[1].span, message).help = Some(format!(
            "write `path: {}` and the whole value",
            section.value
        ));
        return None;
    }
    Some((segments, path.span))
}

/// The segments of `path`, each with its own span when the path is written
/// plainly on one line (quoted or not), else with the whole path's span.
fn segments(d: &Decoder, node: &Node, path: &str) -> Vec<Located<String>> {
    let line = d.file_of(node.span).line_text(node.span.line);
    let written: String = line
        .chars()
        .skip(node.span.column.saturating_sub(1))
        .collect();
    let offset = match written.chars().next() {
        Some('"' | '\'') => 1,
        _ => 0,
    };
    let plain = written
        .chars()
        .skip(offset)
        .collect::<String>()
        .starts_with(path);
    let mut column = node.span.column + offset;
    path.split('.')
        .map(|segment| {
            let len = segment.chars().count();
            let span = if plain {
                Span {
                    column,
                    len: len.max(1),
                    ..node.span
                }
            } else {
                node.span
            };
            column += len + 1;
            Located::new(segment.to_string(), span)
        })
        .collect()
}

/// An override that was applied, for locating findings and for `explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub resource: String,
    /// The overridden value's template path, `Resources/X/Properties/...`.
    pub template_path: String,
    /// Where the override's path is written.
    pub span: Span,
}

impl Applied {
    /// Whether a finding at `path` (a template path) is about what this
    /// override changed: the same value, one inside it, or one that holds
    /// it.
    pub fn covers(&self, path: &str) -> bool {
        let within = |inner: &str, outer: &str| {
            inner == outer
                || inner
                    .strip_prefix(outer)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        within(path, &self.template_path) || within(&self.template_path, path)
    }
}

/// Applies `overrides` to the lowered template, in the order written (a
/// later one wins). Every override that cannot be applied is a located
/// error; on success, what was applied.
pub fn apply(
    template: &mut Template,
    overrides: &[Override],
    files: &[Arc<SourceFile>],
) -> Result<Vec<Applied>, Vec<Diagnostic>> {
    let file_of = |span: Span| files.get(span.file as usize).unwrap_or(&files[0]);
    let mut errors = Vec::new();
    let mut applied = Vec::new();
    for entry in overrides {
        let id = &entry.resource;
        let Some(resource) = template.resources.get_mut(&id.value) else {
            let ids: Vec<&str> = template.resources.keys().map(String::as_str).collect();
            let help = match closest(&id.value, &ids) {
                Some(best) => {
                    format!("did you mean `{best}`? `eksynth explain` lists every resource")
                }
                None => "`eksynth explain` lists every resource the blueprint makes".to_string(),
            };
            errors.push(
                Diagnostic::error(
                    file_of(id.span),
                    Some(id.span),
                    format!("the blueprint makes no resource `{}`", id.value),
                )
                .with_label("unknown logical ID")
                .with_help(help),
            );
            continue;
        };
        let path: Vec<&str> = entry.path.iter().map(|s| s.value.as_str()).collect();
        match patch::apply(resource, &path, entry.change.clone()) {
            Ok(()) => applied.push(Applied {
                resource: id.value.clone(),
                template_path: format!("Resources/{}/{}", id.value, path.join("/")),
                span: entry.path_span,
            }),
            Err(error) => errors.push(located(entry, error, file_of)),
        }
    }
    if errors.is_empty() {
        Ok(applied)
    } else {
        Err(errors)
    }
}

/// A patch error as a diagnostic at the path segment at fault.
fn located<'f>(
    entry: &Override,
    error: PatchError,
    file_of: impl Fn(Span) -> &'f Arc<SourceFile>,
) -> Diagnostic {
    let id = &entry.resource.value;
    let segment = |at: usize| {
        entry
            .path
            .get(at)
            .map_or((entry.path_span, ""), |s| (s.span, s.value.as_str()))
    };
    let prefix = |at: usize| dotted(&entry.path[..at.min(entry.path.len())]);
    let (span, message, label, help) = match error {
        PatchError::NotAContainer { at, found } => {
            let (span, name) = segment(at);
            (
                span,
                format!(
                    "`{}` of `{id}` is {found}, which has no `{name}`",
                    prefix(at)
                ),
                "not inside a mapping or a list".to_string(),
                format!("override `{}` as a whole", prefix(at)),
            )
        }
        PatchError::NoSuchIndex { at, len } => {
            let (span, name) = segment(at);
            let items = if len == 1 { "item" } else { "items" };
            (
                span,
                format!(
                    "`{name}` is not an index of `{}` of `{id}`, a list of {len} {items}",
                    prefix(at)
                ),
                "no such item".to_string(),
                "items are numbered from 0; to add one, override the whole list".to_string(),
            )
        }
        PatchError::NoSuchKey { at, keys } => {
            let (span, name) = segment(at);
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let help = match (closest(name, &keys), keys.is_empty()) {
                (Some(best), _) => format!("did you mean `{best}`?"),
                (None, true) => format!("`{}` is empty or not set", prefix(at)),
                (None, false) => format!("it has {}", listed(&keys)),
            };
            (
                span,
                format!("`{}` of `{id}` has no `{name}` to delete", prefix(at)),
                "not there".to_string(),
                help,
            )
        }
        PatchError::UnknownSection | PatchError::PastWholeSection { .. } => (
            entry.path_span,
            format!("the path `{}` is not a path of a resource", entry.dotted()),
            "not a path".to_string(),
            format!("a path starts with one of {}", listed(patch::SECTIONS)),
        ),
        PatchError::WrongShape { expected } => (
            entry.path_span,
            format!("`{}` of `{id}` must be {expected}", entry.dotted()),
            format!("expected {expected}"),
            "write a value of that kind".to_string(),
        ),
    };
    Diagnostic::error(file_of(span), Some(span), message)
        .with_label(label)
        .with_help(help)
}
