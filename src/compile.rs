//! The whole pipeline for one blueprint: load, check, lower, validate. Also
//! how validation findings become diagnostics located in the input file.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::blueprint;
use crate::blueprint::overrides::Applied;
use crate::cfn::{Format, Template};
use crate::diagnostic::Diagnostic;
use crate::eks;
use crate::source::{SourceFile, Span};
use crate::syntax;
use crate::validate::{self, Finding, SchemaSet};

/// The stacks a blueprint synthesizes, and every diagnostic about the
/// blueprint (warnings of the blueprint itself, and findings located at the
/// blueprint lines that produced them).
#[derive(Debug)]
pub struct Compiled {
    /// Never empty; the main stack first.
    pub stacks: Vec<Stack>,
    pub diagnostics: Vec<Diagnostic>,
    /// Every file the blueprint was read from, indexed by `Span::file`.
    pub files: Vec<Arc<SourceFile>>,
}

/// One synthesized stack.
#[derive(Debug)]
pub struct Stack {
    /// The stack's name, which also names its template file.
    pub name: String,
    /// Where the blueprint declares the stack (see `StackSpec::span`).
    pub span: Span,
    pub template: Template,
    /// The template in the format asked for, emitted once: validation
    /// checks the size of this very text, and `synth` writes it.
    pub text: String,
    /// The findings of the template's validation, suppressions removed.
    pub findings: Vec<Finding>,
    /// For each resource, where in the blueprint it comes from.
    pub origins: indexmap::IndexMap<String, Span>,
    /// The blueprint's overrides of this stack's resources, in the order
    /// applied.
    pub overrides: Vec<Applied>,
}

impl Compiled {
    /// True when no template may be emitted.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The main stack: the only one of most blueprints.
    pub fn main(&self) -> &Stack {
        &self.stacks[0]
    }

    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> Option<&Stack> {
        self.stacks.iter().find(|stack| stack.name == name)
    }
}

/// Pushes a finding's diagnostic, unless one with the same ID, message and
/// place is there already: a field written once (in `defaults`, say) that
/// every group's resource takes is one mistake, reported once, with a
/// count of the other resources in `repeats`.
fn push_once(
    diagnostics: &mut Vec<Diagnostic>,
    repeats: &mut Vec<(usize, usize)>,
    diagnostic: Diagnostic,
) {
    let same = diagnostics.iter().position(|d| {
        d.code.is_some()
            && d.code == diagnostic.code
            && d.span.is_some()
            && d.span == diagnostic.span
            && d.message == diagnostic.message
    });
    match same {
        Some(index) => match repeats.iter_mut().find(|(i, _)| *i == index) {
            Some((_, more)) => *more += 1,
            None => repeats.push((index, 1)),
        },
        None => diagnostics.push(diagnostic),
    }
}

/// The blueprint field that writes the value at `path` (a finding's path,
/// `Resources/Id/...`), or one of its parents.
fn field_origin(field_origins: &indexmap::IndexMap<String, Span>, path: &str) -> Option<Span> {
    let mut rest = path.strip_prefix("Resources/")?;
    loop {
        if let Some(span) = field_origins.get(rest) {
            return Some(*span);
        }
        rest = &rest[..rest.rfind('/')?];
    }
}

/// How a blueprint splits a stack that is too large, for the findings
/// about a whole stack's size.
const SPLIT_HELP: &str = "place node groups in stacks of their own with `stacks: perGroup`, or name stacks of groups: `stacks: {nodes-gpu: [gpu, gpu-large]}`; the shared resources stay in the main stack";

/// The finding ID of a declared parameter that no template keeps.
const DROPPED_PARAMETER: &str = "W0003";

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The blueprint has errors; all diagnostics found are here.
    #[error("the blueprint has errors")]
    Blueprint(Vec<Diagnostic>),
    #[error(transparent)]
    Internal(#[from] eks::Error),
}

/// Compiles with the embedded schemas.
pub fn compile(file: &Arc<SourceFile>) -> Result<Compiled, CompileError> {
    compile_with(file, SchemaSet::embedded())
}

pub fn compile_with(file: &Arc<SourceFile>, schemas: &SchemaSet) -> Result<Compiled, CompileError> {
    compile_with_overrides(file, schemas, &[], Format::Yaml)
}

