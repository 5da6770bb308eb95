//! A blueprint's tags reach every resource its stacks create that takes
//! tags in place, as the resource's provider schema says: a group's tags its own
//! resources, the top-level tags the ones the groups share. eksynth's own
//! keys and `iam.roleTags` keep their values, and `Name` stays on the
//! nodes.

#[path = "common/one_stack.rs"]
mod one_stack;

use eksynth::validate::SchemaSet;
use one_stack::CLUSTER;
use serde_json::Value;

/// Every kind of resource that can carry tags: the shared node security
/// group and, in `CONFIG_MAP` mode, the aws-auth provider's role, function
/// and log group; a self-managed group with SSH, its own rules and a role
/// with `roleTags`; an EFA group with its placement group; a managed group.
fn fleet(authentication: &str) -> String {
    format!(
        r#"apiVersion: eksynth.io/v1
kind: NodeBlueprint
tags:
  cost-center: "4711"
  karpenter.sh/discovery: demo
{CLUSTER}  authenticationMode: {authentication}
defaults:
  tags: {{team: platform}}
nodeGroups:
  - name: general
    instanceType: m6i.large
    maxSize: 3
    subnets: [subnet-0123456789abcdef0]
    keyName: ops
    ssh: {{sourceCidrs: [10.0.0.0/8]}}
    securityGroupRules:
      - {{protocol: tcp, ports: 8080, source: 10.0.0.0/8}}
    iam:
      roleTags: {{team: nodes}}
  - name: efa
    instanceType: p5.48xlarge
    efa: true
    maxSize: 2
    subnets: [subnet-0123456789abcdef0]
    tags: {{Name: gpu, workload: training}}
managedNodeGroups:
  - name: system
    instanceType: m6i.large
    maxSize: 3
    subnets: [subnet-0123456789abcdef0]
"#
    )
}

/// The resources of the blueprint's one stack, as JSON.
fn resources(text: &str) -> serde_json::Map<String, Value> {
    one_stack::resources("tags.yaml", text)
}

/// The resource's own tags as `(key, value)` pairs, in order: its `Tags`
/// list, or a launch template's `launch-template` tag specification.
fn own_tags(resource: &Value) -> Option<Vec<(String, String)>> {
    let properties = &resource["Properties"];
    let list = match resource["Type"].as_str() {
        Some("AWS::EC2::LaunchTemplate") => properties["TagSpecifications"]
            .as_array()?
            .iter()
            .find(|s| s["ResourceType"] == "launch-template")?["Tags"]
            .clone(),
        _ => properties.get("Tags")?.clone(),
    };
    let pairs = match list {
        Value::Array(items) => items
            .iter()
            .map(|tag| {
                let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (text(&tag["Key"]), text(&tag["Value"]))
            })
            .collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        _ => return None,
    };
    Some(pairs)
}

/// Whether the type's provider schema tags it and updates its tags in
/// place (`tagging.taggable` and `tagging.tagUpdatable`).
fn schema_tags_in_place(kind: &str) -> bool {
    if kind.starts_with("Custom::") {
        return false;
    }
    let text = SchemaSet::embedded_text(kind).unwrap_or_else(|| panic!("{kind} is vendored"));
    let schema: Value = serde_json::from_str(&text).expect("schema JSON");
    let tagging = &schema["tagging"];
    tagging["taggable"] == true && tagging["tagUpdatable"] == true
}

fn has(tags: &[(String, String)], key: &str, value: &str) -> bool {
    tags.iter().any(|(k, v)| k == key && v == value)
}

