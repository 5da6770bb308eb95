//! The blueprint's `cluster` section, from `aws eks describe-cluster
//! --output json` when given, else from the eksctl file's `metadata`, `vpc`,
//! `kubernetesNetworkConfig` and `accessConfig`, else as template
//! parameters. Also the subnets of the eksctl file's VPC, which the node
//! groups choose from.

use std::sync::Arc;

use super::Ctx;
use super::values::{pascal, text};
use crate::diagnostic::Diagnostic;
use crate::import::out::Out;
use crate::source::SourceFile;
use crate::syntax::{self, Key, Node};

/// eksctl's default Kubernetes version (`DefaultVersion` in
/// `pkg/apis/eksctl.io/v1alpha5/types.go`).
const EKSCTL_DEFAULT_VERSION: &str = "1.34";
/// The last version Amazon Linux 2 images are built for.
const LAST_AL2_VERSION: &str = "1.32";
/// The oldest version the blueprint accepts.
const OLDEST_MINOR: u32 = 23;

/// The `cluster` object of a describe-cluster output.
pub struct Described {
    pub(crate) cluster: Node,
}

/// Reads a describe-cluster output; a file without a `cluster` object is an
/// error in that file.
pub fn described(file: &Arc<SourceFile>) -> Result<Described, Vec<Diagnostic>> {
    let root = syntax::parse(file).map_err(|d| vec![*d])?;
    match field(&root, "cluster") {
        Some(cluster) if cluster.as_map().is_some() => Ok(Described {
            cluster: cluster.clone(),
        }),
        _ => Err(vec![
            Diagnostic::error(file, Some(root.span), "no `cluster` object in this file").with_help(
                "give the output of `aws eks describe-cluster --name NAME --output json`",
            ),
        ]),
    }
}

pub fn field<'n>(node: &'n Node, name: &str) -> Option<&'n Node> {
    node.as_map()?
        .iter()
        .find(|(k, _)| k.name == name)
        .map(|(_, v)| v)
}

fn path<'n>(node: &'n Node, names: &[&str]) -> Option<&'n Node> {
    names.iter().try_fold(node, |node, name| field(node, name))
}

/// One subnet of the eksctl file's `vpc.subnets`.
pub struct Subnet {
    pub name: String,
    pub id: Option<String>,
    pub zone: Option<String>,
    pub private: bool,
}

/// The parts of the eksctl file and the describe-cluster output that the
/// cluster section and the node groups read.
pub struct Input<'a> {
    root: &'a Node,
    described: Option<&'a Node>,
    pub subnets: Vec<Subnet>,
}

impl<'a> Input<'a> {
    pub fn new(root: &'a Node, described: Option<&'a Described>) -> Input<'a> {
        let mut subnets = Vec::new();
        for (kind, private) in [("private", true), ("public", false)] {
            let Some(entries) = path(root, &["vpc", "subnets", kind]).and_then(Node::as_map) else {
                continue;
            };
            for (key, value) in entries {
                let zone = field(value, "az").and_then(text);
                subnets.push(Subnet {
                    name: key.name.clone(),
                    id: field(value, "id").and_then(text),
                    zone: zone.or_else(|| looks_like_zone(&key.name).then(|| key.name.clone())),
                    private,
                });
            }
        }
        Input {
            root,
            described: described.map(|d| &d.cluster),
            subnets,
        }
    }

    pub fn cluster_name(&self) -> String {
        self.described
            .and_then(|c| field(c, "name"))
            .or_else(|| path(self.root, &["metadata", "name"]))
            .and_then(text)
            .unwrap_or_default()
    }

    /// The template description: which cluster, where from.
    pub fn description(&self) -> String {
        let region = path(self.root, &["metadata", "region"]).and_then(text);
        match region {
            Some(region) => format!(
                "Node groups of EKS cluster {} ({region}), imported from eksctl",
                self.cluster_name()
            ),
            None => format!(
                "Node groups of EKS cluster {}, imported from eksctl",
                self.cluster_name()
            ),
        }
    }

    /// `metadata.tags`, which eksctl puts on every node group too.
    pub fn cluster_tags(&self) -> Vec<(Key, Node)> {
        path(self.root, &["metadata", "tags"])
            .and_then(Node::as_map)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }
}

