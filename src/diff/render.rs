//! A diff printed: for people (`render_human`) and as JSON (`render_json`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::values::align;
use super::*;
use crate::cfn::json::expr as expr_json;
use crate::escape::terminal;

/// A value as compact JSON with long-form intrinsics.
pub(super) fn compact(value: &Expr) -> String {
    serde_json::to_string(&expr_json(value)).unwrap_or_default()
}

/// Values longer than this (in characters) are shortened in human output.
const HUMAN_VALUE_LIMIT: usize = 100;

/// Changed text lines shown per value in human output.
const HUMAN_TEXT_LINES: usize = 24;

/// A value for human eyes: compact JSON, shortened when long.
pub(super) fn human_value(value: Option<&Expr>) -> String {
    let Some(value) = value else {
        return "(absent)".to_string();
    };
    let text = compact(value);
    let count = text.chars().count();
    if count <= HUMAN_VALUE_LIMIT {
        return text;
    }
    let head: String = text.chars().take(HUMAN_VALUE_LIMIT - 20).collect();
    format!("{head}… ({count} characters)")
}

/// The text inside a string, `Fn::Sub` or `Fn::Base64` of either.
fn text_of(value: &Expr) -> Option<&str> {
    match value {
        Expr::String(s) => Some(s),
        Expr::Sub { template, .. } => Some(template),
        Expr::Base64(inner) => text_of(inner),
        _ => None,
    }
}

/// A change of multi-line text (user data), shown as its changed lines.
pub(super) struct TextChange {
    pub(super) old_lines: usize,
    pub(super) new_lines: usize,
    /// `@@ -old +new @@` hunks without context (ranges as `diff -U0` writes
    /// them), each followed by its `-`
    /// and `+` lines, at most `HUMAN_TEXT_LINES` changed lines in all.
    pub(super) hunks: Vec<String>,
    /// The changed lines left out.
    pub(super) hidden: usize,
}

