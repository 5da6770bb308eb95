//! The rules of a node group's networking fields that depend on other
//! fields: instance tags in IMDS, public addresses, SSH sources, the
//! shared security group and the cluster's IP family.

use super::read::Opt;
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::{AmiFamily, Cluster, IpFamily, NodeSecurityGroup, Source, Ssh};
use crate::cidr::{Cidr, Cover, Family, Problem, cover};
use crate::source::Span;
use crate::syntax::{Node, Value};
use serde_json::{Value as Json, json};

/// Whether the instance's tags are readable from IMDS
/// (`imds.instanceTags`). EC2 then refuses to launch an instance with a tag
/// key outside `[0-9a-zA-Z\-_+=,.@:]{1,255}` or named `.`, `..` or `_index`
/// (the key is a path segment of `/latest/meta-data/tags/instance/`).
pub(super) fn check_instance_tags(
    d: &mut Decoder,
    instance_tags: &Opt<bool>,
    tags: &[(Located<String>, Located<String>)],
    is_managed: bool,
) -> bool {
    let Some(flag) = instance_tags.as_ref().filter(|f| f.value) else {
        return false;
    };
    if is_managed {
        // EKS copies the launch template into its own and does not carry
        // the option over; its instances carry `k8s.io/...` tags anyway.
        d.error(flag.span, "`imds.instanceTags` is not available on a managed node group")
            .help = Some(
            "EKS tags a managed group's instances with keys that hold `/`, which instance tags in IMDS cannot carry; use a self-managed group".into(),
        );
        return false;
    }
    let mut ok = true;
    for (key, _) in tags {
        if !imds_tag_key_ok(&key.value) {
            ok = false;
            let message = format!(
                "tag key `{}` cannot be read from IMDS, and EC2 refuses to launch an instance with it when `imds.instanceTags` is on",
                key.value
            );
            d.error(key.span, message).help = Some(
                "use letters, digits and `-_+=,.@:` only (no `/` or spaces), or turn `imds.instanceTags` off".into(),
            );
        }
    }
    if ok {
        d.warning(
            flag.span,
            "with `imds.instanceTags`, the nodes do not get the `kubernetes.io/cluster/<name>` tag (EC2 refuses tag keys with `/` then); it stays on the Auto Scaling group",
        )
        .help = Some(
            "tools that find the cluster's instances by that tag (such as the in-tree AWS cloud provider's classic load balancers) do not see these nodes".into(),
        );
    }
    ok
}

fn imds_tag_key_ok(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 255
        && !matches!(key, "." | ".." | "_index")
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_+=,.@:".contains(c))
}

/// Whether the nodes get a public IPv4 address
/// (`associatePublicIpAddress`), with a warning when they do. EC2
/// assigns a public address only to an instance launched with one network
/// interface, so an EFA group with several network cards (one interface
/// each) cannot have one.
pub(super) fn check_public_ip(d: &mut Decoder, associate: &Opt<bool>, efa_cards: u32) -> bool {
    let Some(flag) = associate.as_ref().filter(|f| f.value) else {
        return false;
    };
    if efa_cards > 1 {
        let message = format!(
            "`associatePublicIpAddress: true` needs one network interface, and this `efa` group attaches {efa_cards} (one per network card)"
        );
        d.error(flag.span, message).help = Some(
            "EC2 gives a public address only to instances launched with a single interface; use private subnets for EFA groups".into(),
        );
        return false;
    }
    // The finding `validate` reports on the template, said at the field.
    let warning = d.warning(
        flag.span,
        "`associatePublicIpAddress: true` gives every node an internet-reachable address",
    );
    warning.code = Some("W8006");
    warning.help = Some(
        "only the security groups stand between the nodes and the internet; prefer private subnets with a NAT gateway".into(),
    );
    true
}

/// A list of security groups in the JSON Schema: IDs or value sources.
pub(super) fn security_groups_schema(doc: &str) -> Json {
    json!({
        "description": doc,
        "type": "array",
        "items": {"anyOf": [{"type": "string", "pattern": "^sg-"}, {"$ref": "#/definitions/source"}]},
    })
}

/// `ssh.sourceCidrs` in the JSON Schema.
fn cidrs_schema(doc: &str) -> Json {
    json!({"description": doc, "type": "array", "items": {"type": "string"}})
}

