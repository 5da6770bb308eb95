//! `iam.withAddonPolicies`: the permissions eksctl gives a node role for an
//! add-on. Those that are AWS managed policies become
//! `iam.extraManagedPolicies`; eksctl's own inline policies, vendored in
//! `data/eksctl-addon-policies/`, become `iam.policyStatements`.

use serde_json::Value as Json;

use super::node_group::Group;
use super::values::boolean;
use crate::import::out::{Out, OutValue};
use crate::syntax::{Key, Node};

/// eksctl's inline add-on policies by add-on field: each policy's name and
/// statements, as eksctl attaches them (partition-free ARNs).
const INLINE_POLICIES: &str = include_str!("../../../data/eksctl-addon-policies/policies.json");

/// eksctl's add-on policies that are AWS managed policies, by name.
const MANAGED_POLICIES: &[(&str, &str)] = &[
    ("imageBuilder", "AmazonEC2ContainerRegistryPowerUser"),
    ("cloudWatch", "CloudWatchAgentServerPolicy"),
    ("ebs", "service-role/AmazonEBSCSIDriverPolicy"),
];

/// The fields of eksctl's `NodeGroupIAMAddonPolicies`.
const ADDON_FIELDS: &[&str] = &[
    "imageBuilder",
    "autoScaler",
    "externalDNS",
    "certManager",
    "appMesh",
    "appMeshPreview",
    "ebs",
    "fsx",
    "efs",
    "awsLoadBalancerController",
    "albIngress",
    "xRay",
    "cloudWatch",
];

/// The statements eksctl attaches for `addon`, in its order; `None` for an
/// add-on without an inline policy.
fn inline_statements(addon: &str) -> Option<Vec<Json>> {
    let policies: serde_json::Map<String, Json> = serde_json::from_str(INLINE_POLICIES).ok()?;
    let statements = policies
        .get(addon)?
        .as_array()?
        .iter()
        .filter_map(|policy| policy.get("Statement")?.as_array().cloned())
        .flatten()
        .collect();
    Some(statements)
}

fn managed_policy_arn(name: &str) -> String {
    format!("arn:${{AWS::Partition}}:iam::aws:policy/{name}")
}

/// A JSON value as a blueprint value.
fn out(json: &Json) -> Out {
    match json {
        Json::Null => Out::raw("null"),
        Json::Bool(b) => Out::bool(*b),
        Json::Number(n) => Out::raw(&n.to_string()),
        Json::String(s) => Out::str(s),
        Json::Array(items) => Out::seq(items.iter().map(out).collect()),
        Json::Object(entries) => {
            let mut map = Out::map();
            for (key, value) in entries {
                map.set(key, out(value));
            }
            map
        }
    }
}

/// Appends `arns` to the group's `iam.extraManagedPolicies`.
pub(super) fn add_managed_policies(group: &mut Group<'_>, arns: Vec<String>, origin: usize) {
    let iam = group.out.entry("iam", None);
    let mut items = match iam.get("extraManagedPolicies").map(|p| p.value.clone()) {
        Some(OutValue::Seq(items)) => items,
        _ => Vec::new(),
    };
    items.extend(arns.iter().map(|arn| Out::str(arn).from(origin)));
    iam.set("extraManagedPolicies", Out::seq(items));
}

/// Appends `statements` to the group's `iam.policyStatements`, each from
/// `origin`, leaving out one that is already there (eksctl attaches the
/// same Route 53 statement for `externalDNS` and `certManager`, and one
/// policy for `awsLoadBalancerController` and `albIngress`).
pub(super) fn add_statements(group: &mut Group<'_>, statements: Vec<Out>, origin: usize) {
    let mut items = match group
        .out
        .get("iam")
        .and_then(|iam| iam.get("policyStatements"))
        .map(|p| p.value.clone())
    {
        Some(OutValue::Seq(items)) => items,
        _ => Vec::new(),
    };
    for statement in statements {
        if !items.iter().any(|item| item.value == statement.value) {
            for action in wildcard_actions(&statement) {
                let carried = format!("`{action}` ({})", group.ctx.origins[origin].1);
                if !group.ctx.wildcards.contains(&carried) {
                    group.ctx.wildcards.push(carried);
                }
            }
            items.push(statement.from(origin));
        }
    }
    group
        .out
        .entry("iam", None)
        .set("policyStatements", Out::seq(items));
}

/// The actions of an `Allow` statement that are `*` or a service's `*`
/// (`fsx:*`), which eksynth warns about.
fn wildcard_actions(statement: &Out) -> Vec<String> {
    if statement.get("Effect").and_then(Out::as_str) != Some("Allow") {
        return Vec::new();
    }
    let actions: Vec<&str> = match statement.get("Action") {
        Some(Out {
            value: OutValue::Seq(items),
            ..
        }) => items.iter().filter_map(Out::as_str).collect(),
        Some(action) => action.as_str().into_iter().collect(),
        None => Vec::new(),
    };
    actions
        .into_iter()
        .filter(|a| *a == "*" || a.ends_with(":*"))
        .map(str::to_string)
        .collect()
}

pub(super) fn addon_policies(group: &mut Group<'_>, node: &Node) {
    for (key, value) in node.as_map().unwrap_or_default() {
        if !ADDON_FIELDS.contains(&key.name.as_str()) {
            group.unknown_below("iam.withAddonPolicies", key, ADDON_FIELDS);
            continue;
        }
        if boolean(value) != Some(true) {
            continue;
        }
        addon_policy(group, key);
    }
}

fn addon_policy(group: &mut Group<'_>, key: &Key) {
    if let Some((_, policy)) = MANAGED_POLICIES
        .iter()
        .find(|(addon, _)| *addon == key.name)
    {
        let origin = group.origin_below("iam.withAddonPolicies", key);
        add_managed_policies(group, vec![managed_policy_arn(policy)], origin);
        return;
    }
    match inline_statements(&key.name) {
        Some(statements) if !statements.is_empty() => {
            let origin = group.origin_below("iam.withAddonPolicies", key);
            add_statements(group, statements.iter().map(out).collect(), origin);
        }
        _ => group.unmapped_below(
            "iam.withAddonPolicies",
            key,
            "give the add-on's service account a role (IRSA or Pod Identity), or write its statements in `iam.policyStatements`",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_addon_has_managed_or_vendored_inline_policies() {
        for addon in ADDON_FIELDS {
            let managed = MANAGED_POLICIES.iter().any(|(a, _)| a == addon);
            let inline = inline_statements(addon).is_some_and(|s| !s.is_empty());
            assert!(
                managed != inline,
                "{addon}: managed {managed}, inline {inline}"
            );
        }
    }

    #[test]
    fn vendored_arns_name_no_literal_partition() {
        for addon in ADDON_FIELDS {
            for statement in inline_statements(addon).unwrap_or_default() {
                let text = statement.to_string();
                assert!(!text.contains("arn:aws:"), "{addon}: {text}");
                assert!(statement.get("Effect").is_some(), "{addon}: {text}");
            }
        }
    }
}
