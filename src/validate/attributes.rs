//! Resource attributes checked against what CloudFormation accepts for
//! each: the keys of `CreationPolicy` and `UpdatePolicy` by resource type,
//! the type of each value, and `Metadata` as a mapping (`E9001`).
//!
//! The shapes follow the CloudFormation User Guide's pages on the
//! `CreationPolicy` and `UpdatePolicy` attributes
//! (docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-creationpolicy.html
//! and aws-attribute-updatepolicy.html). Values are judged as
//! CloudFormation converts them: `"true"` is a boolean, `"5"` an integer;
//! an intrinsic function passes, and both branches of a `Fn::If` are
//! judged like a value written there.

use super::Finding;
use crate::cfn::{Expr, Template};

/// What a value of an attribute may be.
enum Shape {
    Bool,
    Int,
    Str,
    Enum(&'static [&'static str]),
    List(&'static Shape),
    /// A mapping with these keys only.
    Object(&'static [(&'static str, Shape)]),
}

const RESOURCE_SIGNAL: Shape = Shape::Object(&[("Count", Shape::Int), ("Timeout", Shape::Str)]);

/// `CreationPolicy` of the types that read one; other types ignore it.
fn creation_policy(kind: &str) -> Option<Shape> {
    match kind {
        "AWS::AutoScaling::AutoScalingGroup" => Some(Shape::Object(&[
            (
                "AutoScalingCreationPolicy",
                Shape::Object(&[("MinSuccessfulInstancesPercent", Shape::Int)]),
            ),
            ("ResourceSignal", RESOURCE_SIGNAL),
        ])),
        "AWS::CloudFormation::WaitCondition" => {
            Some(Shape::Object(&[("ResourceSignal", RESOURCE_SIGNAL)]))
        }
        "AWS::AppStream::Fleet" => Some(Shape::Object(&[("StartFleet", Shape::Bool)])),
        _ => None,
    }
}

const SUSPENDABLE: &[&str] = &[
    "Launch",
    "Terminate",
    "AddToLoadBalancer",
    "AlarmNotification",
    "AZRebalance",
    "HealthCheck",
    "InstanceRefresh",
    "ReplaceUnhealthy",
    "ScheduledActions",
];

const FLEET_UPDATE: Shape = Shape::Object(&[("Type", Shape::Bool)]);

/// `UpdatePolicy` of the types that have one; `None` for the others.
fn update_policy(kind: &str) -> Option<Shape> {
    match kind {
        "AWS::AutoScaling::AutoScalingGroup" => Some(Shape::Object(&[
            (
                "AutoScalingReplacingUpdate",
                Shape::Object(&[("WillReplace", Shape::Bool)]),
            ),
            (
                "AutoScalingRollingUpdate",
                Shape::Object(&[
                    ("MaxBatchSize", Shape::Int),
                    ("MinActiveInstancesPercent", Shape::Int),
                    ("MinInstancesInService", Shape::Int),
                    ("MinSuccessfulInstancesPercent", Shape::Int),
                    ("PauseTime", Shape::Str),
                    ("SuspendProcesses", Shape::List(&Shape::Enum(SUSPENDABLE))),
                    ("WaitOnResourceSignals", Shape::Bool),
                ]),
            ),
            (
                "AutoScalingScheduledAction",
                Shape::Object(&[("IgnoreUnmodifiedGroupSizeProperties", Shape::Bool)]),
            ),
        ])),
        "AWS::Lambda::Alias" => Some(Shape::Object(&[(
            "CodeDeployLambdaAliasUpdate",
            Shape::Object(&[
                ("AfterAllowTrafficHook", Shape::Str),
                ("ApplicationName", Shape::Str),
                ("BeforeAllowTrafficHook", Shape::Str),
                ("DeploymentGroupName", Shape::Str),
            ]),
        )])),
        "AWS::ElastiCache::ReplicationGroup" => {
            Some(Shape::Object(&[("UseOnlineResharding", Shape::Bool)]))
        }
        "AWS::OpenSearchService::Domain" | "AWS::Elasticsearch::Domain" => {
            Some(Shape::Object(&[("EnableVersionUpgrade", Shape::Bool)]))
        }
        "AWS::AppStream::Fleet" => Some(Shape::Object(&[
            ("StartAfterUpdate", FLEET_UPDATE),
            ("StopBeforeUpdate", FLEET_UPDATE),
        ])),
        _ => None,
    }
}

