//! References: every `Ref`, `Fn::GetAtt`, `Fn::Sub` variable, `DependsOn`
//! and condition name resolves, `Fn::GetAtt` names a real attribute, and no
//! resources depend on each other in a cycle.

use std::collections::{BTreeMap, BTreeSet};

use super::{Finding, SchemaSet, walk_resource};
use crate::cfn::sub::references as sub_references;
use crate::cfn::{Expr, Pseudo, Template};

pub fn check(template: &Template, schemas: &SchemaSet, findings: &mut Vec<Finding>) {
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (id, resource) in &template.resources {
        let depends = edges.entry(id.as_str()).or_default();
        for (index, target) in resource.depends_on.iter().enumerate() {
            if template.resources.contains_key(target) {
                depends.insert(target.clone());
            } else if !made_by_module(template, target) {
                findings.push(
                    Finding::new(
                        "E2005",
                        format!("Resources/{id}/DependsOn/{index}"),
                        format!(
                            "`DependsOn` names `{target}`, which is not a resource of this template"
                        ),
                    )
                    .help(suggest(target, template.resources.keys())),
                );
            }
        }
        for (attribute, value) in [
            ("DeletionPolicy", &resource.deletion_policy),
            ("UpdateReplacePolicy", &resource.update_replace_policy),
        ] {
            if let Some(value) = value
                && !["Delete", "Retain", "RetainExceptOnCreate", "Snapshot"]
                    .contains(&value.as_str())
            {
                findings.push(
                    Finding::new(
                        "E1007",
                        format!("Resources/{id}/{attribute}"),
                        format!("`{attribute}` cannot be `{value}`"),
                    )
                    .help("use `Delete`, `Retain`, `RetainExceptOnCreate` or `Snapshot`"),
                );
            }
        }
        if let Some(condition) = &resource.condition {
            check_condition(
                template,
                condition,
                &format!("Resources/{id}/Condition"),
                findings,
            );
        }
        walk_resource(id, resource, &mut |expr, path| {
            for target in check_expr(template, schemas, expr, path, findings) {
                if template.resources.contains_key(&target) {
                    depends.insert(target);
                }
            }
        });
    }
    for (name, output) in &template.outputs {
        let mut check = |expr: &Expr, path: &str| {
            check_expr(template, schemas, expr, path, findings);
        };
        super::walk(
            &output.value,
            &mut format!("Outputs/{name}/Value"),
            &mut check,
        );
        if let Some(export) = &output.export {
            super::walk(
                export,
                &mut format!("Outputs/{name}/Export/Name"),
                &mut check,
            );
        }
        if let Some(condition) = &output.condition {
            check_condition(
                template,
                condition,
                &format!("Outputs/{name}/Condition"),
                findings,
            );
        }
    }
    for (name, condition) in &template.conditions {
        super::walk(
            condition,
            &mut format!("Conditions/{name}"),
            &mut |expr, path| {
                // Conditions are evaluated before any resource exists.
                if let Expr::Ref(target) = expr
                    && template.resources.contains_key(target)
                {
                    findings.push(
                        Finding::new(
                            "E2001",
                            path,
                            format!("`Ref` to the resource `{target}` in a condition"),
                        )
                        .help("conditions can refer to parameters and pseudo parameters only"),
                    );
                    return;
                }
                check_expr(template, schemas, expr, path, findings);
            },
        );
    }
    if let Some(cycle) = find_cycle(&edges) {
        findings.push(
            Finding::new(
                "E2007",
                format!("Resources/{}", cycle[0]),
                format!("circular dependency: {}", cycle.join(" → ")),
            )
            .help("CloudFormation cannot create resources that wait for each other; break one of the references"),
        );
    }
}

