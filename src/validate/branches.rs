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

use serde_json::Value;

use super::SchemaSet;
use super::schema::{SchemaError, sorted, unescape};

/// [`SchemaSet::validate`] of `properties`, and of each of its two
/// branch-resolved forms when it holds a `Fn::If`.
pub fn validate(schemas: &SchemaSet, kind: &str, properties: &Value) -> Option<Vec<SchemaError>> {
    let mut errors = schemas.validate(kind, properties)?;
    if !has_if(properties) {
        return Some(errors);
    }
    for branch in [1, 2] {
        let resolved = resolve(properties, branch);
        for mut error in schemas.validate(kind, &resolved).unwrap_or_default() {
            error.pointer = original_pointer(properties, &error.pointer, branch);
            errors.push(error);
        }
    }
    Some(sorted(errors))
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

pub(super) fn has_if(value: &Value) -> bool {
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
pub(super) fn resolve(value: &Value, branch: usize) -> Value {
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
pub(super) fn original_pointer(original: &Value, pointer: &str, branch: usize) -> String {
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