fn looks_like_zone(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    parts.len() >= 3
        && parts
            .last()
            .is_some_and(|last| last.starts_with(|c: char| c.is_ascii_digit()))
}

/// The `cluster` section. `groups` are the imported groups (self-managed,
/// managed), to choose a version their families run.
pub(super) fn import(
    ctx: &mut Ctx,
    input: &Input<'_>,
    entries: &[(Key, Node)],
    groups: &[Vec<Out>; 2],
) -> Out {
    let described = input.described;
    let from_described = |names: &[&str]| described.and_then(|c| path(c, names)).and_then(text);
    let mut cluster = Out::map();
    let name = input.cluster_name();
    if name.is_empty() {
        ctx.error(
            None,
            "the cluster has no name: the eksctl file has no `metadata.name`",
            "write `metadata: {name: CLUSTER}`, or give `--cluster-json`",
        );
    }
    cluster.set("name", Out::str(&name));
    cluster.set("kubernetesVersion", Out::str(&version(ctx, input, groups)));
    let value = |found: Option<String>, parameter: &str| match found {
        Some(v) => Out::str(&v),
        None => Out::parameter(parameter),
    };
    cluster.set(
        "endpoint",
        value(from_described(&["endpoint"]), "ClusterEndpoint"),
    );
    cluster.set(
        "certificateAuthority",
        value(
            from_described(&["certificateAuthority", "data"]),
            "ClusterCertificateAuthority",
        ),
    );
    let eksctl_network =
        |name: &str| path(input.root, &["kubernetesNetworkConfig", name]).and_then(text);
    let ipv6 = from_described(&["kubernetesNetworkConfig", "ipFamily"])
        .or_else(|| eksctl_network("ipFamily"))
        .is_some_and(|f| f.eq_ignore_ascii_case("ipv6"));
    cluster.set(
        "serviceIpv4Cidr",
        value(
            from_described(&["kubernetesNetworkConfig", "serviceIpv4Cidr"])
                .or_else(|| eksctl_network("serviceIPv4CIDR")),
            "ServiceIpv4Cidr",
        ),
    );
    if ipv6 {
        cluster.set("ipFamily", Out::str("ipv6"));
        cluster.set(
            "serviceIpv6Cidr",
            value(
                from_described(&["kubernetesNetworkConfig", "serviceIpv6Cidr"]),
                "ServiceIpv6Cidr",
            ),
        );
    }
    let control_plane_group = described
        .and_then(|c| path(c, &["resourcesVpcConfig", "securityGroupIds"]))
        .and_then(Node::as_seq)
        .and_then(|groups| groups.first())
        .and_then(text)
        .or_else(|| eksctl_id(ctx, input, "securityGroup", "sg", "a security group ID"));
    cluster.set(
        "controlPlaneSecurityGroup",
        value(control_plane_group, "ControlPlaneSecurityGroup"),
    );
    if let Some(group) = from_described(&["resourcesVpcConfig", "clusterSecurityGroupId"]) {
        cluster.set("clusterSecurityGroup", Out::str(&group));
    }
    cluster.set(
        "vpc",
        value(
            from_described(&["resourcesVpcConfig", "vpcId"])
                .or_else(|| eksctl_id(ctx, input, "id", "vpc", "a VPC ID")),
            "VpcId",
        ),
    );
    if let Some(mode) = from_described(&["accessConfig", "authenticationMode"])
        .or_else(|| path(input.root, &["accessConfig", "authenticationMode"]).and_then(text))
    {
        cluster.set("authenticationMode", Out::str(&mode));
    }
    sections(ctx, entries);
    cluster
}