/// The text change between two values, when both are text, differ, and
/// one of them has several lines.
pub(super) fn text_change(old: Option<&Expr>, new: Option<&Expr>) -> Option<TextChange> {
    let (a, b) = old.and_then(text_of).zip(new.and_then(text_of))?;
    if a == b || !(a.contains('\n') || b.contains('\n')) {
        return None;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let anchors = align(&a, &b, 4_000_000);
    let mut change = TextChange {
        old_lines: a.len(),
        new_lines: b.len(),
        hunks: Vec::new(),
        hidden: 0,
    };
    let mut shown = 0;
    let (mut i, mut j) = (0, 0);
    for (ai, aj) in anchors.into_iter().chain([(a.len(), b.len())]) {
        if ai > i || aj > j {
            let lines: Vec<String> = a[i..ai]
                .iter()
                .map(|line| format!("-{line}"))
                .chain(b[j..aj].iter().map(|line| format!("+{line}")))
                .collect();
            if shown + lines.len() <= HUMAN_TEXT_LINES {
                shown += lines.len();
                change.hunks.push(format!(
                    "@@ -{} +{} @@",
                    hunk_range(i, ai - i),
                    hunk_range(j, aj - j)
                ));
                change.hunks.extend(lines);
            } else {
                change.hidden += lines.len();
            }
        }
        (i, j) = (ai + 1, aj + 1);
    }
    Some(change)
}

/// A hunk's range as unified diff writes it: the first line (1-based) and,
/// unless it is 1, the count; an empty range names the line before it
/// (`15,0`: nothing, after line 15), as `diff -U0` and `git diff` do.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// One changed value: `path: old → new`, or for multi-line text (user
/// data), the changed lines.
fn human_change(
    out: &mut String,
    path: &str,
    old: Option<&Expr>,
    new: Option<&Expr>,
    suffix: &str,
) {
    if let Some(text) = text_change(old, new) {
        let _ = writeln!(
            out,
            "    {}: text changed ({} → {} lines){suffix}",
            terminal(path),
            text.old_lines,
            text.new_lines
        );
        for line in &text.hunks {
            let _ = writeln!(out, "      {}", terminal(line));
        }
        if text.hidden > 0 {
            let _ = writeln!(out, "      … {} more changed lines", text.hidden);
        }
        return;
    }
    let _ = writeln!(
        out,
        "    {}: {} → {}{suffix}",
        terminal(path),
        terminal(&human_value(old)),
        terminal(&human_value(new))
    );
}

fn kind_mark(kind: &ChangeKind) -> char {
    match kind {
        ChangeKind::Added => '+',
        ChangeKind::Removed => '-',
        ChangeKind::Modified | ChangeKind::Renamed { .. } => '~',
    }
}

fn entry_mark(kind: EntryKind) -> char {
    match kind {
        EntryKind::Added => '+',
        EntryKind::Removed => '-',
        EntryKind::Modified => '~',
    }
}

/// What happens to a removed or replaced resource: `is removed`, `is
/// replaced`, `replaces OldId (logical ID changed)`.
pub(super) fn fate(resource: &ResourceDiff) -> String {
    match &resource.kind {
        ChangeKind::Removed => "is removed".to_string(),
        ChangeKind::Renamed { from } => format!("replaces {from} (logical ID changed)"),
        _ => "is replaced".to_string(),
    }
}

/// The critical line of a resource, for the banner and its own block.
fn critical_line(resource: &ResourceDiff) -> Option<String> {
    let impact = resource.impact()?;
    Some(format!(
        "{} ({}) {}: {impact}",
        resource.logical_id,
        resource.resource_type,
        fate(resource)
    ))
}

pub(super) fn rollout_line(rollout: &Rollout) -> String {
    let reasons = rollout.reasons.join("; ");
    match rollout.kind {
        RolloutKind::RollingUpdate => format!("rolling update of {} ({reasons})", rollout.resource),
        RolloutKind::ReplacingUpdate => format!(
            "replacing update of {} ({reasons}): a new Auto Scaling group replaces it",
            rollout.resource
        ),
        RolloutKind::NodeGroupUpdate => {
            format!("node group update of {} ({reasons})", rollout.resource)
        }
        RolloutKind::NoInstanceRefresh => format!(
            "no rolling update of {} ({reasons}): it has no AutoScalingRollingUpdate policy, so running instances keep the old configuration",
            rollout.resource
        ),
    }
}

/// `changes with Target.Attribute (Target is replaced)`.
pub(super) fn indirect_text(indirect: &Indirect) -> String {
    let target = match &indirect.attribute {
        Some(attribute) => format!("{}.{attribute}", indirect.target),
        None => indirect.target.clone(),
    };
    let why = match indirect.because {
        Because::Replaced => format!("{} is replaced", indirect.target),
        Because::Modified => format!("{} is modified", indirect.target),
        Because::ParameterChanged => format!("parameter {} changed", indirect.target),
    };
    format!("changes with {target} ({why})")
}

fn indirect_line(indirect: &Indirect) -> String {
    let suffix = if indirect.replaces {
        "  (requires replacement)"
    } else {
        ""
    };
    format!("    {}: {}{suffix}", indirect.path, indirect_text(indirect))
}

/// The diff for people (every name and value from the templates by the
/// terminal rule of [`crate::escape`]): critical changes first, then resources (`+` added,
/// `-` removed, `~` modified or renamed, with `path: old → new` lines and
/// `!! REPLACEMENT` / `!! CRITICAL` lines), rollouts, parameters, outputs,
/// conditions, mappings, template sections, and a summary line. Values are
/// compact JSON with long-form intrinsics, shortened when long; multi-line
/// text shows its changed lines.
pub fn render_human(diff: &Diff) -> String {
    let mut out = String::new();
    if !diff.has_changes() {
        out.push_str("No changes.\n");
        return out;
    }
    let critical: Vec<String> = diff.resources.iter().filter_map(critical_line).collect();
    for line in &critical {
        let _ = writeln!(out, "!! CRITICAL: {}", terminal(line));
    }
    if !critical.is_empty() {
        out.push('\n');
    }

    if !diff.resources.is_empty() {
        out.push_str("Resources:\n");
        for resource in &diff.resources {
            let _ = writeln!(
                out,
                "{} {} ({})",
                kind_mark(&resource.kind),
                terminal(&resource.logical_id),
                terminal(&resource.resource_type)
            );
            for cause in &resource.replacement {
                let _ = writeln!(out, "    !! REPLACEMENT: {}", terminal(&cause.describe()));
            }
            if let Some(impact) = resource.impact() {
                let _ = writeln!(out, "    !! CRITICAL: {}", terminal(impact));
            }
            for change in &resource.changes {
                let suffix = if change.replaces {
                    "  (requires replacement)"
                } else {
                    ""
                };
                human_change(
                    &mut out,
                    &change.display_path(),
                    change.old.as_ref(),
                    change.new.as_ref(),
                    suffix,
                );
            }
            for indirect in &resource.indirect {
                let _ = writeln!(out, "{}", terminal(&indirect_line(indirect)));
            }
            for note in &resource.notes {
                let _ = writeln!(out, "    note: {}", terminal(note));
            }
        }
    }

    if !diff.rollouts.is_empty() {
        out.push_str("\nRollouts:\n");
        for rollout in &diff.rollouts {
            let _ = writeln!(out, "  {}", terminal(&rollout_line(rollout)));
        }
    }

    for (title, entries) in [
        ("Parameters", &diff.parameters),
        ("Outputs", &diff.outputs),
        ("Conditions", &diff.conditions),
        ("Mappings", &diff.mappings),
    ] {
        if entries.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title}:");
        for entry in entries {
            let detail = match (&entry.detail, entry.kind) {
                (Some(detail), EntryKind::Added | EntryKind::Removed) => format!(" ({detail})"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{} {}{}",
                entry_mark(entry.kind),
                terminal(&entry.name),
                terminal(&detail)
            );
            for change in &entry.changes {
                let path = if change.path.is_empty() {
                    "(value)"
                } else {
                    &change.path
                };
                human_change(&mut out, path, change.old.as_ref(), change.new.as_ref(), "");
            }
            for note in &entry.notes {
                let _ = writeln!(out, "    note: {note}");
            }
        }
    }

    if !diff.template.is_empty() {
        out.push_str("\nTemplate:\n");
        for change in &diff.template {
            human_change(
                &mut out,
                &change.path,
                change.old.as_ref(),
                change.new.as_ref(),
                "",
            );
        }
    }

    let _ = writeln!(out, "\n{}", summary_line(diff));
    out
}

/// `15 resources changed: 3 added, ...; 0 rollouts; 0 parameters, 6 outputs changed`.
pub(super) fn summary_line(diff: &Diff) -> String {
    let summary = diff.summary();
    format!(
        "{} changed: {} added, {} removed, {} modified, {} renamed; {} replaced, {} critical; {}; {}, {} changed",
        counted(diff.resources.len(), "resource"),
        summary.added,
        summary.removed,
        summary.modified,
        summary.renamed,
        summary.replaced,
        summary.critical,
        counted(summary.rollouts, "rollout"),
        counted(diff.parameters.len(), "parameter"),
        counted(diff.outputs.len(), "output"),
    )
}

/// `1 rollout`, `2 rollouts`.
pub(super) fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn json_value(value: Option<&Expr>) -> Value {
    value.map_or(Value::Null, expr_json)
}

fn json_cause(cause: &ReplacementCause) -> Value {
    match cause {
        ReplacementCause::TypeChanged { old, new } => {
            json!({ "cause": "type-changed", "old": old, "new": new })
        }
        ReplacementCause::CreateOnly { property } => {
            json!({ "cause": "create-only", "property": property })
        }
        ReplacementCause::LogicalIdChanged { from, to } => {
            json!({ "cause": "logical-id-changed", "from": from, "to": to })
        }
        ReplacementCause::Dependency { path, target } => {
            json!({ "cause": "dependency", "path": path, "refers_to": target })
        }
    }
}

fn json_entries(entries: &[EntryDiff]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|entry| {
                json!({
                    "name": entry.name,
                    "change": entry.kind.name(),
                    "detail": entry.detail,
                    "changes": entry.changes.iter().map(json_change).collect::<Vec<_>>(),
                    "notes": entry.notes,
                })
            })
            .collect(),
    )
}

