//! EKS knowledge for any template, not only eksynth's: a managed node
//! group's sizes in order (`E4002`), access entries of a type EKS knows
//! (`E8001`) with only what that type allows (`E8002`, `E8003`), a launch
//! template's instance profile given once (`E8004`), an Auto Scaling group
//! that says where to launch (`E8005`), and nodes with public IP addresses
//! (`W8006`).
//!
//! The access entry rules are those of the EKS API reference
//! (`CreateAccessEntry`: the types, and "If you set the value to EC2_LINUX
//! or EC2_WINDOWS, you can't specify values for kubernetesGroups, or
//! associate an AccessPolicy") and the EKS User Guide's page on custom
//! usernames (the reserved prefixes).

use indexmap::IndexMap;

use super::{Finding, literal, literal_number};
use crate::cfn::{Expr, Resource, Template};

const ACCESS_ENTRY_TYPES: &[&str] = &[
    "STANDARD",
    "EC2",
    "EC2_LINUX",
    "EC2_WINDOWS",
    "FARGATE_LINUX",
    "HYBRID_LINUX",
    "HYPERPOD_LINUX",
];

/// Prefixes EKS keeps for itself in Kubernetes usernames.
const RESERVED_USERNAME_PREFIXES: &[&str] = &["system:", "eks:", "aws:", "amazon:", "iam:"];

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        match resource.kind.as_str() {
            "AWS::EKS::Nodegroup" => scaling(&resource.properties, &base, findings),
            "AWS::EKS::AccessEntry" => access_entry(&resource.properties, &base, findings),
            "AWS::EC2::LaunchTemplate" => {
                if let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData") {
                    let base = format!("{base}/LaunchTemplateData");
                    instance_profile(data, &base, findings);
                    if is_node_template(template, id) {
                        public_ip(data, &base, findings);
                    }
                }
            }
            "AWS::AutoScaling::AutoScalingGroup" => placement(resource, &base, findings),
            _ => {}
        }
    }
}

/// `MinSize <= DesiredSize <= MaxSize` of a managed node group's
/// `ScalingConfig`, when they are literals.
fn scaling(properties: &IndexMap<String, Expr>, base: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::Map(config)) = properties.get("ScalingConfig") else {
        return;
    };
    let number = |key: &str| config.get(key).and_then(literal_number);
    let sizes = (number("MinSize"), number("DesiredSize"), number("MaxSize"));
    let path = format!("{base}/ScalingConfig");
    super::policies::sizes_in_order(sizes, &path, "DesiredSize", findings);
}

fn access_entry(properties: &IndexMap<String, Expr>, base: &str, findings: &mut Vec<Finding>) {
    // Without a type, EKS makes a standard entry.
    let kind = match properties.get("Type") {
        None => "STANDARD".to_string(),
        Some(value) => match literal(value) {
            Some(kind) => kind,
            None => return,
        },
    };
    if !ACCESS_ENTRY_TYPES.contains(&kind.as_str()) {
        let help = match crate::suggest::closest(&kind, ACCESS_ENTRY_TYPES) {
            Some(best) => format!("did you mean `{best}`?"),
            None => format!("use one of: {}", ACCESS_ENTRY_TYPES.join(", ")),
        };
        findings.push(
            Finding::new(
                "E8001",
                format!("{base}/Type"),
                format!("`{kind}` is not a type of access entry"),
            )
            .help(help),
        );
        return;
    }
    if kind != "STANDARD" {
        for key in ["KubernetesGroups", "AccessPolicies"] {
            if properties.contains_key(key) {
                findings.push(
                    Finding::new(
                        "E8002",
                        format!("{base}/{key}"),
                        format!("an access entry of type `{kind}` takes no `{key}`"),
                    )
                    .help("EKS grants nodes their permissions itself; groups and access policies go on `STANDARD` entries"),
                );
            }
        }
    }
    if let Some(username) = properties.get("Username").and_then(literal)
        && let Some(prefix) = RESERVED_USERNAME_PREFIXES
            .iter()
            .find(|prefix| username.starts_with(**prefix))
    {
        findings.push(
            Finding::new(
                "E8003",
                format!("{base}/Username"),
                format!("the username `{username}` starts with `{prefix}`, which EKS reserves"),
            )
            .help("leave `Username` out and let EKS name the principal, or choose a name without a reserved prefix"),
        );
    }
}

