//! DynamoDB tables: `AttributeDefinitions` must define exactly the
//! attributes the table's and its indexes' key schemas use (CloudFormation
//! refuses both an undefined key attribute and a defined attribute no key
//! uses).

use super::Finding;
use crate::cfn::{Expr, Template};

const TABLE: &str = "AWS::DynamoDB::Table";

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        if resource.kind == TABLE {
            check_table(id, &resource.properties, findings);
        }
    }
}

/// The literal `AttributeName` of each item of a list, with its path; `None`
/// when the list, an item or a name is not literal (an intrinsic may add or
/// drop any of them).
fn names(list: Option<&Expr>, path: &str) -> Option<Vec<(String, String)>> {
    let Some(list) = list else {
        return Some(Vec::new());
    };
    let Expr::List(items) = list else {
        return None;
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Expr::Map(item) = item else {
            return None;
        };
        match item.get("AttributeName") {
            Some(Expr::String(name)) => {
                out.push((name.clone(), format!("{path}/{index}/AttributeName")));
            }
            Some(_) => return None,
            None => {}
        }
    }
    Some(out)
}

fn check_table(
    id: &str,
    properties: &indexmap::IndexMap<String, Expr>,
    findings: &mut Vec<Finding>,
) {
    let base = format!("Resources/{id}/Properties");
    let Some(defined) = names(
        properties.get("AttributeDefinitions"),
        &format!("{base}/AttributeDefinitions"),
    ) else {
        return;
    };
    let Some(mut used) = names(properties.get("KeySchema"), &format!("{base}/KeySchema")) else {
        return;
    };
    for section in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        let Some(indexes) = properties.get(section) else {
            continue;
        };
        let Expr::List(indexes) = indexes else {
            return;
        };
        for (index, entry) in indexes.iter().enumerate() {
            let Expr::Map(entry) = entry else {
                return;
            };
            let path = format!("{base}/{section}/{index}/KeySchema");
            let Some(keys) = names(entry.get("KeySchema"), &path) else {
                return;
            };
            used.extend(keys);
        }
    }
    // One finding per missing attribute, at its first use.
    let mut reported: Vec<&str> = Vec::new();
    for (name, path) in &used {
        if !defined.iter().any(|(known, _)| known == name) && !reported.contains(&name.as_str()) {
            reported.push(name);
            findings.push(
                Finding::new(
                    "E7009",
                    path,
                    format!("key attribute `{name}` is not in `AttributeDefinitions`"),
                )
                .help("define every key attribute, with its type, in `AttributeDefinitions`"),
            );
        }
    }
    for (name, path) in &defined {
        if !used.iter().any(|(key, _)| key == name) {
            findings.push(
                Finding::new(
                    "E7009",
                    path,
                    format!("attribute `{name}` is defined, but no key schema of the table or its indexes uses it"),
                )
                .help("`AttributeDefinitions` lists key attributes only; DynamoDB refuses any other (items need no schema for their other attributes)"),
            );
        }
    }
}