#[test]
fn every_resource_whose_schema_updates_tags_in_place_carries_the_blueprints_and_no_other_has_any() {
    for mode in ["CONFIG_MAP", "API"] {
        let resources = resources(&fleet(mode));
        for (id, resource) in &resources {
            let kind = resource["Type"].as_str().expect("type");
            let tags = own_tags(resource);
            if !schema_tags_in_place(kind) {
                assert_eq!(tags, None, "{mode}: {id} ({kind}) takes no tags");
                continue;
            }
            let tags = tags.unwrap_or_else(|| panic!("{mode}: {id} ({kind}) has no tags"));
            assert!(
                has(&tags, "cost-center", "4711") && has(&tags, "karpenter.sh/discovery", "demo"),
                "{mode}: {id} ({kind}) lacks the top-level tags: {tags:?}"
            );
        }
    }
}

#[test]
fn a_groups_resources_take_its_tags_and_the_shared_ones_the_top_level_tags_only() {
    let resources = resources(&fleet("CONFIG_MAP"));
    let tags = |id: &str| own_tags(&resources[id]).unwrap_or_else(|| panic!("{id} has tags"));
    for id in [
        "GeneralSshSecurityGroup",
        "GeneralRulesSecurityGroup",
        "EfaNodeRole",
        "SystemNodeRole",
    ] {
        assert!(has(&tags(id), "team", "platform"), "{id}: {:?}", tags(id));
    }
    assert!(has(&tags("EfaNodeRole"), "workload", "training"));
    for id in [
        "NodeSecurityGroup",
        "AwsAuthProviderRole",
        "AwsAuthProvider",
        "AwsAuthProviderLogGroup",
    ] {
        assert!(
            !tags(id).iter().any(|(k, _)| k == "team"),
            "{id} is shared: {:?}",
            tags(id)
        );
    }
}

#[test]
fn eksynths_own_keys_and_role_tags_keep_their_values_and_name_stays_on_the_nodes() {
    let resources = resources(&fleet("CONFIG_MAP"));
    let tags = |id: &str| own_tags(&resources[id]).unwrap_or_else(|| panic!("{id} has tags"));
    assert_eq!(
        tags("NodeSecurityGroup")[0],
        ("kubernetes.io/cluster/demo".into(), "owned".into())
    );
    // `iam.roleTags` wins on the role over the group's `team`.
    let role = tags("GeneralNodeRole");
    assert!(has(&role, "team", "nodes"), "{role:?}");
    assert_eq!(role.iter().filter(|(k, _)| k == "team").count(), 1);
    // The user's `Name` names the nodes (instances, volumes, the Auto
    // Scaling group), not the role.
    assert!(!tags("EfaNodeRole").iter().any(|(k, _)| k == "Name"));
    let asg = &resources["EfaNodeGroup"]["Properties"]["Tags"];
    assert_eq!(asg[0]["Key"], "Name");
    assert_eq!(asg[0]["Value"], "gpu");
}

#[test]
fn in_api_mode_the_access_entries_take_their_groups_tags() {
    let resources = resources(&fleet("API"));
    let entry = own_tags(&resources["GeneralAccessEntry"]).expect("tags");
    assert!(has(&entry, "team", "platform"), "{entry:?}");
    assert!(has(&entry, "cost-center", "4711"), "{entry:?}");
}

#[test]
fn a_blueprint_without_tags_writes_none_beyond_eksynths_own() {
    let text = fleet("CONFIG_MAP")
        .replace(
            "tags:\n  cost-center: \"4711\"\n  karpenter.sh/discovery: demo\n",
            "",
        )
        .replace("  tags: {team: platform}\n", "")
        .replace("    tags: {Name: gpu, workload: training}\n", "");
    let resources = resources(&text);
    for (id, resource) in &resources {
        // The Auto Scaling group's `Name`, cluster and autoscaler tags.
        if resource["Type"] == "AWS::AutoScaling::AutoScalingGroup" {
            continue;
        }
        let tags = own_tags(resource).unwrap_or_default();
        let generated = |(key, _): &(String, String)| {
            key == "kubernetes.io/cluster/demo" || (id == "GeneralNodeRole" && key == "team")
        };
        assert!(tags.iter().all(generated), "{id}: {tags:?}");
    }
}
