//! The blueprint's tags on every resource the stacks create whose
//! provider schema updates tags in place (`tagging.taggable` and
//! `tagUpdatable`). The nodes' own resources (the Auto Scaling group with
//! its `PropagateAtLaunch`, the managed node group, the instances and
//! volumes of the launch template's data) are tagged where they are
//! lowered; this pass tags the rest, with the group's tags on a group's
//! resources and the blueprint's on the ones the groups share.
//!
//! Left untagged: a placement group, whose `Tags` are create-only (a tag
//! change would replace it and move every node into a new one, where a
//! cluster group's capacity is not assured), and a launch template's own
//! tags, which its schema marks not updatable and CloudFormation applies
//! only when it creates the template
//! (aws-cloudformation/cloudformation-coverage-roadmap #957, #1873), while
//! the change would still count as a new version and roll the nodes. The
//! other types eksynth creates (`AWS::IAM::InstanceProfile`, role
//! policies, security group rules, hooks, warm pools, custom resources)
//! have no tags.

use crate::blueprint::tags::NAME;
use crate::cfn::{Expr, Resource};

/// The types this pass tags, each with a `Tags` list of `{Key, Value}`.
pub const TAGGED: &[&str] = &[
    "AWS::EC2::SecurityGroup",
    "AWS::EKS::AccessEntry",
    "AWS::IAM::Role",
    "AWS::Lambda::Function",
    "AWS::Logs::LogGroup",
];

/// The types whose tags are written where they are lowered, with the
/// nodes' `Name`.
pub const TAGGED_WITH_THE_NODES: &[&str] =
    &["AWS::AutoScaling::AutoScalingGroup", "AWS::EKS::Nodegroup"];

/// Adds `tags` to `resource` if its type takes them. A key the resource
/// carries already keeps its value: eksynth's own tags (the node security
/// group's cluster tag) and a role's `iam.roleTags` win. `Name` is left
/// out: it names the nodes.
pub fn apply(resource: &mut Resource, tags: &[(String, String)]) {
    if !TAGGED.contains(&resource.kind.as_str()) {
        return;
    }
    let tags: Vec<&(String, String)> = tags.iter().filter(|(key, _)| key != NAME).collect();
    if tags.is_empty() {
        return;
    }
    let existing = match resource.properties.get("Tags") {
        Some(Expr::List(list)) => list.clone(),
        _ => Vec::new(),
    };
    let merged = merge(existing, &tags);
    resource
        .properties
        .insert("Tags".into(), Expr::List(merged));
}

/// `existing` tags, then each of `tags` whose key is not among them.
fn merge(mut existing: Vec<Expr>, tags: &[&(String, String)]) -> Vec<Expr> {
    let has = |list: &[Expr], key: &str| {
        list.iter().any(|tag| match tag {
            Expr::Map(entries) => entries.get("Key").and_then(Expr::as_str) == Some(key),
            _ => false,
        })
    };
    for (key, value) in tags {
        if !has(&existing, key) {
            existing.push(Expr::map([
                ("Key", Expr::str(key)),
                ("Value", Expr::str(value)),
            ]));
        }
    }
    existing
}
