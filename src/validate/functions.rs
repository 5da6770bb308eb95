//! The shape of intrinsic function arguments that the template reader
//! accepts but CloudFormation refuses: an `Fn::ImportValue` whose name is
//! a list, an object, a boolean or another import.

use super::{Finding, walk, walk_resource};
use crate::cfn::{Expr, Template};

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    let mut visit = |expr: &Expr, path: &str| {
        if let Expr::ImportValue(name) = expr {
            check_import(name, path, findings);
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
