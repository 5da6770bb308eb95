//! The user's Bottlerocket settings (`bottlerocket.settings`) as TOML:
//! keys, values, and the tables of a settings tree, each written once, in
//! the tree's order, for the Bottlerocket user-data template.

use serde_json::Value;

use super::quote::toml_quote;

/// A setting with no value: TOML has no null. The loader refuses one, so
/// this is said only when that check is missed.
#[derive(Debug)]
pub(super) struct NullSetting;

/// A TOML key: bare when it can be, quoted otherwise.
pub(super) fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        key.to_string()
    } else {
        toml_quote(key)
    }
}

/// A TOML value; tables inside lists are written inline.
pub(super) fn toml_value(value: &Value) -> Result<String, NullSetting> {
    Ok(match value {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_f64() => {
            // A float keeps its point, so that TOML reads a float back.
            let x = n.as_f64().unwrap_or_default();
            let text = format!("{x:?}");
            if text.contains(['.', 'e', 'E']) {
                text
            } else {
                format!("{text}.0")
            }
        }
        Value::Number(n) => n.to_string(),
        Value::String(s) => toml_quote(s),
        Value::Array(items) => {
            let items: Result<Vec<String>, NullSetting> = items.iter().map(toml_value).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(map) => {
            let entries: Result<Vec<String>, NullSetting> = map
                .iter()
                .map(|(k, v)| Ok(format!("{} = {}", toml_key(k), toml_value(v)?)))
                .collect();
            format!("{{ {} }}", entries?.join(", "))
        }
        Value::Null => return Err(NullSetting),
    })
}

/// One table of user settings at `path` (under `settings`), and the tables
/// inside it after it: a header is written only for a table with values.
pub(super) fn flatten_settings(
    path: String,
    table: &serde_json::Map<String, Value>,
    out: &mut Vec<(String, Vec<(String, String)>)>,
) -> Result<(), NullSetting> {
    let mut leaves = Vec::new();
    let mut inner = Vec::new();
    for (key, value) in table {
        match value {
            Value::Object(map) => inner.push((format!("{path}.{}", toml_key(key)), map)),
            value => leaves.push((toml_key(key), toml_value(value)?)),
        }
    }
    if !leaves.is_empty() {
        out.push((path, leaves));
    }
    for (path, map) in inner {
        flatten_settings(path, map, out)?;
    }
    Ok(())
}
