//! What changes between every stack of two versions of a blueprint, and
//! the node groups that move from one stack to another.
//!
//! A stack only one side has is compared with an empty template: created
//! or deleted whole. A node group (an Auto Scaling group or an EKS node
//! group) that leaves one stack and appears in another under the same
//! logical ID is a **move**: CloudFormation deletes it in one stack and
//! creates it in the other, and only the order of the two deploys decides
//! whether its nodes are kept. Creating the new one first keeps them; but a
//! group whose physical name is fixed (`NodegroupName`,
//! `AutoScalingGroupName`) cannot exist twice, and then no order keeps
//! them.

use std::collections::BTreeSet;

use super::{Diff, diff};
use crate::cfn::{Expr, Template};
use crate::validate::SchemaSet;

/// Every stack's diff, by stack name, and the moves between them.
#[derive(Clone, Debug, PartialEq)]
pub struct StackDiffs {
    pub stacks: Vec<StackDiff>,
    pub moves: Vec<Move>,
}

/// One stack's changes.
#[derive(Clone, Debug, PartialEq)]
pub struct StackDiff {
    pub name: String,
    pub change: StackChange,
    pub diff: Diff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackChange {
    Created,
    Deleted,
    Updated,
}

/// A node group that leaves stack `from` for stack `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    pub logical_id: String,
    pub resource_type: String,
    pub from: String,
    pub to: String,
    /// The physical name both stacks give it, when fixed: the property
    /// and the name.
    pub fixed_name: Option<(String, String)>,
}

impl Move {
    /// Whether some order of the two deploys keeps the group's nodes.
    pub fn keeps_nodes(&self) -> bool {
        self.fixed_name.is_none()
    }

    /// What to do, in words.
    pub fn advice(&self) -> String {
        match &self.fixed_name {
            None => format!(
                "deploy `{to}` first (the group is created there and its nodes join), then `{from}` (the old group is deleted)",
                to = self.to,
                from = self.from
            ),
            Some((property, name)) => format!(
                "its {property} `{name}` cannot exist twice, so no order keeps its nodes: deploying `{to}` first fails on the name, and deploying `{from}` first deletes the group and its nodes before `{to}` creates it again; give the moved group another name to keep its nodes",
                to = self.to,
                from = self.from
            ),
        }
    }
}

/// Compares the stacks of two versions of a blueprint, each a list of
/// (stack name, template).
pub fn diff_stacks(
    old: &[(String, Template)],
    new: &[(String, Template)],
    schemas: &SchemaSet,
) -> StackDiffs {
    let names: BTreeSet<&str> = old.iter().chain(new).map(|(n, _)| n.as_str()).collect();
    let empty = Template::default();
    let stacks = names
        .iter()
        .map(|name| {
            let (before, after) = (find(old, name), find(new, name));

            let change = match (before, after) {
                (None, _) => StackChange::Created,
                (_, None) => StackChange::Deleted,
                _ => StackChange::Updated,
            };
            StackDiff {
                name: name.to_string(),
                change,
                diff: diff(before.unwrap_or(&empty), after.unwrap_or(&empty), schemas),
            }
        })
        .collect();
    StackDiffs {
        stacks,
        moves: moves(old, new),
    }
}

/// The template of stack `name` on one side.
fn find<'t>(side: &'t [(String, Template)], name: &str) -> Option<&'t Template> {
    side.iter().find(|(n, _)| n == name).map(|(_, t)| t)
}

/// The node groups of `old` found in another stack of `new`.
fn moves(old: &[(String, Template)], new: &[(String, Template)]) -> Vec<Move> {
    let mut moves = Vec::new();
    for (from, before) in old {
        for (id, resource) in &before.resources {
            let Some(name_property) = group_name_property(&resource.kind) else {
                continue;
            };
            let stays = new
                .iter()
                .any(|(name, t)| name == from && t.resources.contains_key(id));
            if stays {
                continue;
            }
            let Some((to, moved)) = new.iter().find_map(|(name, t)| {
                let moved = t.resources.get(id)?;
                (name != from && moved.kind == resource.kind).then_some((name, moved))
            }) else {
                continue;
            };
            let fixed = |r: &crate::cfn::Resource| match r.properties.get(name_property) {
                Some(Expr::String(name)) => Some(name.clone()),
                _ => None,
            };
            let fixed_name = match (fixed(resource), fixed(moved)) {
                (Some(a), Some(b)) if a == b => Some((name_property.to_string(), b)),
                _ => None,
            };
            moves.push(Move {
                logical_id: id.clone(),
                resource_type: resource.kind.clone(),
                from: from.clone(),
                to: to.clone(),
                fixed_name,
            });
        }
    }
    moves.sort_by(|a, b| a.logical_id.cmp(&b.logical_id));
    moves
}