/// `IamInstanceProfile` names its profile by `Arn` or by `Name`, not both.
fn instance_profile(data: &IndexMap<String, Expr>, base: &str, findings: &mut Vec<Finding>) {
    if let Some(Expr::Map(profile)) = data.get("IamInstanceProfile")
        && profile.contains_key("Arn")
        && profile.contains_key("Name")
    {
        findings.push(
            Finding::new(
                "E8004",
                format!("{base}/IamInstanceProfile/Name"),
                "the instance profile is given by both `Arn` and `Name`",
            )
            .help("EC2 takes one of them; keep `Arn` or `Name`"),
        );
    }
}

/// An Auto Scaling group launches into subnets (`VPCZoneIdentifier`) or
/// Availability Zones; one made from an instance takes the instance's.
fn placement(group: &Resource, base: &str, findings: &mut Vec<Finding>) {
    let props = &group.properties;
    if ["VPCZoneIdentifier", "AvailabilityZones", "InstanceId"]
        .iter()
        .any(|key| props.contains_key(*key))
    {
        return;
    }
    findings.push(
        Finding::new(
            "E8005",
            base,
            "the Auto Scaling group has neither subnets (`VPCZoneIdentifier`) nor `AvailabilityZones`",
        )
        .help("list the node subnets in `VPCZoneIdentifier`"),
    );
}

/// Whether a launch template launches Kubernetes nodes: a managed node
/// group uses it, or an Auto Scaling group tagged for a cluster does.
fn is_node_template(template: &Template, id: &str) -> bool {
    let names_it = |value: &Expr| value.references().iter().any(|(name, _)| *name == id);
    template
        .resources
        .values()
        .any(|resource| match resource.kind.as_str() {
            "AWS::EKS::Nodegroup" => resource
                .properties
                .get("LaunchTemplate")
                .is_some_and(names_it),
            "AWS::AutoScaling::AutoScalingGroup" => {
                let launches = ["LaunchTemplate", "MixedInstancesPolicy"]
                    .iter()
                    .any(|key| resource.properties.get(*key).is_some_and(names_it));
                launches && cluster_tagged(resource)
            }
            _ => false,
        })
}

fn cluster_tagged(group: &Resource) -> bool {
    let Some(Expr::List(tags)) = group.properties.get("Tags") else {
        return false;
    };
    tags.iter().any(|tag| {
        matches!(tag, Expr::Map(tag) if tag.get("Key").and_then(Expr::as_str)
            .is_some_and(|key| key.starts_with("kubernetes.io/cluster/")))
    })
}

/// A network interface that asks for a public IPv4 address.
fn public_ip(data: &IndexMap<String, Expr>, base: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::List(interfaces)) = data.get("NetworkInterfaces") else {
        return;
    };
    for (i, interface) in interfaces.iter().enumerate() {
        let Expr::Map(interface) = interface else {
            continue;
        };
        let public = match interface.get("AssociatePublicIpAddress") {
            Some(Expr::Bool(b)) => *b,
            Some(Expr::String(s)) => s == "true",
            _ => false,
        };
        if public {
            findings.push(
                Finding::new(
                    "W8006",
                    format!("{base}/NetworkInterfaces/{i}/AssociatePublicIpAddress"),
                    "the nodes get public IP addresses, reachable from the internet",
                )
                .help("only security groups then stand between the nodes and the internet; prefer private subnets with a NAT gateway"),
            );
        }
    }
}
