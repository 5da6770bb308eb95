//! Settable properties that `Fn::GetAtt` reads too. A schema lists only its
//! read-only properties as such, but CloudFormation returns more for some
//! types: every property for a few (`AWS::SQS::Queue.QueueName`,
//! `AWS::EC2::Instance.AvailabilityZone`), named ones for others. The two
//! lists are cfn-lint's, vendored in `schemas/attributes.json`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

#[derive(serde::Deserialize, Default)]
struct Returned {
    /// Types whose every property (not below an array of objects) is an
    /// attribute.
    #[serde(rename = "everyProperty")]
    every_property: Vec<String>,
    /// Types with some settable properties as attributes, by name.
    properties: BTreeMap<String, Vec<String>>,
}

static RETURNED: LazyLock<Returned> = LazyLock::new(|| {
    // `tests/schema.rs` checks the file reads; an unreadable one would only
    // bring back the read-only properties alone.
    serde_json::from_str(include_str!("../../../schemas/attributes.json")).unwrap_or_default()
});

/// The settable properties of the type `Fn::GetAtt` may read (dotted, in
/// schema order), given its provider schema.
pub(super) fn settable_attributes(resource_type: &str, document: &Value) -> Vec<String> {
    let returned = &*RETURNED;
    if returned
        .every_property
        .iter()
        .any(|name| name == resource_type)
    {
        let mut names = Vec::new();
        if let Some(Value::Object(properties)) = document.get("properties") {
            for (name, schema) in properties {
                walk(document, schema, name.clone(), 0, &mut names);
            }
        }
        return names;
    }
    returned
        .properties
        .get(resource_type)
        .cloned()
        .unwrap_or_default()
}

/// How deep `$ref`s are followed: far more than any schema nests, and a
/// bound for the ones that refer to themselves.
const MAX_DEPTH: usize = 16;

/// Adds `path` if the value there is one `Fn::GetAtt` can return: a scalar,
/// or an array of scalars; an object's properties are added instead, and
/// arrays of objects or arrays are left out.
fn walk(document: &Value, schema: &Value, path: String, depth: usize, names: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"object") {
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, inner) in properties {
                walk(document, inner, format!("{path}.{name}"), depth + 1, names);
            }
        }
    } else if types.contains(&"array") {
        let item_type = schema.get("items").and_then(|items| items.get("type"));
        if !matches!(item_type.and_then(Value::as_str), Some("object" | "array")) {
            names.push(path);
        }
    } else if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if let Some(target) = reference
            .strip_prefix('#')
            .and_then(|pointer| document.pointer(pointer))
        {
            walk(document, target, path, depth + 1, names);
        }
    } else {
        names.push(path);
    }
}
