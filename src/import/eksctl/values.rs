//! Reading the values of an eksctl file: scalars as text or numbers, the
//! names eksynth gives to what eksctl names, and a copy of any value as a
//! blueprint value.

use crate::import::out::{Out, OutValue};
use crate::syntax::{Node, Value};

/// A scalar as text (`3` and `true` included), or `None` for a collection.
pub fn text(node: &Node) -> Option<String> {
    match &node.value {
        Value::String(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Seq(_) | Value::Map(_) => None,
    }
}

pub fn int(node: &Node) -> Option<i64> {
    match &node.value {
        Value::Int(i) => Some(*i),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub fn boolean(node: &Node) -> Option<bool> {
    match &node.value {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

pub fn strings(node: &Node) -> Vec<String> {
    node.as_seq()
        .map(|items| items.iter().filter_map(text).collect())
        .unwrap_or_default()
}

/// The value as written, as a blueprint value (scalars keep their type).
pub fn copy(node: &Node) -> Out {
    match &node.value {
        Value::Null => Out::raw("null"),
        Value::Bool(b) => Out::bool(*b),
        Value::Int(i) => Out::int(*i),
        Value::Float(f) => Out::raw(&f.to_string()),
        Value::String(s) => Out::str(s),
        Value::Seq(items) => Out::seq(items.iter().map(copy).collect()),
        Value::Map(entries) => {
            let mut map = Out::map();
            for (key, value) in entries {
                map.set(&key.name, copy(value));
            }
            map
        }
    }
}

/// A scalar copied as text, e.g. a price written as a number.
pub fn copy_text(node: &Node) -> Out {
    match text(node) {
        Some(t) => Out::str(&t),
        None => copy(node),
    }
}

/// `arn:aws:` (and the other literal partitions) written as
/// `arn:${AWS::Partition}:`, which eksynth requires so that one template
/// deploys in every partition.
pub fn partition_free(arn: &str) -> String {
    for partition in ["aws", "aws-cn", "aws-us-gov"] {
        if let Some(rest) = arn.strip_prefix(&format!("arn:{partition}:")) {
            return format!("arn:${{AWS::Partition}}:{rest}");
        }
    }
    arn.to_string()
}

/// Every string below `out` with its literal partition replaced.
pub fn partition_free_tree(out: &mut Out) {
    match &mut out.value {
        OutValue::Str(text) => *text = partition_free(text),
        OutValue::Raw(_) => {}
        OutValue::Map(entries) => entries.iter_mut().for_each(|(_, v)| partition_free_tree(v)),
        OutValue::Seq(items) => items.iter_mut().for_each(partition_free_tree),
    }
}

/// A CloudFormation-safe name made of the words of `text`
/// (`us-west-2a` → `UsWest2a`).
pub fn pascal(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// An eksctl node group name as an eksynth group name: letters, digits and
/// single dashes, starting with a letter, at most 63 characters.
pub fn group_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
    }
    let mut out = out.trim_end_matches('-').to_string();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out = format!("ng-{out}").trim_end_matches('-').to_string();
    }
    out.chars()
        .take(63)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eksctl_names_become_group_names() {
        assert_eq!(group_name("ng-1"), "ng-1");
        assert_eq!(
            group_name("1-gpu-spot-g5-xlarge"),
            "ng-1-gpu-spot-g5-xlarge"
        );
        assert_eq!(group_name("a_b--c"), "a-b-c");
    }

    #[test]
    fn literal_partitions_become_the_pseudo_parameter() {
        assert_eq!(
            partition_free("arn:aws:iam::aws:policy/X"),
            "arn:${AWS::Partition}:iam::aws:policy/X"
        );
        assert_eq!(
            partition_free("arn:aws-cn:s3:::b"),
            "arn:${AWS::Partition}:s3:::b"
        );
        assert_eq!(pascal("us-west-2a"), "UsWest2a");
    }
}
