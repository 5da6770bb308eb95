//! The stacks: `stack` names the main one, `stacks` places node group
//! entries in others (`perGroup`, or named lists).

use std::collections::HashMap;

use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// The main stack: named by `stack`, or after the blueprint file.
/// `stacks` in the JSON Schema: `perGroup`, or stack names mapped to
/// lists of group names.
pub(super) fn stacks_schema(doc: &str) -> serde_json::Value {
    serde_json::json!({
        "description": doc,
        "oneOf": [
            {"const": "perGroup"},
            {
                "type": "object",
                "propertyNames": {"pattern": "^[A-Za-z][-A-Za-z0-9]*$", "maxLength": 128},
                "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            }
        ]
    })
}

pub(super) fn decode_main_stack(
    d: &mut Decoder,
    node: Option<&Node>,
    groups_at: Span,
) -> StackSpec {
    if let Some(name) = node.and_then(|node| d.string("stack", node)) {
        check_stack_name(d, &name);
        return StackSpec {
            name: name.value,
            span: name.span,
            named: true,
        };
    }
    StackSpec {
        name: default_stack_name(&d.files[0].name),
        span: groups_at,
        named: false,
    }
}

fn check_stack_name(d: &mut Decoder, name: &Located<String>) -> bool {
    if is_valid_stack_name(&name.value) {
        return true;
    }
    let message = format!("`{}` is not a valid stack name", name.value);
    let diagnostic = d.error(name.span, message);
    diagnostic.label = Some("expected a stack name".into());
    diagnostic.help = Some(
        "a stack name starts with a letter and holds only letters, digits and dashes, at most 128 characters".into(),
    );
    false
}

/// How node groups are placed in stacks, as `stacks` says.
pub(super) enum Placement {
    /// Everything in the main stack.
    Single,
    /// Each node group (each `perAz` group with all its subnets) in a stack
    /// of its own, named `{main}-{group}`.
    PerGroup,
    /// Named stacks, each with the node groups listed.
    Named(Vec<(Located<String>, Vec<Located<String>>)>),
}

pub(super) fn decode_placement(d: &mut Decoder, node: &Node) -> Placement {
    const EXPECTED: &str = "`perGroup` or a mapping of stack names to lists of node group names";
    match &node.value {
        Value::String(_) => match d.choice("stacks", node, &[("perGroup", ())]) {
            Some(_) => Placement::PerGroup,
            None => Placement::Single,
        },
        Value::Map(entries) => Placement::Named(
            entries
                .iter()
                .map(|(key, value)| {
                    let field = format!("stacks.{}", key.name);
                    let groups = if value.as_seq().is_some() {
                        d.string_list(&field, value)
                    } else {
                        d.wrong_type(&field, value, "a list of node group names");
                        None
                    };
                    let empty = groups.as_ref().is_some_and(Vec::is_empty);
                    let groups = groups.unwrap_or_default();
                    if empty {
                        let message = format!("stack `{}` has no node group", key.name);
                        d.error(value.span, message).help =
                            Some("list the names of the node groups it holds, or remove it".into());
                    }
                    (Located::new(key.name.clone(), key.span), groups)
                })
                .collect(),
        ),
        _ => {
            d.wrong_type("stacks", node, EXPECTED);
            Placement::Single
        }
    }
}

/// The stacks of a blueprint and which stack each node group entry is in.
pub(super) struct Stacks {
    pub(super) specs: Vec<StackSpec>,
    /// Node group entry name → its stack's index and where it is placed;
    /// entries not here are in the main stack.
    pub(super) placed: HashMap<String, (usize, Span)>,
}

impl Stacks {
    pub(super) fn index_of(&self, entry: &str) -> usize {
        self.placed.get(entry).map_or(0, |(index, _)| *index)
    }
}

/// Checks `stacks` against the node group entries and names every stack.
pub(super) fn plan_stacks(
    d: &mut Decoder,
    main: StackSpec,
    placement: &Placement,
    entries: &[Located<String>],
) -> Stacks {
    let mut stacks = Stacks {
        specs: vec![main],
        placed: HashMap::new(),
    };
    let add = |d: &mut Decoder, stacks: &mut Stacks, spec: StackSpec| -> Option<usize> {
        if let Some(first) = stacks.specs.iter().find(|s| s.name == spec.name) {
            let message = format!("two stacks are named `{}`", spec.name);
            let help = if first.named {
                format!(
                    "the other is declared at line {}; every stack needs its own name",
                    first.span.line
                )
            } else {
                "the main stack is named after the blueprint file; set `stack:` to another name, or rename this one".to_string()
            };
            d.error(spec.span, message).help = Some(help);
            return None;
        }
        stacks.specs.push(spec);
        Some(stacks.specs.len() - 1)
    };
    match placement {
        Placement::Single => {}
        Placement::PerGroup => {
            let main_name = stacks.specs[0].name.clone();
            for entry in entries {
                if stacks.placed.contains_key(&entry.value) {
                    continue; // a group defined twice, reported with the groups
                }
                let name = format!("{main_name}-{}", entry.value);
                if name.chars().count() > 128 {
                    let message = format!(
                        "the stack of node group `{}` would be named `{name}`, longer than 128 characters",
                        entry.value
                    );
                    d.error(entry.span, message).help =
                        Some("shorten `stack:` or the group's name".into());
                    continue;
                }
                let spec = StackSpec {
                    name,
                    span: entry.span,
                    named: false,
                };
                if let Some(index) = add(d, &mut stacks, spec) {
                    stacks
                        .placed
                        .insert(entry.value.clone(), (index, entry.span));
                }
            }
        }
        Placement::Named(named) => {
            let known: Vec<&str> = entries.iter().map(|e| e.value.as_str()).collect();
            for (stack, groups) in named {
                if !check_stack_name(d, stack) {
                    continue;
                }
                let spec = StackSpec {
                    name: stack.value.clone(),
                    span: stack.span,
                    named: true,
                };
                let Some(index) = add(d, &mut stacks, spec) else {
                    continue;
                };
                for group in groups {
                    if let Some((other, at)) = stacks.placed.get(&group.value) {
                        let other = &stacks.specs[*other].name;
                        let message = format!(
                            "node group `{}` is placed in two stacks, `{other}` and `{}`",
                            group.value, stack.value
                        );
                        let help = format!(
                            "it is listed for `{other}` at line {}; a node group lives in one stack",
                            at.line
                        );
                        d.error(group.span, message).help = Some(help);
                        continue;
                    }
                    if !known.contains(&group.value.as_str()) {
                        let message = format!(
                            "stack `{}` lists `{}`, which is not a node group",
                            stack.value, group.value
                        );
                        let diagnostic = d.error(group.span, message);
                        diagnostic.help = Some(crate::suggest::did_you_mean_or_list(
                            &group.value,
                            &known,
                            "the node groups are",
                        ));
                        continue;
                    }
                    stacks
                        .placed
                        .insert(group.value.clone(), (index, group.span));
                }
            }
        }
    }
    stacks
}