/// Compiles with `--set` overrides (`path`, `value`) applied, emitting the
/// templates in `format`.
pub fn compile_with_overrides(
    file: &Arc<SourceFile>,
    schemas: &SchemaSet,
    overrides: &[(String, String)],
    format: Format,
) -> Result<Compiled, CompileError> {
    let loaded = blueprint::load_with(file, overrides).map_err(CompileError::Blueprint)?;
    let file_of = |span: Span| loaded.files.get(span.file as usize).unwrap_or(file).clone();
    let mut diagnostics = loaded.warnings;
    // Findings the loader reports itself, at the field that asks for them
    // (`associatePublicIpAddress`): validation does not repeat them, unless
    // an override made them.
    let said_by_the_loader: Vec<&'static str> = diagnostics.iter().filter_map(|d| d.code).collect();
    let suppressions = &loaded.blueprint.suppressions;
    // Each suppression's finding ID under its current name; `None` for an
    // ID that is no finding's.
    let mut suppressed: Vec<Option<&'static str>> = Vec::with_capacity(suppressions.len());
    for suppression in suppressions {
        let id = suppression.id.value.as_str();
        let current = validate::current_id(id);
        if current.is_none() {
            let ids: Vec<&str> = validate::FINDINGS.iter().map(|(known, _)| *known).collect();
            let mut diagnostic = Diagnostic::error(
                &file_of(suppression.id.span),
                Some(suppression.id.span),
                format!("`{id}` is not a finding ID"),
            );
            diagnostic.help = Some(match crate::suggest::closest(id, &ids) {
                Some(best) => {
                    format!("did you mean `{best}`? `eksynth validate --help` lists the IDs")
                }
                None => "the README lists every finding ID".to_string(),
            });
            diagnostics.push(diagnostic);
        }
        suppressed.push(current);
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(CompileError::Blueprint(diagnostics));
    }
    let mut used = vec![false; suppressions.len()];
    // Whether a suppression silences finding `id`; that suppression is
    // then used.
    let mut suppress = |id: &str| match suppressed.iter().position(|s| *s == Some(id)) {
        Some(index) => {
            used[index] = true;
            true
        }
        None => false,
    };
    diagnostics.retain(|diagnostic| !diagnostic.code.is_some_and(&mut suppress));
    let blueprint = &loaded.blueprint;
    let mut lowered = eks::lower(blueprint)?;
    let applied = match blueprint::overrides::apply(
        &mut lowered.template,
        &blueprint.overrides,
        &loaded.files,
    ) {
        Ok(applied) => applied,
        Err(errors) => {
            diagnostics.extend(errors);
            return Err(CompileError::Blueprint(diagnostics));
        }
    };
    // An override may remove the last use of a parameter.
    lowered.template.remove_unused_parameters();
    let oversized = std::mem::take(&mut lowered.oversized_user_data);
    let lowered = eks::stacks::split(lowered, blueprint);
    let several = lowered.len() > 1;
    // How many more resources each finding diagnostic stands for.
    let mut repeats: Vec<(usize, usize)> = Vec::new();
    let mut stacks = Vec::with_capacity(lowered.len());
    for stack in lowered {
        let text = format.emit(&stack.template);
        let mut all = validate::validate(
            &stack.template,
            &validate::Context {
                schemas,
                template_bytes: Some(text.len()),
                split_help: SPLIT_HELP,
            },
        );
        let overrides: Vec<Applied> = applied
            .iter()
            .filter(|o| stack.template.resources.contains_key(&o.resource))
            .cloned()
            .collect();
        add_oversized_user_data(&mut all, &oversized, &stack.template, &overrides);
        let findings: Vec<Finding> = all
            .into_iter()
            .filter(|finding| !suppress(finding.id))
            .collect();
        for finding in &findings {
            // A finding about what an override changed is the override's.
            let overridden = overrides.iter().rev().find(|o| o.covers(&finding.path));
            // The loader already warned at the blueprint's own field.
            if said_by_the_loader.contains(&finding.id) && overridden.is_none() {
                continue;
            }
            let span = match (overridden, finding.resource()) {
                (Some(applied), _) => Some(applied.span),
                (None, Some(id)) => field_origin(&stack.field_origins, &finding.path)
                    .or_else(|| stack.origins.get(id).copied()),
                (None, None) => Some(stack.span),
            };
            let oversized = match finding.resource() {
                Some(id) if finding.id == "E3007" && overridden.is_none() => oversized
                    .get(id)
                    .map(|(index, share)| (&blueprint.node_groups[*index], share)),
                _ => None,
            };
            let mut diagnostic = match oversized {
                Some((group, share)) => {
                    let mut diagnostic = oversized_user_data(group, share, &file_of);
                    diagnostic.label = Some(format!("in {}", finding.path));
                    diagnostic
                }
                None => {
                    let located = span.map_or_else(|| Arc::clone(file), file_of);
                    finding_diagnostic(finding, &located, span)
                }
            };
            if several {
                diagnostic.message = format!("stack `{}`: {}", stack.name, diagnostic.message);
            }
            push_once(&mut diagnostics, &mut repeats, diagnostic);
        }
        stacks.push(Stack {
            name: stack.name,
            span: stack.span,
            template: stack.template,
            text,
            findings,
            origins: stack.origins,
            overrides,
        });
    }
    for (index, more) in repeats {
        let diagnostic = &mut diagnostics[index];
        let label = diagnostic.label.take().unwrap_or_default();
        let resources = if more == 1 { "resource" } else { "resources" };
        diagnostic.label = Some(format!("{label} (and {more} more {resources})"));
    }
    // A parameter the blueprint declares but no stack uses is not in any
    // template (CloudFormation linters reject an unused parameter), so a
    // deploy that passes it fails: say so at the line that declares it.
    for (name, span) in blueprint.parameters() {
        if stacks
            .iter()
            .any(|stack| stack.template.parameters.contains_key(name))
        {
            continue;
        }
        if !suppress(DROPPED_PARAMETER) {
            let mut diagnostic = Diagnostic::warning(
                &file_of(span),
                Some(span),
                format!(
                    "parameter `{name}` is not used by any resource, so no template declares it"
                ),
            )
            .with_help(
                "a deploy that passes it fails (the template does not have it): stop passing it, or write the value as a literal",
            );
            diagnostic.code = Some(DROPPED_PARAMETER);
            diagnostics.push(diagnostic);
        }
    }
    for ((suppression, current), used) in suppressions.iter().zip(&suppressed).zip(used) {
        let id = suppression.id.value.as_str();
        let located = file_of(suppression.id.span);
        if !used {
            let diagnostic = Diagnostic::warning(
                &located,
                Some(suppression.id.span),
                format!("suppression of `{id}` matches no finding"),
            )
            .with_help("remove it, so that the finding is reported again should it come back");
            diagnostics.push(diagnostic);
        } else if let Some(current) = current.filter(|current| *current != id) {
            // It still applies; only its name is out of date.
            let diagnostic = Diagnostic::warning(
                &located,
                Some(suppression.id.span),
                format!("finding `{id}` was renamed to `{current}`"),
            )
            .with_label("old name")
            .with_help(format!(
                "write `id: {current}`; the suppression applies to `{current}` meanwhile"
            ));
            diagnostics.push(diagnostic);
        }
    }
    Ok(Compiled {
        stacks,
        diagnostics,
        files: loaded.files.clone(),
    })
}

