//! The shape of intrinsic function arguments that the template reader
//! accepts but CloudFormation refuses: an `Fn::ImportValue` whose name is
//! a list, an object, a boolean or another import, and an
//! `Fn::GetStackOutput` that is not an object of `StackName`, `OutputName`
//! and optionally `Region` and `RoleArn`.

use super::{Finding, walk, walk_resource};
use crate::cfn::{Expr, Template};

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    let mut visit = |expr: &Expr, path: &str| {
        if let Expr::ImportValue(name) = expr {
            check_import(name, path, findings);
        }
        if let Some(argument) = opaque(expr, GET_STACK_OUTPUT) {
            check_stack_output(argument, path, findings);
        }
    };
    for (name, condition) in &template.conditions {
        walk(condition, &mut format!("Conditions/{name}"), &mut visit);
    }
    for (id, resource) in &template.resources {
        walk_resource(id, resource, &mut visit);
    }
    for (name, output) in &template.outputs {
        walk(
            &output.value,
            &mut format!("Outputs/{name}/Value"),
            &mut visit,
        );
    }
}

/// The name of an export is a string, written out or built by `Fn::Sub`,
/// `Fn::Join`, `Fn::Select`, `Fn::FindInMap`, `Fn::If`, `Fn::Base64` or a
/// `Ref` to a parameter; it cannot be a list, an object, a boolean, or come
/// from another stack's export.
fn check_import(name: &Expr, path: &str, findings: &mut Vec<Finding>) {
    let what = match name {
        Expr::List(_) => "a list",
        Expr::Map(_) => "an object",
        Expr::Bool(_) => "a boolean",
        Expr::ImportValue(_) => "another `Fn::ImportValue`",
        _ => return,
    };
    findings.push(
        Finding::new(
            "E2009",
            format!("{path}/Fn::ImportValue"),
            format!("the name of an `Fn::ImportValue` is {what}; it must be a string"),
        )
        .help("write the export's name, or build it with `Fn::Sub` or `Fn::Join`"),
    );
}

const GET_STACK_OUTPUT: &str = "Fn::GetStackOutput";

/// The argument of an intrinsic function the model keeps as it was written
/// (a mapping of its one name), when `expr` is a call of `name`.
fn opaque<'a>(expr: &'a Expr, name: &str) -> Option<&'a Expr> {
    match expr {
        Expr::Map(entries) if entries.len() == 1 => entries.get(name),
        _ => None,
    }
}

/// `Fn::GetStackOutput` takes an object: the `StackName` and `OutputName`
/// it reads, and optionally the `Region` of that stack and the `RoleArn`
/// to read it with; each a string, written or computed.
fn check_stack_output(argument: &Expr, path: &str, findings: &mut Vec<Finding>) {
    const REQUIRED: [&str; 2] = ["StackName", "OutputName"];
    const OPTIONAL: [&str; 2] = ["Region", "RoleArn"];
    let at = format!("{path}/{GET_STACK_OUTPUT}");
    let help = "write `StackName` and `OutputName`, and optionally `Region` and `RoleArn`, as keys of an object";
    let Expr::Map(entries) = argument else {
        if !argument.is_intrinsic() {
            findings.push(
                Finding::new(
                    "E2010",
                    at,
                    format!(
                        "the argument of `{GET_STACK_OUTPUT}` is {}; it must be an object",
                        describe(argument)
                    ),
                )
                .help(help),
            );
        }
        return;
    };
    if argument.is_opaque_intrinsic() {
        return;
    }
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .filter(|key| !entries.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        findings.push(
            Finding::new(
                "E2010",
                at.clone(),
                format!(
                    "`{GET_STACK_OUTPUT}` lacks {}",
                    missing
                        .iter()
                        .map(|key| format!("`{key}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            )
            .help(help),
        );
    }
    for (key, value) in entries {
        let known = REQUIRED.contains(&key.as_str()) || OPTIONAL.contains(&key.as_str());
        let message = if !known {
            format!("`{GET_STACK_OUTPUT}` has no key `{key}`")
        } else if matches!(value, Expr::List(_) | Expr::Bool(_))
            || (matches!(value, Expr::Map(_)) && !value.is_opaque_intrinsic())
        {
            format!(
                "`{key}` of `{GET_STACK_OUTPUT}` is {}; it must be a string",
                describe(value)
            )
        } else {
            continue;
        };
        findings.push(Finding::new("E2010", format!("{at}/{key}"), message).help(help));
    }
}

/// What a literal value is, for messages.
fn describe(value: &Expr) -> &'static str {
    match value {
        Expr::List(_) => "a list",
        Expr::Map(_) => "an object",
        Expr::Bool(_) => "a boolean",
        Expr::Int(_) | Expr::Float(_) => "a number",
        _ => "a string",
    }
}
