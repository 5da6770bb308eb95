//! A diff as GitHub-flavoured Markdown, for a bot to post on a pull request.
//!
//! The reviewer's order: what is replaced or lost first (critical ones
//! flagged, and first of all), then the rolling updates that follow, then
//! every other change. Each resource appears once: a replaced one with its
//! causes and its changed values under "Replacements", the others under
//! "Other changes". The words and values are those of the human rendering.

use std::fmt::Write as _;

use super::render::{
    counted, fate, human_value, indirect_text, rollout_line, summary_line, text_change,
};
use super::*;
use crate::escape::{markdown_code as code, markdown_text as text};

/// The diff in Markdown, headed by the names of the two sides as given.
pub fn render_markdown(diff: &Diff, old: &str, new: &str) -> String {
    let mut out = format!("### eksynth diff: {} → {}\n\n", code(old), code(new));
    if !diff.has_changes() {
        out.push_str("No changes.\n");
        return out;
    }
    let _ = writeln!(out, "{}\n", text(&summary_line(diff)));

    let critical = diff.critical();
    if !critical.is_empty() {
        let _ = writeln!(
            out,
            "> [!CAUTION]\n> **CRITICAL**: {} removed or replaced: nodes or their access to the cluster are lost.\n",
            counted(critical.len(), "resource")
        );
    }

    // Critical resources first, then the other replacements, each group in
    // the diff's order.
    let replaced: Vec<&ResourceDiff> = critical
        .iter()
        .copied()
        .chain(diff.replacements().into_iter().filter(|r| !r.critical))
        .collect();
    if !replaced.is_empty() {
        out.push_str("#### Replacements\n\n");
        for resource in &replaced {
            let flag = if resource.critical {
                "**CRITICAL** "
            } else {
                ""
            };
            let _ = write!(
                out,
                "- {flag}{} ({}) {}",
                code(&resource.logical_id),
                code(&resource.resource_type),
                text(&fate(resource))
            );
            match resource.impact() {
                Some(impact) => {
                    let _ = writeln!(out, ": {}", text(impact));
                }
                None => out.push('\n'),
            }
            for cause in &resource.replacement {
                let _ = writeln!(out, "  - {}", text(&cause.describe()));
            }
            resource_details(&mut out, resource);
        }
        out.push('\n');
    }

    if !diff.rollouts.is_empty() {
        out.push_str("#### Rolling updates\n\n");
        for rollout in &diff.rollouts {
            let _ = writeln!(out, "- {}", text(&rollout_line(rollout)));
        }
        out.push('\n');
    }

    let others: Vec<&ResourceDiff> = diff
        .resources
        .iter()
        .filter(|r| !r.critical && !r.is_replaced())
        .collect();
    let entries = [
        ("Parameters", &diff.parameters),
        ("Outputs", &diff.outputs),
        ("Conditions", &diff.conditions),
        ("Mappings", &diff.mappings),
    ];
    if others.is_empty() && entries.iter().all(|(_, e)| e.is_empty()) && diff.template.is_empty() {
        return out;
    }
    out.push_str("#### Other changes\n\n");
    if !others.is_empty() {
        out.push_str("##### Resources\n\n");
        for resource in others {
            let _ = writeln!(
                out,
                "- **{}** {} ({})",
                resource.kind.name(),
                code(&resource.logical_id),
                code(&resource.resource_type)
            );
            resource_details(&mut out, resource);
        }
        out.push('\n');
    }
    for (title, entries) in entries {
        if entries.is_empty() {
            continue;
        }
        let _ = writeln!(out, "##### {title}\n");
        for entry in entries {
            let detail = match (&entry.detail, entry.kind) {
                (Some(detail), EntryKind::Added | EntryKind::Removed) => {
                    format!(" ({})", code(detail))
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "- **{}** {}{detail}",
                entry.kind.name(),
                code(&entry.name)
            );
            for change in &entry.changes {
                let path = if change.path.is_empty() {
                    "(value)"
                } else {
                    &change.path
                };
                value_change(&mut out, path, change.old.as_ref(), change.new.as_ref(), "");
            }
            for note in &entry.notes {
                let _ = writeln!(out, "  - note: {}", text(note));
            }
        }
        out.push('\n');
    }
    if !diff.template.is_empty() {
        out.push_str("##### Template\n\n");
        for change in &diff.template {
            let _ = writeln!(
                out,
                "- {}: {} → {}",
                code(&change.path),
                code(&human_value(change.old.as_ref())),
                code(&human_value(change.new.as_ref()))
            );
        }
        out.push('\n');
    }
    // One trailing newline, not a blank line.
    out.pop();
    out
}

/// A resource's changed values, indirect changes and notes, as sub-items.
fn resource_details(out: &mut String, resource: &ResourceDiff) {
    for change in &resource.changes {
        let suffix = if change.replaces {
            " (requires replacement)"
        } else {
            ""
        };
        value_change(
            out,
            &change.display_path(),
            change.old.as_ref(),
            change.new.as_ref(),
            suffix,
        );
    }
    for indirect in &resource.indirect {
        let suffix = if indirect.replaces {
            " (requires replacement)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  - {}: {}{suffix}",
            code(&indirect.path),
            text(&indirect_text(indirect))
        );
    }
    for note in &resource.notes {
        let _ = writeln!(out, "  - note: {}", text(note));
    }
}

/// One changed value as a sub-item: `path`: `old` → `new`, or for
/// multi-line text its changed lines in a `diff` block inside the item.
/// No blank line goes into an item: one would make the whole list loose
/// (CommonMark, "Lists"), and an HTML `<details>` block needs blank lines
/// around Markdown inside it, so the lines are not collapsed.
fn value_change(
    out: &mut String,
    path: &str,
    old: Option<&Expr>,
    new: Option<&Expr>,
    suffix: &str,
) {
    let Some(change) = text_change(old, new) else {
        let _ = writeln!(
            out,
            "  - {}: {} → {}{suffix}",
            code(path),
            code(&human_value(old)),
            code(&human_value(new))
        );
        return;
    };
    let _ = writeln!(
        out,
        "  - {}: text changed ({} → {} lines){suffix}",
        code(path),
        change.old_lines,
        change.new_lines
    );
    let mut lines = change.hunks;
    if change.hidden > 0 {
        lines.push(format!("… {} more changed lines", change.hidden));
    }
    let fence = "`".repeat(3.max(longest_run(&lines.join("\n"), '`') + 1));
    let _ = writeln!(out, "    {fence}diff");
    for line in &lines {
        let _ = writeln!(out, "    {}", crate::escape::terminal(line));
    }
    let _ = writeln!(out, "    {fence}");
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c).map(str::len).max().unwrap_or(0)
}
