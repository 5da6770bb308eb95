//! A node role has each managed policy once: a standard policy eksynth
//! attaches itself may be listed in `iam.extraManagedPolicies` (as
//! eksctl's `attachPolicyARNs` and the Terraform module's
//! `iam_role_additional_policies` list them) and is attached once, and the
//! template passes `validate`; a policy listed twice is an error at the
//! second item.

#[path = "common/one_stack.rs"]
mod one_stack;

use one_stack::CLUSTER;
use serde_json::Value;

fn arn(name: &str) -> String {
    format!("arn:${{AWS::Partition}}:iam::aws:policy/{name}")
}

/// A blueprint whose one group, of `kind`, lists `policies`, with the
/// group's other `iam` fields.
fn blueprint(kind: &str, iam: &str, policies: &[String]) -> String {
    let list: String = policies
        .iter()
        .map(|p| format!("        - {p}\n"))
        .collect();
    format!(
        "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\n{CLUSTER}{kind}:\n  - name: web\n    \
         instanceType: m6i.large\n    maxSize: 3\n    subnets: [subnet-0123456789abcdef0]\n    iam:\n{iam}      extraManagedPolicies:\n{list}"
    )
}

/// The ARNs of the node role's `ManagedPolicyArns`, each as its `Fn::Sub`
/// text or literal, when the blueprint compiles without an error.
fn role_policies(text: &str) -> Vec<String> {
    one_stack::resources("nodes.yaml", text)["WebNodeRole"]["Properties"]["ManagedPolicyArns"]
        .as_array()
        .expect("ManagedPolicyArns")
        .iter()
        .map(|p| match p {
            Value::Object(sub) => sub["Fn::Sub"].as_str().expect("Fn::Sub").to_string(),
            other => other.as_str().expect("a string").to_string(),
        })
        .collect()
}

#[test]
fn a_standard_policy_listed_again_is_attached_once() {
    let standard = [
        ("", "AmazonEKSWorkerNodePolicy"),
        ("", "AmazonEC2ContainerRegistryReadOnly"),
        ("", "AmazonEKS_CNI_Policy"),
        (
            "      ssmManagedInstance: true\n",
            "AmazonSSMManagedInstanceCore",
        ),
    ];
    for kind in ["nodeGroups", "managedNodeGroups"] {
        for (iam, name) in standard {
            let custom = "arn:${AWS::Partition}:iam::123456789012:policy/node-extra".to_string();
            let text = blueprint(kind, iam, &[arn(name), custom.clone()]);
            let policies = role_policies(&text);
            assert_eq!(
                policies.iter().filter(|p| **p == arn(name)).count(),
                1,
                "{kind} listing {name}: {policies:?}"
            );
            assert!(policies.contains(&custom), "{kind}: {policies:?}");
            let mut unique = policies.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), policies.len(), "{kind}: {policies:?}");
        }
    }
}

#[test]
fn every_standard_policy_listed_at_once_leaves_the_role_as_without_them() {
    let names = [
        "AmazonEKSWorkerNodePolicy",
        "AmazonEC2ContainerRegistryReadOnly",
        "AmazonEKS_CNI_Policy",
        "AmazonSSMManagedInstanceCore",
    ];
    let iam = "      ssmManagedInstance: true\n";
    let listed = role_policies(&blueprint(
        "nodeGroups",
        iam,
        &names.iter().map(|n| arn(n)).collect::<Vec<_>>(),
    ));
    let custom = "arn:${AWS::Partition}:iam::123456789012:policy/node-extra".to_string();
    let mut alone = role_policies(&blueprint("nodeGroups", iam, std::slice::from_ref(&custom)));
    alone.retain(|p| *p != custom);
    assert_eq!(listed, alone);
}

#[test]
fn a_policy_the_standard_ones_leave_out_is_attached_from_the_list() {
    // Without `ssmManagedInstance` (and with the CNI on IRSA) eksynth
    // attaches neither; the list does.
    let iam = "      cniUsesIrsa: true\n";
    let policies = role_policies(&blueprint(
        "nodeGroups",
        iam,
        &[
            arn("AmazonSSMManagedInstanceCore"),
            arn("AmazonEKS_CNI_Policy"),
        ],
    ));
    for name in ["AmazonSSMManagedInstanceCore", "AmazonEKS_CNI_Policy"] {
        assert_eq!(policies.iter().filter(|p| **p == arn(name)).count(), 1);
    }
}
