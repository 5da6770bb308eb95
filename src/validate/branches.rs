//! The values inside `Fn::If` branches, validated against the provider
//! schema like values written in their place.
//!
//! The schema rewrite lets every intrinsic pass wherever a value goes, so
//! `VolumeType: !If [Big, gp9, gp3]` would pass as a whole. Here each
//! resource whose properties hold a `Fn::If` is validated twice more: once
//! with every `Fn::If` replaced by its first branch, once by its second (a
//! branch that is `Ref: AWS::NoValue` leaves its `Fn::If` in place, which
//! passes as before). Errors keep the path of the branch they are in
//! (`.../VolumeType/Fn::If/1`).

use std::borrow::Cow;

use serde_json::Value;

use super::SchemaSet;
use super::schema::{SchemaError, sorted, unescape};

/// [`SchemaSet::validate`] of `properties`, and of each of its two
/// branch-resolved forms when it holds a `Fn::If`.
pub fn validate(schemas: &SchemaSet, kind: &str, properties: &Value) -> Option<Vec<SchemaError>> {
    let mut errors = schemas.validate(kind, properties)?;
    let variants = variants(properties);
    if variants.len() == 1 {
        return Some(errors);
    }
    for (branch, variant) in variants.into_iter().skip(1) {
        for mut error in schemas.validate(kind, &variant).unwrap_or_default() {
            error.pointer = written_pointer(properties, &error.pointer, branch);
            errors.push(error);
        }
    }
    Some(sorted(errors))
}

/// `properties` as written, then, when it holds a `Fn::If`, with every
/// `Fn::If` replaced by its first branch and by its second: each with the
/// branch it took, for [`written_pointer`]. A check that lets intrinsics
/// pass judges the values of both branches this way; a finding outside any
/// `Fn::If` comes out of all three alike, and the findings are merged.
pub(super) fn variants(properties: &Value) -> Vec<(Option<usize>, Cow<'_, Value>)> {
    let mut variants = vec![(None, Cow::Borrowed(properties))];
    if has_if(properties) {
        variants
            .extend([1, 2].map(|branch| (Some(branch), Cow::Owned(resolve(properties, branch)))));
    }
    variants
}

/// Where `pointer`, in the variant of `properties` that took `branch`, is
/// in `properties` as written.
pub(super) fn written_pointer(properties: &Value, pointer: &str, branch: Option<usize>) -> String {
    match branch {
        Some(branch) => original_pointer(properties, pointer, branch),
        None => pointer.to_string(),
    }
}

/// The branch of a `{"Fn::If": [condition, then, else]}` object, unless it
/// is `Ref: AWS::NoValue`.
fn branch_of(value: &Value, branch: usize) -> Option<&Value> {
    let object = value.as_object().filter(|o| o.len() == 1)?;
    let arguments = object.get("Fn::If")?.as_array().filter(|a| a.len() == 3)?;
    let chosen = &arguments[branch];
    let no_value = chosen
        .as_object()
        .and_then(|o| o.get("Ref"))
        .is_some_and(|r| r == "AWS::NoValue");
    (!no_value).then_some(chosen)
}

fn has_if(value: &Value) -> bool {
    match value {
        Value::Object(entries) => {
            entries.contains_key("Fn::If") && entries.len() == 1 || entries.values().any(has_if)
        }
        Value::Array(items) => items.iter().any(has_if),
        _ => false,
    }
}

/// `value` with every `Fn::If` replaced by its `branch` (1 or 2), as
/// [`branch_of`] chooses.
fn resolve(value: &Value, branch: usize) -> Value {
    if let Some(chosen) = branch_of(value, branch) {
        return resolve(chosen, branch);
    }
    match value {
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| (key.clone(), resolve(value, branch)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| resolve(v, branch)).collect()),
        other => other.clone(),
    }
}

/// The pointer of `resolve(original, branch)` at `pointer`, in
/// `original`: each `Fn::If` passed on the way adds `Fn::If/<branch>`.
fn original_pointer(original: &Value, pointer: &str, branch: usize) -> String {
    let mut out = String::new();
    let mut node = original;
    let mut segments = pointer.split('/').skip(1).peekable();
    loop {
        while let Some(chosen) = branch_of(node, branch) {
            out.push_str(&format!("/Fn::If/{branch}"));
            node = chosen;
        }
        let Some(segment) = segments.next() else {
            break;
        };
        out.push('/');
        out.push_str(segment);
        let key = unescape(segment);
        let next = match node {
            Value::Object(entries) => entries.get(&key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => {
                for rest in segments {
                    out.push('/');
                    out.push_str(rest);
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{original_pointer, resolve};

    #[test]
    fn a_resolved_pointer_leads_back_through_the_branches() {
        let original = json!({"A": {"Fn::If": ["C", [{"B": 1}], {"Ref": "AWS::NoValue"}]}});
        assert_eq!(resolve(&original, 1), json!({"A": [{"B": 1}]}));
        assert_eq!(resolve(&original, 2), original);
        assert_eq!(original_pointer(&original, "/A/0/B", 1), "/A/Fn::If/1/0/B");
    }
}