/// Whether eksynth knows the attributes of this type: CloudFormation's own
/// types. A transform's (`AWS::Serverless::*`), a module's and a custom
/// resource's are someone else's to judge.
fn judged_type(kind: &str) -> bool {
    kind.starts_with("AWS::") && !kind.starts_with("AWS::Serverless::") && !super::is_module(kind)
}

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let kind = resource.kind.as_str();
        if let Some(metadata) = &resource.metadata
            && !matches!(metadata, Expr::Map(_))
            && !metadata.is_intrinsic()
        {
            findings.push(
                Finding::new(
                    "E9001",
                    format!("Resources/{id}/Metadata"),
                    "`Metadata` must be a mapping",
                )
                .help("write keys and values under `Metadata`"),
            );
        }
        if super::is_module(kind) {
            // A module's resources have their own attributes.
            for (attribute, given) in [
                ("CreationPolicy", &resource.creation_policy),
                ("UpdatePolicy", &resource.update_policy),
            ] {
                if given.is_some() {
                    findings.push(
                        Finding::new(
                            "E9001",
                            format!("Resources/{id}/{attribute}"),
                            format!("a module takes no `{attribute}`"),
                        )
                        .help("set it on the resources inside the module"),
                    );
                }
            }
            continue;
        }
        if !judged_type(kind) {
            continue;
        }
        if let (Some(policy), Some(shape)) = (&resource.creation_policy, creation_policy(kind)) {
            let path = format!("Resources/{id}/CreationPolicy");
            check_value(policy, &shape, &path, "CreationPolicy", findings);
        }
        if let Some(policy) = &resource.update_policy {
            let path = format!("Resources/{id}/UpdatePolicy");
            match update_policy(kind) {
                Some(shape) => check_value(policy, &shape, &path, "UpdatePolicy", findings),
                None => findings.push(
                    Finding::new(
                        "E9001",
                        path,
                        format!("`{kind}` has no `UpdatePolicy`"),
                    )
                    .help("only Auto Scaling groups, Lambda aliases, ElastiCache replication groups, OpenSearch and Elasticsearch domains and AppStream fleets have one"),
                ),
            }
        }
    }
}

/// Checks one value against its shape; `what` names the key it is under.
fn check_value(value: &Expr, shape: &Shape, path: &str, what: &str, findings: &mut Vec<Finding>) {
    match value {
        Expr::If {
            then, otherwise, ..
        } => {
            check_value(then, shape, &format!("{path}/Fn::If/1"), what, findings);
            check_value(
                otherwise,
                shape,
                &format!("{path}/Fn::If/2"),
                what,
                findings,
            );
            return;
        }
        _ if value.is_intrinsic() => return,
        _ => {}
    }
    let wrong = |expected: &str| {
        Finding::new(
            "E9001",
            path,
            format!("`{what}` must be {expected}, found {}", describe(value)),
        )
    };
    match shape {
        Shape::Bool => {
            if !matches!(value, Expr::Bool(_))
                && !matches!(value, Expr::String(s) if s == "true" || s == "false")
            {
                findings.push(wrong("a boolean"));
            }
        }
        Shape::Int => {
            let integer = match value {
                Expr::Int(_) => true,
                Expr::String(s) => s.trim().parse::<i64>().is_ok(),
                _ => false,
            };
            if !integer {
                findings.push(wrong("an integer"));
            }
        }
        Shape::Str => {
            if !matches!(value, Expr::String(_) | Expr::Int(_) | Expr::Float(_)) {
                findings.push(wrong("a string"));
            }
        }
        Shape::Enum(allowed) => match value {
            Expr::String(s) if allowed.contains(&s.as_str()) => {}
            Expr::String(s) => findings.push(
                Finding::new("E9001", path, format!("`{what}` cannot be `{s}`"))
                    .help(format!("use one of: {}", allowed.join(", "))),
            ),
            _ => findings.push(wrong("a string")),
        },
        Shape::List(item) => match value {
            Expr::List(items) => {
                for (i, entry) in items.iter().enumerate() {
                    check_value(entry, item, &format!("{path}/{i}"), what, findings);
                }
            }
            _ => findings.push(wrong("a list")),
        },
        Shape::Object(keys) => match value {
            Expr::Map(entries) => {
                for (key, entry) in entries {
                    let at = format!("{path}/{key}");
                    match keys.iter().find(|(name, _)| name == key) {
                        Some((_, inner)) => check_value(entry, inner, &at, key, findings),
                        None => {
                            let names: Vec<&str> = keys.iter().map(|(name, _)| *name).collect();
                            let help = match crate::suggest::closest(key, &names) {
                                Some(best) => format!("did you mean `{best}`?"),
                                None => format!("expected one of: {}", names.join(", ")),
                            };
                            findings.push(
                                Finding::new("E9001", at, format!("`{what}` has no key `{key}`"))
                                    .help(help),
                            );
                        }
                    }
                }
            }
            _ => findings.push(wrong("a mapping")),
        },
    }
}

/// What a literal value is, for messages.
pub(super) fn describe(value: &Expr) -> &'static str {
    match value {
        Expr::Bool(_) => "a boolean",
        Expr::Int(_) | Expr::Float(_) => "a number",
        Expr::String(_) => "a string",
        Expr::List(_) => "a list",
        Expr::Map(_) => "a mapping",
        _ => "an intrinsic function",
    }
}