/// Adds E3007 for each launch template of `template` whose user data eksynth
/// measured over EC2's limit and validation did not: validation counts a
/// value filled in at deploy time as nothing (it cannot know what it
/// holds), eksynth at the size a real cluster's value has. An override of
/// the user data replaces what eksynth measured, and validation judges it.
fn add_oversized_user_data(
    findings: &mut Vec<Finding>,
    oversized: &IndexMap<String, (usize, eks::userdata::Share)>,
    template: &Template,
    overrides: &[Applied],
) {
    for (id, (_, share)) in oversized {
        let path = format!("Resources/{id}/Properties/LaunchTemplateData/UserData");
        let reported = findings
            .iter()
            .any(|f| f.id == "E3007" && f.resource() == Some(id.as_str()));
        if reported
            || !template.resources.contains_key(id)
            || overrides.iter().any(|o| o.covers(&path))
        {
            continue;
        }
        let message = format!(
            "user data is {} bytes; EC2 accepts at most {}",
            share.total,
            eks::userdata::MAX_USER_DATA_BYTES
        );
        findings.push(Finding::new("E3007", path, message));
    }
}

/// User data over EC2's limit, located at the group's field that adds the
/// most to it (at the group's name when none does), with who takes the
/// bytes: eksynth's own parts and the group's fields.
fn oversized_user_data(
    group: &blueprint::NodeGroup,
    share: &eks::userdata::Share,
    file_of: &dyn Fn(Span) -> Arc<SourceFile>,
) -> Diagnostic {
    let max = eks::userdata::MAX_USER_DATA_BYTES;
    let largest = share.fields.first().and_then(|(field, _)| {
        group
            .field_spans
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, span)| *span)
    });
    let span = largest.unwrap_or(group.name.span);
    let fields: Vec<String> = share
        .fields
        .iter()
        .map(|(field, bytes)| format!("`{field}` {bytes}"))
        .collect();
    let message = format!(
        "the user data of node group `{}` is {} bytes; EC2 accepts at most {max}: eksynth's own parts take {} and the group's fields {} ({})",
        group.name.value,
        share.total,
        share.own,
        share.total.saturating_sub(share.own),
        if fields.is_empty() {
            "none".to_string()
        } else {
            fields.join(", ")
        },
    );
    let assumed: Vec<String> = share
        .assumed
        .iter()
        .map(|(field, bytes)| format!("`{field}` {bytes}"))
        .collect();
    let mut message = message;
    if share.base64 {
        message
            .push_str("; a part with non-ASCII text is counted base64-encoded, as EC2 receives it");
    }
    if !assumed.is_empty() {
        message.push_str(&format!(
            "; cluster values given at deploy time are counted at their size on a real cluster ({})",
            assumed.join(", ")
        ));
    }
    let mut diagnostic = Diagnostic::error(&file_of(span), Some(span), message);
    diagnostic.code = Some("E3007");
    diagnostic.help = Some(format!(
        "trim it by {} bytes: move long scripts to S3 or SSM and fetch them at boot",
        share.total - max
    ));
    diagnostic
}