/// The property that names a node group in its service, for the types
/// whose removal loses nodes.
fn group_name_property(kind: &str) -> Option<&'static str> {
    match kind {
        "AWS::AutoScaling::AutoScalingGroup" => Some("AutoScalingGroupName"),
        "AWS::EKS::Nodegroup" => Some("NodegroupName"),
        _ => None,
    }
}

/// The moves, then each stack's diff under its name, for people.
pub fn render_stacks_human(stacks: &StackDiffs) -> String {
    let mut out = String::new();
    if !stacks.moves.is_empty() {
        out.push_str("Moves between stacks:\n");
        for moved in &stacks.moves {
            let mark = if moved.keeps_nodes() {
                ""
            } else {
                "!! CRITICAL: "
            };
            out.push_str(&format!(
                "  {mark}{} ({}) moves from `{}` to `{}`: {}\n",
                moved.logical_id,
                moved.resource_type,
                moved.from,
                moved.to,
                moved.advice()
            ));
        }
        out.push('\n');
    }
    for (index, stack) in stacks.stacks.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let what = match stack.change {
            StackChange::Created => " (created)",
            StackChange::Deleted => " (deleted)",
            StackChange::Updated => "",
        };
        out.push_str(&format!("== stack {}{what}\n", stack.name));
        out.push_str(&super::render_human(&stack.diff));
    }
    out
}

/// The moves and every stack's diff as one JSON document: `moves` (each
/// with `logical_id`, `type`, `from`, `to`, `fixed_name`, `keeps_nodes`,
/// `advice`) and `stacks` (each with `name`, `change` and `diff`, the
/// document `render_json` writes for one stack).
pub fn render_stacks_json(stacks: &StackDiffs) -> String {
    use serde_json::{Value, json};
    let moves: Vec<Value> = stacks
        .moves
        .iter()
        .map(|m| {
            json!({
                "logical_id": m.logical_id,
                "type": m.resource_type,
                "from": m.from,
                "to": m.to,
                "fixed_name": m.fixed_name.as_ref().map(|(_, name)| name),
                "keeps_nodes": m.keeps_nodes(),
                "advice": m.advice(),
            })
        })
        .collect();
    let list: Vec<Value> = stacks
        .stacks
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "change": match s.change {
                    StackChange::Created => "created",
                    StackChange::Deleted => "deleted",
                    StackChange::Updated => "updated",
                },
                "diff": super::render::json_document(&s.diff),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({
        "version": 1,
        "has_changes": stacks.has_changes(),
        "moves": moves,
        "stacks": list,
    }))
    .unwrap_or_default();
    text.push('\n');
    text
}

impl StackDiffs {
    pub fn has_changes(&self) -> bool {
        self.stacks.iter().any(|s| s.diff.has_changes())
    }
}

/// The moves and every stack's diff in GitHub-flavoured Markdown, each stack
/// rendered as `render_markdown` renders one.
pub fn render_stacks_markdown(stacks: &StackDiffs, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    if !stacks.moves.is_empty() {
        out.push_str("### Moves between stacks\n\n");
        for moved in &stacks.moves {
            let mark = if moved.keeps_nodes() {
                ""
            } else {
                "**CRITICAL** "
            };
            out.push_str(&format!(
                "- {mark}{} moves from {} to {}: {}\n",
                crate::escape::markdown_code(&moved.logical_id),
                crate::escape::markdown_code(&moved.from),
                crate::escape::markdown_code(&moved.to),
                crate::escape::markdown_text(&moved.advice())
            ));
        }
        out.push('\n');
    }
    for stack in &stacks.stacks {
        let side = |path: &str| format!("{path} (stack {})", stack.name);
        out.push_str(&super::render_markdown(
            &stack.diff,
            &side(old_name),
            &side(new_name),
        ));
        out.push('\n');
    }
    out
}
