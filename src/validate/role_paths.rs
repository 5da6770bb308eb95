//! Roles taken by name where the name is not enough: a `Ref` to an IAM
//! role gives its name, and a service that turns that name into an ARN
//! builds `arn:...:role/<name>`, leaving out a `Path` other than `/`. The
//! role then does not resolve; `Fn::GetAtt Role.Arn` carries the path.

use super::Finding;
use crate::cfn::{Expr, Template};

/// Properties that take a role by name or ARN and build the ARN from a
/// name without the role's path (cfn-lint 1.58.0's E3050 knows the same
/// one).
const BY_NAME: &[(&str, &str)] = &[("AWS::CodeBuild::Project", "ServiceRole")];

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        for (kind, property) in BY_NAME {
            if resource.kind != *kind {
                continue;
            }
            if let Some(value) = resource.properties.get(*property) {
                let at = format!("Resources/{id}/Properties/{property}");
                refs(template, property, value, at, findings);
            }
        }
    }
}

/// A `Ref` to a role with a path, at `value` or in a branch of an
/// `Fn::If` there.
fn refs(
    template: &Template,
    property: &str,
    value: &Expr,
    at: String,
    findings: &mut Vec<Finding>,
) {
    match value {
        Expr::Ref(name) => {
            let path = template
                .resources
                .get(name)
                .filter(|target| target.kind == "AWS::IAM::Role")
                .and_then(|target| target.properties.get("Path"));
            if let Some(Expr::String(path)) = path
                && path != "/"
            {
                findings.push(
                    Finding::new(
                        "E7011",
                        at,
                        format!(
                            "`{property}` takes the role `{name}` by `Ref`, its name, but the role's `Path` is \"{path}\": the ARN built from the name leaves the path out"
                        ),
                    )
                    .help(format!("use `!GetAtt {name}.Arn`")),
                );
            }
        }
        Expr::If {
            then, otherwise, ..
        } => {
            refs(template, property, then, format!("{at}/Fn::If/1"), findings);
            refs(
                template,
                property,
                otherwise,
                format!("{at}/Fn::If/2"),
                findings,
            );
        }
        _ => {}
    }
}