fn json_change(change: &Change) -> Value {
    json!({
        "path": change.path,
        "old": json_value(change.old.as_ref()),
        "new": json_value(change.new.as_ref()),
    })
}

/// The diff as one JSON document (pretty-printed, keys in this order,
/// arrays in the order of [`Diff`]). Schema, version 1:
///
/// ```text
/// {
///   "version": 1,
///   "has_changes": bool,
///   "summary": { "added", "removed", "modified", "renamed", "replaced",
///                "critical", "rollouts": number },
///   "resources": [{
///     "logical_id": string,            // the new one; the old one if removed
///     "type": string,
///     "change": "added" | "removed" | "modified" | "renamed",
///     "renamed_from": string | null,   // the old logical ID of a renamed resource
///     "replaced": bool,
///     "critical": bool,                // nodes or cluster access are lost
///     "impact": string | null,         // what is lost, when critical
///     "replacement": [                 // why it is replaced; [] when not
///       { "cause": "type-changed", "old": string, "new": string } |
///       { "cause": "create-only", "property": string } |   // schema path, `*` for items
///       { "cause": "logical-id-changed", "from": string, "to": string } |
///       { "cause": "dependency", "path": string, "refers_to": string }
///     ],
///     "changes": [{
///       "section": "Type" | "Condition" | "DependsOn" | "Metadata" | "Properties" |
///                  "CreationPolicy" | "UpdatePolicy" | "DeletionPolicy" |
///                  "UpdateReplacePolicy",
///       "path": string,                // below the section, `/`-joined, "" for all of it
///       "old": value | null,           // long-form JSON; null when absent
///       "new": value | null,
///       "replaces": bool               // touches a changed create-only property
///     }],
///     "indirect": [{                   // unchanged text whose value changes on deploy
///       "path": string, "refers_to": string, "attribute": string | null,
///       "because": "replaced" | "modified" | "parameter-changed",
///       "replaces": bool
///     }],
///     "notes": [string]
///   }],
///   "rollouts": [{
///     "resource": string, "type": string,
///     "kind": "rolling-update" | "replacing-update" | "node-group-update" |
///             "no-instance-refresh",
///     "reasons": [string]
///   }],
///   "parameters" | "outputs" | "conditions" | "mappings": [{
///     "name": string,
///     "change": "added" | "removed" | "modified",
///     "detail": string | null,         // parameter type; output export name (JSON)
///     "changes": [{ "path": string, "old": value | null, "new": value | null }],
///     "notes": [string]                // a changed default and how to apply it
///   }],
///   "template": [{ "path": string, "old": value | null, "new": value | null }]
/// }
/// ```
pub fn render_json(diff: &Diff) -> String {
    let mut text = serde_json::to_string_pretty(&json_document(diff)).unwrap_or_default();
    text.push('\n');
    text
}

