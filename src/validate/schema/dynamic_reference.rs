//! Dynamic references (`{{resolve:ssm:/path}}`,
//! `{{resolve:secretsmanager:...}}`): CloudFormation replaces them with the
//! referenced value before the resource sees its properties, so a string
//! holding one says nothing about the final value's pattern, length or
//! type. It is validated like an intrinsic function: not at all.

use serde_json::Value;

/// `properties` with every string that holds a dynamic reference replaced
/// by an intrinsic, or `None` when there is none (the common case, which
/// costs one scan and no copy).
pub(super) fn masked(properties: &Value) -> Option<Value> {
    if !holds_one(properties) {
        return None;
    }
    Some(mask(properties))
}

fn holds_one(value: &Value) -> bool {
    match value {
        Value::String(text) => is_dynamic_reference(text),
        Value::Array(items) => items.iter().any(holds_one),
        Value::Object(map) => map.values().any(holds_one),
        _ => false,
    }
}

fn mask(value: &Value) -> Value {
    match value {
        // Any intrinsic passes every value position of the rewritten schema.
        Value::String(text) if is_dynamic_reference(text) => {
            serde_json::json!({ "Fn::Sub": text })
        }
        Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), mask(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether the string holds `{{resolve:` followed, later, by `}}` with at
/// least one character between (cfn-lint's `{{(resolve:.+)}}`).
pub(in crate::validate) fn is_dynamic_reference(text: &str) -> bool {
    const OPEN: &str = "{{resolve:";
    // `contains` first: std answers it with a vectorised search that `find`
    // does not use, and most strings (user data included) hold none.
    text.contains(OPEN)
        && text.find(OPEN).is_some_and(|start| {
            text[start + OPEN.len()..]
                .match_indices("}}")
                .any(|(at, _)| at >= 1)
        })
}
