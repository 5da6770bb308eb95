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
//! them. A role's cluster access (its access entry or aws-auth mapping),
//! matched by the role it grants since its logical ID may change too,
//! never can exist twice: EKS has one access entry per role.

use std::collections::BTreeSet;

use super::{Diff, diff};
use crate::cfn::{Expr, Resource, Template};
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

/// A node group, or a role's cluster access, that leaves stack `from` for
/// stack `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// The logical ID in `to`.
    pub logical_id: String,
    /// The logical ID in `from`, when it differs.
    pub renamed_from: Option<String>,
    pub resource_type: String,
    pub from: String,
    pub to: String,
    /// What both stacks give it that exists once in the account or cluster,
    /// when there is such a thing: the property and its value (a node
    /// group's fixed name, the role an access entry or aws-auth mapping
    /// grants).
    pub fixed_name: Option<(String, String)>,
}

impl Move {
    /// Whether some order of the two deploys keeps the group's nodes, or
    /// the role's access.
    pub fn keeps_nodes(&self) -> bool {
        self.fixed_name.is_none()
    }

    fn is_access(&self) -> bool {
        access_key_property(&self.resource_type).is_some()
    }

    /// What to do, in words.
    pub fn advice(&self) -> String {
        let (to, from) = (&self.to, &self.from);
        match &self.fixed_name {
            None => format!(
                "deploy `{to}` first (the group is created there and its nodes join), then `{from}` (the old group is deleted)"
            ),
            Some((_, role)) if self.is_access() => format!(
                "the role {role} has one access entry (or aws-auth mapping), so it cannot be in both stacks: deploying `{to}` first fails on the one `{from}` holds, and deploying `{from}` first leaves the role's nodes without cluster access until `{to}` is deployed; deploy the two one right after the other"
            ),
            Some((property, name)) => format!(
                "its {property} `{name}` cannot exist twice, so no order keeps its nodes: deploying `{to}` first fails on the name, and deploying `{from}` first deletes the group and its nodes before `{to}` creates it again; give the moved group another name to keep its nodes"
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

/// The node groups of `old` found in another stack of `new` (by logical
/// ID), and the cluster access of a role found in another stack (by the
/// role it grants, whatever its logical ID).
fn moves(old: &[(String, Template)], new: &[(String, Template)]) -> Vec<Move> {
    let mut moves = Vec::new();
    for (from, before) in old {
        for (id, resource) in &before.resources {
            let found = if let Some(name_property) = group_name_property(&resource.kind) {
                moved_group(new, from, id, resource, name_property)
            } else if let Some(key_property) = access_key_property(&resource.kind) {
                moved_access(new, (from, before), id, resource, key_property)
            } else {
                None
            };
            moves.extend(found);
        }
    }
    moves.sort_by(|a, b| a.logical_id.cmp(&b.logical_id));
    moves
}

/// A node group that leaves `from` and is in another stack of `new` under
/// the same logical ID.
fn moved_group(
    new: &[(String, Template)],
    from: &str,
    id: &str,
    resource: &Resource,
    name_property: &str,
) -> Option<Move> {
    let stays = new
        .iter()
        .any(|(name, t)| name == from && t.resources.contains_key(id));
    if stays {
        return None;
    }
    let (to, moved) = new.iter().find_map(|(name, t)| {
        let moved = t.resources.get(id)?;
        (name != from && moved.kind == resource.kind).then_some((name, moved))
    })?;
    let fixed = |r: &Resource| match r.properties.get(name_property) {
        Some(Expr::String(name)) => Some(name.clone()),
        _ => None,
    };
    let fixed_name = match (fixed(resource), fixed(moved)) {
        (Some(a), Some(b)) if a == b => Some((name_property.to_string(), b)),
        _ => None,
    };
    Some(Move {
        logical_id: id.to_string(),
        renamed_from: None,
        resource_type: resource.kind.clone(),
        from: from.to_string(),
        to: to.clone(),
        fixed_name,
    })
}

/// A role's access that leaves `from` and is granted, under any logical
/// ID, by another stack of `new`. Only a role the stack does not create
/// (an existing one, named by its ARN) is the same role in both stacks: a
/// `Fn::GetAtt` of a role in each stack names two roles.
fn moved_access(
    new: &[(String, Template)],
    (from, before): (&str, &Template),
    id: &str,
    resource: &Resource,
    key_property: &str,
) -> Option<Move> {
    let role = resource.properties.get(key_property)?;
    if role
        .references()
        .iter()
        .any(|(target, _)| before.resources.contains_key(*target))
    {
        return None;
    }
    let grants = |t: &Template| -> Option<String> {
        t.resources
            .iter()
            .find(|(_, r)| r.kind == resource.kind && r.properties.get(key_property) == Some(role))
            .map(|(id, _)| id.clone())
    };
    let stays = new
        .iter()
        .any(|(name, t)| name == from && grants(t).is_some());
    if stays {
        return None;
    }
    let (to, new_id) = new
        .iter()
        .find_map(|(name, t)| (name != from).then(|| grants(t).map(|id| (name, id)))?)?;
    Some(Move {
        renamed_from: (new_id != id).then(|| id.to_string()),
        logical_id: new_id,
        resource_type: resource.kind.clone(),
        from: from.to_string(),
        to: to.clone(),
        fixed_name: Some((key_property.to_string(), super::render::compact(role))),
    })
}

/// The property that names a node group in its service, for the types
/// whose removal loses nodes.
fn group_name_property(kind: &str) -> Option<&'static str> {
    match kind {
        "AWS::AutoScaling::AutoScalingGroup" | "AWS::EKS::Nodegroup" => super::name_property(kind),
        _ => None,
    }
}

/// The property that names the role a cluster access resource grants: one
/// access entry per role in EKS, one mapping per role in aws-auth.
fn access_key_property(kind: &str) -> Option<&'static str> {
    match kind {
        "AWS::EKS::AccessEntry" | "Custom::NodeAccessEntry" => Some("PrincipalArn"),
        "Custom::AwsAuth" => Some("RoleArn"),
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
                "  {mark}{}{} ({}) moves from `{}` to `{}`: {}\n",
                moved.logical_id,
                moved
                    .renamed_from
                    .as_ref()
                    .map_or_else(String::new, |old| format!(" (was {old})")),
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
/// with `logical_id`, `renamed_from`, `type`, `from`, `to`, `fixed_name`, `keeps_nodes`,
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
                "renamed_from": m.renamed_from,
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
