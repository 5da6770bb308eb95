//! What a module (`Org::Service::Name::MODULE`) does not take that a
//! resource does: `Tags` (a module has no tags of its own to put on its
//! resources: `E1011`) and the `Metadata` key `AWS::CloudFormation::Module`,
//! which CloudFormation writes on the resources a module makes (`E9001`).
//! Policies on a module are `attributes`' to judge.

use super::{Finding, is_module};
use crate::cfn::{Expr, Template};

/// The `Metadata` key CloudFormation reserves for the resources a module
/// makes.
const RESERVED_METADATA: &str = "AWS::CloudFormation::Module";

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        if !is_module(&resource.kind) {
            continue;
        }
        if resource.properties.contains_key("Tags") {
            findings.push(
                Finding::new(
                    "E1011",
                    format!("Resources/{id}/Properties/Tags"),
                    "a module takes no `Tags`",
                )
                .help("tag the resources inside the module, or the stack"),
            );
        }
        if let Some(Expr::Map(metadata)) = &resource.metadata
            && metadata.contains_key(RESERVED_METADATA)
        {
            findings.push(
                Finding::new(
                    "E9001",
                    format!("Resources/{id}/Metadata/{RESERVED_METADATA}"),
                    format!("the `Metadata` key `{RESERVED_METADATA}` is reserved"),
                )
                .help("CloudFormation writes it on the resources a module makes; use another key"),
            );
        }
    }
}