pub(in crate::blueprint) const SSH_FIELDS: &[Field] = &[
    Field::new(
        "sourceSecurityGroups",
        Ty::Custom {
            schema: security_groups_schema,
            reads: "list of security group IDs (`sg-…`), `{parameter: Name}` or `{import: \
                ExportName}`",
        },
        "Security groups allowed in on port 22: IDs, `{parameter: Name}` or \
        `{import: ExportName}`",
    ),
    Field::new(
        "sourceCidrs",
        Ty::Custom {
            schema: cidrs_schema,
            reads: "list of IPv4 or IPv6 CIDRs",
        },
        "IPv4 or IPv6 CIDRs allowed in on port 22 (never the whole internet)",
    ),
];

#[derive(Clone)]
pub(super) struct SshSpec {
    source_security_groups: Vec<Located<Source>>,
    source_cidrs: Vec<Located<String>>,
}

pub(super) fn decode_ssh(d: &mut Decoder, node: &Node) -> Opt<SshSpec> {
    let mut f = d.fields("ssh", node, SSH_FIELDS)?;
    let groups = f
        .get("sourceSecurityGroups")
        .and_then(|n| decode_security_group_list(d, "ssh.sourceSecurityGroups", n));
    let cidrs = f
        .get("sourceCidrs")
        .and_then(|n| d.string_list("ssh.sourceCidrs", n));
    f.finish(d, "`ssh`");
    let failed = (groups.is_none() && f.given("sourceSecurityGroups"))
        || (cidrs.is_none() && f.given("sourceCidrs"));
    if failed {
        return None;
    }
    let spec = SshSpec {
        source_security_groups: groups.map(|g| g.value).unwrap_or_default(),
        source_cidrs: cidrs.unwrap_or_default(),
    };
    if spec.source_security_groups.is_empty() && spec.source_cidrs.is_empty() {
        d.error(node.span, "`ssh` names no source").help =
            Some("list `sourceSecurityGroups` or `sourceCidrs` (a bastion or VPN range)".into());
        return None;
    }
    let ok = check_source_cidrs(d, &spec.source_cidrs);
    ok.then(|| Located::new(spec, node.span))
}

/// Each of `ssh.sourceCidrs` is a block the provider schema takes, and no
/// block nor blocks together cover every address of a family: judged by
/// arithmetic (`crate::cidr`), as `validate` judges the rules they become
/// (`E5005`, `E5011`), so that `0.0.0.0/00`, or `0.0.0.0/1` with
/// `128.0.0.0/1`, are refused at the blueprint's own field.
fn check_source_cidrs(d: &mut Decoder, cidrs: &[Located<String>]) -> bool {
    let help = "allow SSH only from a bastion or VPN range, or use SSM Session Manager";
    let mut ok = true;
    // Each block and the source that names it; a block with host bits set
    // opens its network, as EC2 keeps it.
    let mut blocks: Vec<(&Located<String>, Cidr)> = Vec::new();
    for cidr in cidrs {
        let parsed = Cidr::parse(&cidr.value);
        if let Err(problem) = &parsed {
            ok = false;
            let message = format!("`ssh.sourceCidrs` `{}` {problem}", cidr.value);
            d.error(cidr.span, message).help =
                Some("write an IPv4 or IPv6 CIDR such as `10.0.0.0/16`".into());
        }
        if let Ok(block) | Err(Problem::HostBits(block)) = parsed {
            blocks.push((cidr, block));
        }
    }
    let cidrs: Vec<Cidr> = blocks.iter().map(|(_, block)| *block).collect();
    for family in [Family::V4, Family::V6] {
        let Some(found) = cover(family, &cidrs) else {
            continue;
        };
        ok = false;
        let reports: Vec<(Span, String)> = match found {
            Cover::Alone(whole) => whole
                .into_iter()
                .map(|i| {
                    let source = blocks[i].0;
                    let message = format!(
                        "`ssh.sourceCidrs` `{}` opens SSH (port 22) to the whole internet",
                        source.value
                    );
                    (source.span, message)
                })
                .collect(),
            Cover::Together(pieces) => {
                let Some((&last, before)) = pieces.split_last() else {
                    continue;
                };
                let before: Vec<String> = before
                    .iter()
                    .map(|&i| format!("`{}`", blocks[i].0.value))
                    .collect();
                let last = blocks[last].0;
                let message = format!(
                    "`ssh.sourceCidrs` {} and `{}` together open SSH (port 22) to the whole internet (`{}`)",
                    before.join(", "),
                    last.value,
                    family.everything()
                );
                vec![(last.span, message)]
            }
        };
        for (span, message) in reports {
            let diagnostic = d.error(span, message);
            diagnostic.code = Some("E5005");
            diagnostic.help = Some(help.into());
        }
    }
    ok
}

