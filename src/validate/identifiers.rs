//! Two resources of one type that would have the same primary identifier
//! (`E9009`): two roles with one `RoleName`, two groups with one
//! `AutoScalingGroupName`. The provider schema's `primaryIdentifier` says
//! which properties identify a resource; when they are set and literal,
//! the second resource cannot be created.

use std::collections::HashMap;

use super::{Finding, SchemaSet};
use crate::cfn::{Expr, Template};

pub fn check(template: &Template, schemas: &SchemaSet, findings: &mut Vec<Finding>) {
    let mut seen: HashMap<(&str, Vec<&str>), &str> = HashMap::new();
    for (id, resource) in &template.resources {
        // Resources under conditions may never exist together.
        if resource.condition.is_some() {
            continue;
        }
        let kind = resource.kind.as_str();
        let Some(names) = schemas.primary_identifier(kind) else {
            continue;
        };
        let read_only = schemas.read_only_properties(kind).unwrap_or_default();
        if names.is_empty() || names.iter().any(|name| read_only.contains(name)) {
            continue;
        }
        let values: Option<Vec<&str>> = names
            .iter()
            .map(|name| match resource.properties.get(name) {
                Some(Expr::String(value)) => Some(value.as_str()),
                _ => None,
            })
            .collect();
        let Some(values) = values else {
            continue;
        };
        match seen.get(&(kind, values.clone())) {
            Some(first) => {
                let listed = names
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(" and ");
                findings.push(
                    Finding::new(
                        "E9009",
                        format!("Resources/{id}/Properties/{}", names[0]),
                        format!("`{id}` has the same {listed} as `{first}`, another `{kind}`"),
                    )
                    .help("CloudFormation cannot create two resources with one identifier; give each its own name"),
                );
            }
            None => {
                seen.insert((kind, values), id);
            }
        }
    }
}
