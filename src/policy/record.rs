//! Guard's event record, read: which rules failed, on which values, with
//! which messages. The record is the JSON of Guard's verbose report, a tree
//! of events: the file, then one event per rule, then the clauses each rule
//! evaluated, down to each value compared.

use indexmap::IndexMap;
use serde_json::Value;

/// One failed comparison of a rule: the value Guard looked at, and what the
/// rule says about it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Failure {
    pub rule: String,
    /// The template path of the value, `Resources/Id/Properties/...`; empty
    /// when Guard names none (a failed dependency on another rule).
    pub path: String,
    /// The rule's own message (`<< ... >>`), when it writes one.
    pub custom: Option<String>,
    /// The clause that failed, as Guard prints it.
    pub clause: String,
}

impl Failure {
    /// An evaluation Guard could not finish: a failure of the whole file.
    pub fn of_file(message: String) -> Failure {
        Failure {
            rule: "EVALUATION".to_string(),
            path: String::new(),
            custom: Some(format!("Guard cannot evaluate the rules: {message}")),
            clause: String::new(),
        }
    }
}

/// The events that decide nothing about the rule's outcome: its `when`
/// conditions and the filters of its queries. A value a filter passed over
/// is not one the rule judged.
const CONDITIONS: &[&str] = &["RuleCondition", "TypeCondition", "WhenCondition", "Filter"];

/// Every failed comparison of every failed rule in `record`, in Guard's
/// order.
pub(super) fn failures(record: &Value) -> Vec<Failure> {
    let mut found = Vec::new();
    for rule in children(record) {
        let Some(check) = rule.pointer("/container/RuleCheck") else {
            continue;
        };
        if check.get("status").and_then(Value::as_str) != Some("FAIL") {
            continue;
        }
        let name = check.get("name").and_then(Value::as_str).unwrap_or("");
        let before = found.len();
        collect(rule, name, &mut found);
        // A failed rule is a finding even when no single comparison in its
        // record says why.
        if found.len() == before {
            found.push(Failure {
                rule: name.to_string(),
                path: String::new(),
                custom: None,
                clause: name.to_string(),
            });
        }
    }
    found
}

