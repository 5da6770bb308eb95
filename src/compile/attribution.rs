//! Findings made diagnostics: each located at the blueprint field, line or
//! override that produced what it is about, and a finding that many
//! resources share reported once. Also how a finding is located in a
//! template file, for `eksynth validate` on templates.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::blueprint::{Blueprint, NodeGroup};
use crate::diagnostic::Diagnostic;
use crate::eks;
use crate::source::{SourceFile, Span};
use crate::syntax;
use crate::validate::Finding;

use super::{OversizedUserData, Sources, Staged};

/// What locating a stack's findings in the blueprint needs besides the
/// stack.
pub(super) struct Attribution<'a> {
    pub blueprint: &'a Blueprint,
    pub sources: Sources<'a>,
    /// Finding IDs the loader reports itself, at the field that asks for
    /// them (`associatePublicIpAddress`): validation does not repeat them,
    /// unless an override made them.
    pub said_by_the_loader: &'a [&'static str],
    /// Launch templates whose user data eksynth measured over EC2's limit.
    pub oversized: &'a OversizedUserData,
}

/// Adds a diagnostic to `diagnostics` for each finding of `stacks`,
/// located in the blueprint; with several stacks, each message names its
/// stack.
pub(super) fn attribute_findings(
    stacks: &[Staged],
    attribution: &Attribution,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let several = stacks.len() > 1;
    // How many more resources each finding diagnostic stands for.
    let mut repeats: Vec<(usize, usize)> = Vec::new();
    for staged in stacks {
        let stack = &staged.stack;
        for finding in &stack.findings {
            let Some(mut diagnostic) = attribution.locate(finding, staged) else {
                continue;
            };
            if several {
                diagnostic.message = format!("stack `{}`: {}", stack.name, diagnostic.message);
            }
            push_once(diagnostics, &mut repeats, diagnostic);
        }
    }
    label_repeats(diagnostics, repeats);
}

impl Attribution<'_> {
    /// The diagnostic of a finding of `staged`, at the override that changed
    /// the value it is about, else at the blueprint field that writes the
    /// value, else at the line that produced its resource (or declared the
    /// stack, for a finding about the whole stack). `None` when the loader
    /// already warned at the blueprint's own field.
    fn locate(&self, finding: &Finding, staged: &Staged) -> Option<Diagnostic> {
        let stack = &staged.stack;
        // A finding about what an override changed is the override's.
        let overridden = stack
            .overrides
            .iter()
            .rev()
            .find(|o| o.covers(&finding.path));
        if self.said_by_the_loader.contains(&finding.id) && overridden.is_none() {
            return None;
        }
        let span = match (overridden, finding.resource()) {
            (Some(applied), _) => Some(applied.span),
            (None, Some(id)) => field_origin(&staged.field_origins, &finding.path)
                .or_else(|| stack.origins.get(id).copied()),
            (None, None) => Some(stack.span),
        };
        let oversized = match finding.resource() {
            Some(id) if finding.id == "E3007" && overridden.is_none() => self
                .oversized
                .get(id)
                .map(|(index, share)| (&self.blueprint.node_groups[*index], share)),
            _ => None,
        };
        Some(match oversized {
            Some((group, share)) => {
                let mut diagnostic = oversized_user_data(group, share, self.sources);
                diagnostic.label = Some(format!("in {}", finding.path));
                diagnostic
            }
            None => {
                let located =
                    span.map_or_else(|| Arc::clone(self.sources.entry), |s| self.sources.of(s));
                finding_diagnostic(finding, &located, span)
            }
        })
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

/// Ends the label of each diagnostic that stands for more resources than
/// its own with how many more.
fn label_repeats(diagnostics: &mut [Diagnostic], repeats: Vec<(usize, usize)>) {
    for (index, more) in repeats {
        let diagnostic = &mut diagnostics[index];
        let label = diagnostic.label.take().unwrap_or_default();
        let resources = if more == 1 { "resource" } else { "resources" };
        diagnostic.label = Some(format!("{label} (and {more} more {resources})"));
    }
}

/// The blueprint field that writes the value at `path` (a finding's path,
/// `Resources/Id/...`), or one of its parents.
fn field_origin(field_origins: &IndexMap<String, Span>, path: &str) -> Option<Span> {
    let mut rest = path.strip_prefix("Resources/")?;
    loop {
        if let Some(span) = field_origins.get(rest) {
            return Some(*span);
        }
        rest = &rest[..rest.rfind('/')?];
    }
}

/// User data over EC2's limit, located at the group's field that adds the
/// most to it (at the group's name when none does), with who takes the
/// bytes: eksynth's own parts and the group's fields.
fn oversized_user_data(
    group: &NodeGroup,
    share: &eks::userdata::Share,
    sources: Sources,
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
    let mut diagnostic = Diagnostic::error(&sources.of(span), Some(span), message);
    diagnostic.code = Some("E3007");
    diagnostic.help = Some(format!(
        "trim it by {} bytes: move long scripts to S3 or SSM and fetch them at boot",
        share.total - max
    ));
    diagnostic
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