/// The document `render_json` writes, as a value (a stack's entry in the
/// document of several stacks).
pub(super) fn json_document(diff: &Diff) -> Value {
    let summary = diff.summary();
    let resources: Vec<Value> = diff
        .resources
        .iter()
        .map(|resource| {
            json!({
                "logical_id": resource.logical_id,
                "type": resource.resource_type,
                "change": resource.kind.name(),
                "renamed_from": match &resource.kind {
                    ChangeKind::Renamed { from } => Value::String(from.clone()),
                    _ => Value::Null,
                },
                "replaced": resource.is_replaced(),
                "critical": resource.critical,
                "impact": resource.impact(),
                "replacement": resource.replacement.iter().map(json_cause).collect::<Vec<_>>(),
                "changes": resource.changes.iter().map(|change| json!({
                    "section": change.section.name(),
                    "path": change.path,
                    "old": json_value(change.old.as_ref()),
                    "new": json_value(change.new.as_ref()),
                    "replaces": change.replaces,
                })).collect::<Vec<_>>(),
                "indirect": resource.indirect.iter().map(|indirect| json!({
                    "path": indirect.path,
                    "refers_to": indirect.target,
                    "attribute": indirect.attribute,
                    "because": indirect.because.name(),
                    "replaces": indirect.replaces,
                })).collect::<Vec<_>>(),
                "notes": resource.notes,
            })
        })
        .collect();
    let rollouts: Vec<Value> = diff
        .rollouts
        .iter()
        .map(|rollout| {
            json!({
                "resource": rollout.resource,
                "type": rollout.resource_type,
                "kind": rollout.kind.name(),
                "reasons": rollout.reasons,
            })
        })
        .collect();
    json!({
        "version": 1,
        "has_changes": diff.has_changes(),
        "summary": {
            "added": summary.added,
            "removed": summary.removed,
            "modified": summary.modified,
            "renamed": summary.renamed,
            "replaced": summary.replaced,
            "critical": summary.critical,
            "rollouts": summary.rollouts,
        },
        "resources": resources,
        "rollouts": rollouts,
        "parameters": json_entries(&diff.parameters),
        "outputs": json_entries(&diff.outputs),
        "conditions": json_entries(&diff.conditions),
        "mappings": json_entries(&diff.mappings),
        "template": diff.template.iter().map(json_change).collect::<Vec<_>>(),
    })
}