/// Extra security groups: each an ID, `{parameter: Name}` (an
/// `AWS::EC2::SecurityGroup::Id` parameter) or `{import: ExportName}` (an
/// export holding one ID).
pub(super) fn decode_security_groups(d: &mut Decoder, node: &Node) -> Opt<Vec<Located<Source>>> {
    decode_security_group_list(d, "securityGroups", node)
}

/// A list of security groups, each an ID or a value source.
pub(super) fn decode_security_group_list(
    d: &mut Decoder,
    field: &str,
    node: &Node,
) -> Opt<Vec<Located<Source>>> {
    let Value::Seq(items) = &node.value else {
        d.wrong_type(
            field,
            node,
            "a list of security group IDs, `{parameter: Name}` or `{import: ExportName}`",
        );
        return None;
    };
    let mut groups = Vec::new();
    for item in items {
        let source = match &item.value {
            Value::Map(_) => decode_source(d, field, item),
            _ => d
                .string(field, item)
                .map(|s| Located::new(Source::Literal(s.value), s.span)),
        };
        let Some(source) = source else { continue };
        if let Source::Literal(id) = &source.value
            && !crate::blueprint::rules::is_ec2_id("sg", id)
        {
            d.error(source.span, format!("`{id}` is not a security group ID"))
                .help = Some(
                "security group IDs look like `sg-0123456789abcdef0`; or write `{parameter: Name}` or `{import: ExportName}`".into(),
            );
            continue;
        }
        groups.push(source);
    }
    Some(Located::new(groups, node.span))
}

/// The SSH sources of a group, which need `keyName` (the only way in), and
/// an SSH server: EKS Windows images run none.
pub(super) fn check_ssh(
    d: &mut Decoder,
    ssh: &Opt<SshSpec>,
    key_name: &Opt<String>,
    family: AmiFamily,
) -> Option<Ssh> {
    let ssh = ssh.as_ref()?;
    if key_name.is_none() {
        d.error(ssh.span, "`ssh` needs `keyName`").help =
            Some("set `keyName` to the EC2 key pair the nodes accept".into());
        return None;
    }
    if let AmiFamily::Windows(_) = family {
        d.error(ssh.span, "`ssh` is not available on Windows nodes")
            .help = Some("EKS Windows images run no SSH server; use SSM Session Manager".into());
        return None;
    }
    Some(Ssh {
        source_security_groups: ssh.value.source_security_groups.clone(),
        source_cidrs: ssh
            .value
            .source_cidrs
            .iter()
            .map(|c| c.value.clone())
            .collect(),
    })
}

/// The values of `nodeSecurityGroup`, shared by the loader and the JSON
/// Schema.
pub(in crate::blueprint) const NODE_SECURITY_GROUPS: &[(&str, NodeSecurityGroup)] = &[
    ("shared", NodeSecurityGroup::Shared),
    ("cluster", NodeSecurityGroup::Cluster),
];

/// `nodeSecurityGroup: cluster` needs the cluster security group's ID.
pub(super) fn check_node_security_group(
    d: &mut Decoder,
    choice: &Opt<NodeSecurityGroup>,
    cluster: &Cluster,
) -> NodeSecurityGroup {
    let Some(choice) = choice else {
        return NodeSecurityGroup::Shared;
    };
    if choice.value == NodeSecurityGroup::Cluster && cluster.cluster_security_group.is_none() {
        d.error(
            choice.span,
            "`nodeSecurityGroup: cluster` needs `cluster.clusterSecurityGroup`",
        )
        .help = Some(
            "set `cluster.clusterSecurityGroup` to the cluster security group's ID (`aws eks describe-cluster --query cluster.resourcesVpcConfig.clusterSecurityGroupId`)".into(),
        );
    }
    choice.value
}

/// EKS Windows nodes do not support IPv6 clusters
/// (<https://docs.aws.amazon.com/eks/latest/userguide/cni-ipv6.html>).
pub(super) fn check_ip_family(d: &mut Decoder, cluster: &Cluster, family: AmiFamily, at: Span) {
    if let (Some((IpFamily::Ipv6, family_at)), AmiFamily::Windows(_)) = (cluster.ip_family, family)
    {
        let message = "Windows nodes cannot join an IPv6 cluster";
        d.error(at, message).help = Some(format!(
            "EKS supports IPv6 on Linux nodes only (`cluster.ipFamily: ipv6` at line {}); use a Linux family or an IPv4 cluster",
            family_at.line
        ));
    }
}