/// An ID of the eksctl file's `vpc` section; one that is no ID of its
/// kind (eksctl's examples write `vpc-1234`) is a warning, and the
/// blueprint takes a parameter instead.
fn eksctl_id(
    ctx: &mut Ctx,
    input: &Input<'_>,
    key: &str,
    kind: &str,
    what: &str,
) -> Option<String> {
    let node = path(input.root, &["vpc", key])?;
    let id = text(node)?;
    if crate::blueprint::rules::is_ec2_id(kind, &id) {
        return Some(id);
    }
    ctx.note(
        node.span,
        format!("`vpc.{key}` `{id}` is not {what}: the blueprint takes a parameter instead"),
        &format!("{what} is `{kind}-` and 8 or 17 lower case hexadecimal digits"),
    );
    None
}

/// The Kubernetes version: describe-cluster's, the eksctl file's, or
/// eksctl's default (the last one Amazon Linux 2 runs on, when a group
/// uses it). A version EKS no longer runs is replaced, with a warning.
fn version(ctx: &mut Ctx, input: &Input<'_>, groups: &[Vec<Out>; 2]) -> String {
    if let Some(v) = input
        .described
        .and_then(|c| field(c, "version"))
        .and_then(text)
    {
        return v;
    }
    let uses_al2 = groups.iter().flatten().any(|g| {
        g.get("amiFamily")
            .is_some_and(|f| f.value == Out::str("AmazonLinux2").value)
    });
    let default = if uses_al2 {
        LAST_AL2_VERSION
    } else {
        EKSCTL_DEFAULT_VERSION
    };
    let written = path(input.root, &["metadata", "version"]);
    match written.and_then(|n| text(n).map(|t| (n, t))) {
        Some((node, v)) => {
            let minor = v.strip_prefix("1.").and_then(|m| m.parse::<u32>().ok());
            if minor.is_some_and(|m| m >= OLDEST_MINOR) {
                return v;
            }
            ctx.note(
                node.span,
                format!("`metadata.version` `{v}` is older than any version EKS runs: the blueprint says {default}"),
                "set `cluster.kubernetesVersion` to the cluster's version, or import with `--cluster-json`",
            );
            default.to_string()
        }
        None => {
            if uses_al2 {
                ctx.note(
                    input.root.span,
                    format!("no `metadata.version`: the blueprint says {LAST_AL2_VERSION}, the last version Amazon Linux 2 runs (eksctl's default is {EKSCTL_DEFAULT_VERSION})"),
                    "set `cluster.kubernetesVersion` to the cluster's version, or import with `--cluster-json`",
                );
            }
            default.to_string()
        }
    }
}

/// The eksctl keys beside the node groups: what the cluster section reads
/// is carried, everything else (the cluster's own configuration) is
/// reported once per key.
fn sections(ctx: &mut Ctx, entries: &[(Key, Node)]) {
    for (key, value) in entries {
        match key.name.as_str() {
            "apiVersion" | "kind" | "nodeGroups" | "managedNodeGroups" => {}
            "metadata" => each_key(ctx, key, value, &["name", "region", "version", "tags"]),
            "vpc" => each_key(ctx, key, value, &["id", "subnets", "securityGroup", "cidr"]),
            "kubernetesNetworkConfig" => {
                each_key(ctx, key, value, &["ipFamily", "serviceIPv4CIDR"]);
            }
            "accessConfig" => each_key(ctx, key, value, &["authenticationMode"]),
            name if super::TOP_LEVEL.contains(&name) => ctx.unmapped(
                None,
                key,
                name,
                "it configures the cluster, not its node groups: eksynth writes node groups only",
            ),
            _ => {}
        }
    }
}

fn each_key(ctx: &mut Ctx, section: &Key, node: &Node, carried: &[&str]) {
    for (key, _) in node.as_map().unwrap_or_default() {
        if !carried.contains(&key.name.as_str()) {
            let path = format!("{}.{}", section.name, key.name);
            ctx.unmapped(
                None,
                key,
                &path,
                "it configures the cluster, not its node groups: eksynth writes node groups only",
            );
        }
    }
}

/// A parameter name for subnets of a kind, in some zones.
pub fn subnets_parameter(private: bool, zones: &[String]) -> String {
    let kind = if private { "Private" } else { "Public" };
    let zones: String = zones.iter().map(|z| pascal(z)).collect();
    format!("{kind}Subnets{zones}")
}