/// For each emitted resource, its type and the blueprint line that
/// produced it, and the line of each override that changed it: `eksynth
/// explain`.
///
/// A blueprint with several stacks lists each under a `stack NAME:` line.
/// Names and lines from the input are shown by the terminal rule of
/// [`crate::escape`].
pub fn explain(compiled: &Compiled) -> String {
    use crate::escape::terminal;
    let several = compiled.stacks.len() > 1;
    let mut out = String::new();
    for stack in &compiled.stacks {
        if several {
            out.push_str(&format!("stack {}:\n", terminal(&stack.name)));
        }
        let indent = if several { "  " } else { "" };
        for (id, resource) in &stack.template.resources {
            out.push_str(&format!(
                "{indent}{} ({})\n",
                terminal(id),
                terminal(&resource.kind)
            ));
            let line = |span: &Span| {
                compiled.files.get(span.file as usize).map(|file| {
                    format!(
                        "{}:{}: {}",
                        terminal(&file.name),
                        span.line,
                        terminal(file.line_text(span.line).trim())
                    )
                })
            };
            if let Some(origin) = stack.origins.get(id).and_then(line) {
                out.push_str(&format!("{indent}    {origin}\n"));
            }
            for applied in stack.overrides.iter().filter(|o| o.resource == *id) {
                if let Some(at) = line(&applied.span) {
                    out.push_str(&format!("{indent}    overridden at {at}\n"));
                }
            }
        }
    }
    out
}

/// A finding as a diagnostic at `span`, with the template path as its label.
pub fn finding_diagnostic(
    finding: &Finding,
    file: &Arc<SourceFile>,
    span: Option<Span>,
) -> Diagnostic {
    let mut diagnostic = Diagnostic::error(file, span, finding.message.clone());
    diagnostic.severity = finding.level;
    diagnostic.code = Some(finding.id);
    diagnostic.label = (!finding.path.is_empty()).then(|| format!("in {}", finding.path));
    diagnostic.help = finding.help.clone();
    diagnostic
}

/// Where a template path (`Resources/X/Properties/...`) is written in a
/// template file: the deepest node of the path that exists.
pub fn template_span(root: &syntax::Node, path: &str) -> Option<Span> {
    let mut node = root;
    let mut span = None;
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        // A short-form intrinsic (`!If [...]`) is the function and its
        // arguments in one node: its long-form key leads to the same node.
        let function = segment.strip_prefix("Fn::").unwrap_or(segment);
        if node
            .tag
            .as_deref()
            .map(|tag| tag.strip_prefix('!').unwrap_or(tag))
            .is_some_and(|tag| tag == function)
        {
            continue;
        }
        let next =
            match &node.value {
                syntax::Value::Map(entries) => entries
                    .iter()
                    .find(|(key, _)| key.name == segment)
                    .map(|(key, value)| {
                        span = Some(key.span);
                        value
                    }),
                syntax::Value::Seq(items) => segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .inspect(|item| {
                        span = Some(item.span);
                    }),
                _ => None,
            };
        match next {
            Some(next) => node = next,
            None => break,
        }
    }
    span
}

#[cfg(test)]
mod tests {
    use super::template_span;
    use crate::source::SourceFile;

    #[test]
    fn a_path_through_a_short_form_if_reaches_the_branch() {
        let file = SourceFile::new(
            "t.yaml",
            "Resources:\n  A:\n    Properties:\n      Count: !If [C, 1, many]\n",
        );
        let root = crate::syntax::parse(&file).map_err(|d| d.message.clone());
        let span = root
            .ok()
            .and_then(|root| template_span(&root, "Resources/A/Properties/Count/Fn::If/2"));
        assert_eq!(span.map(|s| (s.line, s.column)), Some((4, 25)));
    }
}
