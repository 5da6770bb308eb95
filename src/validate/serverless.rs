//! Checks of what the SAM transform (`AWS::Serverless-2016-10-31`) reads:
//! the properties it requires of each resource type, the `Globals` section
//! and each resource's `IgnoreGlobals` attribute.
//!
//! SAM merges the properties under `Globals/<Section>` into every resource
//! of the section's type (`Function` into `AWS::Serverless::Function`...)
//! unless the resource sets the property itself or names it in
//! `IgnoreGlobals` (a list of property names, or `"*"` for all of them).

use super::Finding;
use super::catalogs;
use crate::cfn::{Expr, Template};

/// The sections of `Globals` and the resource types they apply to: each
/// section is named after its type, `AWS::Serverless::<Section>` (the SAM
/// specification's Globals section; cfn-lint 1.58.0 knows the same list).
const SECTIONS: &[&str] = &[
    "Api",
    "CapacityProvider",
    "Function",
    "HttpApi",
    "LayerVersion",
    "SimpleTable",
    "StateMachine",
    "WebSocketApi",
];

/// The `Globals` section a resource type takes properties from, if any.
fn section(kind: &str) -> Option<&'static str> {
    let name = kind.strip_prefix("AWS::Serverless::")?;
    SECTIONS.iter().copied().find(|section| *section == name)
}

/// The properties the SAM transform requires of each resource type
/// (`property_types` entries marked required in `samtranslator/model/
/// sam_resources.py` of aws-sam-translator 1.110.0); without one it refuses
/// the whole template.
const REQUIRED: &[(&str, &[&str])] = &[
    ("AWS::Serverless::Api", &["StageName"]),
    ("AWS::Serverless::Application", &["Location"]),
    ("AWS::Serverless::CapacityProvider", &["VpcConfig"]),
    (
        "AWS::Serverless::Connector",
        &["Source", "Destination", "Permissions"],
    ),
    ("AWS::Serverless::GraphQLApi", &["Auth"]),
    ("AWS::Serverless::LayerVersion", &["ContentUri"]),
    (
        "AWS::Serverless::WebSocketApi",
        &["Routes", "RouteSelectionExpression"],
    ),
];

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    required(template, findings);
    if template.globals.is_empty() {
        return;
    }
    ignored_globals(template, findings);
    global_runtime(template, findings);
}

/// Resources without a property SAM requires, set neither by the resource
/// nor by its type's section of `Globals`.
fn required(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let Some((_, names)) = REQUIRED.iter().find(|(kind, _)| *kind == resource.kind) else {
            continue;
        };
        let globals =
            section(&resource.kind).and_then(|section| match template.globals.get(section) {
                Some(Expr::Map(globals)) => Some(globals),
                _ => None,
            });
        for name in *names {
            let global = globals.is_some_and(|g| g.contains_key(*name)) && inherits(resource, name);
            if resource.properties.contains_key(*name) || global {
                continue;
            }
            findings.push(
                Finding::new(
                    "E2013",
                    format!("Resources/{id}"),
                    format!(
                        "`{}` without `{name}`, which the SAM transform requires",
                        resource.kind
                    ),
                )
                .help(format!("set `{name}` in the resource's `Properties`")),
            );
        }
    }
}

/// Whether a resource takes the global property `name` (it neither sets
/// it nor ignores it).
fn inherits(resource: &crate::cfn::Resource, name: &str) -> bool {
    if resource.properties.contains_key(name) {
        return false;
    }
    match &resource.ignore_globals {
        Some(Expr::String(all)) => all != "*",
        Some(Expr::List(names)) => !names
            .iter()
            .any(|entry| matches!(entry, Expr::String(entry) if entry == name)),
        // An intrinsic: what it ignores is not known.
        Some(_) => false,
        None => true,
    }
}

/// `IgnoreGlobals` entries naming a property the resource type's section
/// of `Globals` does not set: SAM refuses them (a misspelt name would
/// otherwise leave the global applied).
fn ignored_globals(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let Some(Expr::List(entries)) = &resource.ignore_globals else {
            continue;
        };
        let Some(section) = section(&resource.kind) else {
            continue;
        };
        let Some(Expr::Map(globals)) = template.globals.get(section) else {
            continue;
        };
        for (index, entry) in entries.iter().enumerate() {
            let Expr::String(name) = entry else {
                continue;
            };
            if globals.contains_key(name) {
                continue;
            }
            let known: Vec<String> = globals.keys().map(|key| format!("`{key}`")).collect();
            let names: Vec<&str> = globals.keys().map(String::as_str).collect();
            findings.push(
                Finding::new(
                    "E2011",
                    format!("Resources/{id}/IgnoreGlobals/{index}"),
                    format!(
                        "`IgnoreGlobals` names \"{name}\", which `Globals/{section}` does not set"
                    ),
                )
                .help(match crate::suggest::closest(name, &names) {
                    Some(near) => format!("did you mean \"{near}\"?"),
                    None => format!("`Globals/{section}` sets {}", known.join(", ")),
                }),
            );
        }
    }
}

/// A deprecated or blocked runtime in `Globals/Function`, when a function
/// takes it.
fn global_runtime(template: &Template, findings: &mut Vec<Finding>) {
    let Some(Expr::Map(globals)) = template.globals.get("Function") else {
        return;
    };
    let Some(Expr::String(runtime)) = globals.get("Runtime") else {
        return;
    };
    let taken = template.resources.values().any(|resource| {
        resource.kind == "AWS::Serverless::Function" && inherits(resource, "Runtime")
    });
    if taken
        && let Some(finding) = catalogs::runtime_finding(
            runtime,
            &catalogs::today(),
            "Globals/Function/Runtime".to_string(),
        )
    {
        findings.push(finding);
    }
}