/// The children of an event.
fn children(event: &Value) -> &[Value] {
    event
        .get("children")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Adds the failed comparisons below `event` to `found`.
fn collect(event: &Value, rule: &str, found: &mut Vec<Failure>) {
    let container = event.get("container");
    if let Some(Value::Object(kind)) = container
        && kind.keys().any(|key| CONDITIONS.contains(&key.as_str()))
    {
        return;
    }
    if let Some(check) = container.and_then(|c| c.get("ClauseValueCheck")) {
        if let Some(failure) = failed_clause(check, rule, event) {
            found.push(failure);
        }
        return;
    }
    for child in children(event) {
        collect(child, rule, found);
    }
}

/// The failure a clause's check records, if it failed: every kind of check
/// (a comparison, `IN`, a unary check such as `exists`, an empty query, a
/// rule it depends on) is one variant holding a `status`.
fn failed_clause(check: &Value, rule: &str, event: &Value) -> Option<Failure> {
    let Value::Object(variants) = check else {
        return None;
    };
    let (_, detail) = variants.iter().next()?;
    // A unary check keeps its outcome one level down.
    let outcome = detail
        .get("value")
        .filter(|v| v.is_object())
        .unwrap_or(detail);
    let status = outcome
        .get("status")
        .or_else(|| detail.get("status"))
        .and_then(Value::as_str);
    // An empty query (`NoValueForEmptyCheck`) is a failure by itself.
    if status.is_some_and(|s| s != "FAIL") {
        return None;
    }
    // An empty query's check holds its custom message alone.
    let custom = detail
        .as_str()
        .or_else(|| outcome.get("custom_message").and_then(Value::as_str))
        .or_else(|| detail.get("custom_message").and_then(Value::as_str))
        .filter(|m| !m.trim().is_empty())
        .map(str::to_string);
    let path = outcome.get("from").and_then(first_path).unwrap_or_default();
    let clause = event
        .get("context")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    Some(Failure {
        rule: rule.to_string(),
        path: path.trim_start_matches('/').to_string(),
        custom,
        clause,
    })
}

/// The first path a query result names: a resolved value's, or for a query
/// that stopped short, the value it reached.
fn first_path(result: &Value) -> Option<String> {
    match result {
        Value::Object(entries) => {
            if let Some(Value::String(path)) = entries.get("path") {
                return Some(path.clone());
            }
            entries.values().find_map(first_path)
        }
        _ => None,
    }
}

/// One failure for each rule and resource (or top-level section): at the
/// deepest path the resource's failed values share, with the first custom
/// message among them. A rule that requires a tag fails on every other tag
/// of a list; the finding is about the list.
pub(super) fn group(failures: Vec<Failure>) -> Vec<Failure> {
    let mut groups: IndexMap<(String, String), Failure> = IndexMap::new();
    for failure in failures {
        let key = (failure.rule.clone(), subject(&failure.path).to_string());
        match groups.get_mut(&key) {
            Some(grouped) => {
                grouped.path = shared_prefix(&grouped.path, &failure.path);
                if grouped.custom.is_none() {
                    grouped.custom = failure.custom;
                }
            }
            None => {
                groups.insert(key, failure);
            }
        }
    }
    groups.into_values().collect()
}

/// What a path is about: `Resources/Id`, or the top-level section.
fn subject(path: &str) -> &str {
    let mut ends = path.match_indices('/').map(|(at, _)| at);
    let first = ends.next();
    match (path.starts_with("Resources/"), first, ends.next()) {
        (true, _, Some(second)) => &path[..second],
        (_, Some(first), _) => &path[..first],
        _ => path,
    }
}

/// The segments two paths share from their start.
fn shared_prefix(a: &str, b: &str) -> String {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(path: &str, custom: Option<&str>) -> Failure {
        Failure {
            rule: "R".into(),
            path: path.into(),
            custom: custom.map(str::to_string),
            clause: "c".into(),
        }
    }

    #[test]
    fn failures_of_one_resource_meet_at_the_path_they_share() {
        let grouped = group(vec![
            failure("Resources/Asg/Properties/Tags/0/Key", None),
            failure("Resources/Asg/Properties/Tags/1/Key", Some("m")),
            failure("Resources/Other/Properties/Tags/0/Key", None),
        ]);
        let paths: Vec<(&str, Option<&str>)> = grouped
            .iter()
            .map(|f| (f.path.as_str(), f.custom.as_deref()))
            .collect();
        assert_eq!(
            paths,
            [
                ("Resources/Asg/Properties/Tags", Some("m")),
                ("Resources/Other/Properties/Tags/0/Key", None)
            ]
        );
    }

    #[test]
    fn a_condition_or_filter_that_fails_is_not_a_failure_of_the_rule() {
        let record = serde_json::json!({
            "container": {"FileCheck": {"name": "t", "status": "FAIL"}},
            "children": [{
                "container": {"RuleCheck": {"name": "R", "status": "FAIL"}},
                "children": [
                    {"container": {"Filter": "FAIL"}, "children": [{
                        "context": "Type == x",
                        "container": {"ClauseValueCheck": {"Comparison": {
                            "status": "FAIL", "from": {"Resolved": {"path": "/Resources/A/Type"}}}}}
                    }]},
                    {"context": " MaxSize <= 10 ", "container": {"ClauseValueCheck": {"Comparison": {
                        "status": "FAIL", "custom_message": null,
                        "from": {"Resolved": {"path": "/Resources/B/Properties/MaxSize"}}}}}}
                ]
            }]
        });
        assert_eq!(
            failures(&record),
            [Failure {
                rule: "R".into(),
                path: "Resources/B/Properties/MaxSize".into(),
                custom: None,
                clause: "MaxSize <= 10".into(),
            }]
        );
    }
}