/// Checks one value; returns the resources it refers to.
fn check_expr(
    template: &Template,
    schemas: &SchemaSet,
    expr: &Expr,
    path: &str,
    findings: &mut Vec<Finding>,
) -> Vec<String> {
    match expr {
        Expr::Ref(name) => {
            if !resolves(template, name) {
                findings.push(
                    Finding::new("E2001", path, format!("`Ref` to `{name}`, which is not a parameter, resource or pseudo parameter"))
                        .help(suggest(name, template.parameters.keys().chain(template.resources.keys()))),
                );
            }
            vec![name.clone()]
        }
        Expr::GetAtt {
            resource,
            attribute,
        } => {
            check_get_att(template, schemas, resource, attribute, path, findings);
            vec![resource.clone()]
        }
        Expr::Sub {
            template: text,
            variables,
        } => {
            let mut targets = Vec::new();
            for reference in sub_references(text) {
                // A variable of the map is the map's own value, not a
                // dependency on a resource that happens to share its name.
                if variables.contains_key(reference) {
                    continue;
                }
                if resolves(template, reference) {
                    targets.push(reference.to_string());
                    continue;
                }
                if let Some((resource, attribute)) = reference.split_once('.') {
                    check_get_att(template, schemas, resource, attribute, path, findings);
                    targets.push(resource.to_string());
                    continue;
                }
                findings.push(
                    Finding::new("E2004", path, format!("`Fn::Sub` variable `${{{reference}}}` does not resolve"))
                        .help("name a parameter, a resource, a pseudo parameter or a variable of the `Fn::Sub` map; write `${!Literal}` for a literal `${`"),
                );
            }
            targets
        }
        Expr::If { condition, .. } => {
            check_condition(template, condition, path, findings);
            Vec::new()
        }
        Expr::Condition(condition) => {
            check_condition(template, condition, path, findings);
            Vec::new()
        }
        Expr::FindInMap { map, .. } => {
            if !template.mappings.contains_key(map) {
                findings.push(
                    Finding::new(
                        "E2008",
                        path,
                        format!(
                            "`Fn::FindInMap` of `{map}`, which is not a mapping of this template"
                        ),
                    )
                    .help(suggest(map, template.mappings.keys())),
                );
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn resolves(template: &Template, name: &str) -> bool {
    template.parameters.contains_key(name)
        || template.resources.contains_key(name)
        || Pseudo::from_name(name).is_some()
        || made_by_module(template, name)
}

/// Whether `name` can be a resource a module of the template makes: a
/// module's resources are named with the module's logical ID in front.
fn made_by_module(template: &Template, name: &str) -> bool {
    template.resources.iter().any(|(id, resource)| {
        super::is_module(&resource.kind) && name.len() > id.len() && name.starts_with(id.as_str())
    })
}

fn check_get_att(
    template: &Template,
    schemas: &SchemaSet,
    resource: &str,
    attribute: &str,
    path: &str,
    findings: &mut Vec<Finding>,
) {
    let Some(target) = template.resources.get(resource) else {
        if made_by_module(template, resource) {
            return;
        }
        findings.push(
            Finding::new(
                "E2002",
                path,
                format!("`Fn::GetAtt` of `{resource}`, which is not a resource of this template"),
            )
            .help(suggest(resource, template.resources.keys())),
        );
        return;
    };
    // Custom resources, stacks and provisioned products return whatever
    // attributes they define.
    let open = target.kind.starts_with("Custom::")
        || target.kind == "AWS::CloudFormation::CustomResource"
        || (target.kind == "AWS::CloudFormation::Stack"
            || target.kind == "AWS::ServiceCatalog::CloudFormationProvisionedProduct")
            && attribute.starts_with("Outputs.");
    if open {
        return;
    }
    let Some(attributes) = schemas.attributes(&target.kind) else {
        return;
    };
    if !attributes.iter().any(|a| a == attribute) {
        let names: Vec<&str> = attributes.iter().map(String::as_str).collect();
        let listed = crate::suggest::listed(&names);
        let help = if listed.is_empty() {
            "this type has no attributes".to_string()
        } else {
            format!("its attributes are {listed}")
        };
        findings.push(
            Finding::new(
                "E2003",
                path,
                format!("`{}` has no attribute `{attribute}`", target.kind),
            )
            .help(help),
        );
    }
}

fn check_condition(template: &Template, condition: &str, path: &str, findings: &mut Vec<Finding>) {
    if !template.conditions.contains_key(condition) {
        findings.push(
            Finding::new(
                "E2006",
                path,
                format!("condition `{condition}` is not defined"),
            )
            .help(suggest(condition, template.conditions.keys())),
        );
    }
}

/// "did you mean" for a name among `candidates`, or a general hint.
fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a String>) -> String {
    let candidates: Vec<&str> = candidates.map(String::as_str).collect();
    match crate::suggest::closest(name, &candidates) {
        Some(best) => format!("did you mean `{best}`?"),
        None => "check the spelling, or declare it".to_string(),
    }
}

/// A dependency cycle among resources, as the resources on it, first
/// repeated at the end; `None` when the graph is acyclic.
fn find_cycle(edges: &BTreeMap<&str, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Visiting,
        Done,
    }
    let mut state: BTreeMap<&str, State> = BTreeMap::new();
    // Iterative depth-first search, so that a long chain cannot overflow
    // the stack.
    for &start in edges.keys() {
        if state.contains_key(start) {
            continue;
        }
        let mut stack: Vec<(&str, Vec<&str>)> = vec![(start, next(edges, start))];
        state.insert(start, State::Visiting);
        while let Some((node, pending)) = stack.last_mut() {
            let node = *node;
            match pending.pop() {
                Some(target) => match state.get(target) {
                    Some(State::Visiting) => {
                        let from = stack.iter().position(|(n, _)| *n == target).unwrap_or(0);
                        let mut cycle: Vec<String> =
                            stack[from..].iter().map(|(n, _)| n.to_string()).collect();
                        cycle.push(target.to_string());
                        return Some(cycle);
                    }
                    Some(State::Done) => {}
                    None => {
                        state.insert(target, State::Visiting);
                        stack.push((target, next(edges, target)));
                    }
                },
                None => {
                    state.insert(node, State::Done);
                    stack.pop();
                }
            }
        }
    }
    None
}

fn next<'a>(edges: &'a BTreeMap<&str, BTreeSet<String>>, node: &str) -> Vec<&'a str> {
    let mut targets: Vec<&str> = edges
        .get(node)
        .map(|t| t.iter().map(String::as_str).collect())
        .unwrap_or_default();
    targets.reverse();
    targets
}
