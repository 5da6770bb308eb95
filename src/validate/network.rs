//! Who can reach SSH: the ingress rules of each security group taken
//! together (its inline `SecurityGroupIngress` and the
//! `AWS::EC2::SecurityGroupIngress` resources attached to it), judged by
//! CIDR arithmetic (`crate::cidr`), so that the internet cut in pieces is
//! still the internet (`E5005`); a managed node group's `RemoteAccess` key
//! without source security groups, which EKS opens to the internet
//! (`E5005`); and a rule's CIDR that the provider schema refuses or that
//! EC2 reads as another block (`E5011`).

use indexmap::IndexMap;

use super::{Finding, literal, literal_number};
use crate::cfn::{Expr, Template};
use crate::cidr::{Cidr, Cover, Family, Problem, cover};

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    // Every SSH block, by the security group its rule belongs to.
    let mut groups: IndexMap<String, Vec<Block>> = IndexMap::new();
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        match resource.kind.as_str() {
            "AWS::EC2::SecurityGroup" => {
                for key in ["SecurityGroupIngress", "SecurityGroupEgress"] {
                    let Some(Expr::List(rules)) = resource.properties.get(key) else {
                        continue;
                    };
                    for (i, rule) in rules.iter().enumerate() {
                        if let Expr::Map(rule) = rule {
                            let path = format!("{base}/{key}/{i}");
                            let blocks = rule_blocks(rule, &path, findings);
                            if key == "SecurityGroupIngress" && opens_ssh(rule) {
                                groups.entry(id.clone()).or_default().extend(blocks);
                            }
                        }
                    }
                }
            }
            "AWS::EC2::SecurityGroupIngress" => {
                let blocks = rule_blocks(&resource.properties, &base, findings);
                if opens_ssh(&resource.properties) {
                    let group = attached_to(&resource.properties).unwrap_or_else(|| id.clone());
                    groups.entry(group).or_default().extend(blocks);
                }
            }
            "AWS::EC2::SecurityGroupEgress" => {
                rule_blocks(&resource.properties, &base, findings);
            }
            "AWS::EKS::Nodegroup" => {
                remote_access(resource.properties.get("RemoteAccess"), &base, findings)
            }
            _ => {}
        }
    }
    for blocks in groups.values() {
        for family in [Family::V4, Family::V6] {
            internet(blocks, family, findings);
        }
    }
}

/// One CIDR block of a rule that lets SSH in, with where it is written.
struct Block {
    path: String,
    written: String,
    cidr: Cidr,
}

/// The blocks a rule names, each read as EC2 would take it; a string the
/// provider schema refuses is reported.
fn rule_blocks(
    rule: &IndexMap<String, Expr>,
    path: &str,
    findings: &mut Vec<Finding>,
) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (key, family) in [("CidrIp", Family::V4), ("CidrIpv6", Family::V6)] {
        let Some(Expr::String(text)) = rule.get(key) else {
            continue;
        };
        let at = format!("{path}/{key}");
        let format = match family {
            Family::V4 => "ipv4-network",
            Family::V6 => "ipv6-network",
        };
        let problem = match Cidr::parse(text) {
            Ok(cidr) if cidr.family != family => Some(format!(
                "`{key}` takes an {} block, not `{text}`",
                if family == Family::V4 { "IPv4" } else { "IPv6" }
            )),
            Ok(_) => None,
            Err(Problem::HostBits(network)) => Some(format!(
                "`{text}` has host bits set: EC2 keeps it as `{network}`, and the provider schema's `{format}` format refuses it"
            )),
            Err(problem) => Some(format!(
                "`{text}` {problem}: the provider schema's `{format}` format refuses it"
            )),
        };
        if let Some(message) = problem {
            findings.push(
                Finding::new("E5011", at.clone(), message)
                    .help("write the network address and its prefix length, e.g. `10.0.0.0/16` or `2001:db8::/32`, with no spaces or leading zeros"),
            );
        }
        if let Some(cidr) = Cidr::read(text).filter(|cidr| cidr.family == family) {
            blocks.push(Block {
                path: path.to_string(),
                written: text.clone(),
                cidr,
            });
        }
    }
    blocks
}

/// Whether a rule lets port 22 in: every protocol, or TCP with a port range
/// that holds 22. A protocol or port that is not written out is not judged.
fn opens_ssh(rule: &IndexMap<String, Expr>) -> bool {
    let protocol = rule.get("IpProtocol").and_then(literal).unwrap_or_default();
    if protocol == "-1" || protocol == "all" {
        return true;
    }
    let from = rule.get("FromPort").and_then(literal_number);
    let to = rule.get("ToPort").and_then(literal_number);
    (protocol == "tcp" || protocol == "6")
        && matches!((from, to), (Some(from), Some(to)) if from <= 22 && 22 <= to)
}

/// The security group an `AWS::EC2::SecurityGroupIngress` adds its rule
/// to: the logical ID it refers to, or the ID written out.
fn attached_to(properties: &IndexMap<String, Expr>) -> Option<String> {
    match properties
        .get("GroupId")
        .or_else(|| properties.get("GroupName"))?
    {
        Expr::Ref(id) => Some(id.clone()),
        Expr::GetAtt { resource, .. } => Some(resource.clone()),
        Expr::String(id) => Some(id.clone()),
        _ => None,
    }
}

/// SSH from every address of `family`: one block that is all of it, each
/// reported at its rule, or else blocks that cover it together, reported
/// once at the rule that completes the cover.
fn internet(blocks: &[Block], family: Family, findings: &mut Vec<Finding>) {
    let everything = family.everything();
    let help = "allow SSH only from a bastion or VPN range, or use SSM Session Manager";
    let cidrs: Vec<Cidr> = blocks.iter().map(|b| b.cidr).collect();
    match cover(family, &cidrs) {
        None => {}
        Some(Cover::Alone(whole)) => {
            for block in whole.into_iter().map(|i| &blocks[i]) {
                let read = if block.written == everything {
                    String::new()
                } else {
                    format!(" (`{}` is `{everything}`)", block.written)
                };
                findings.push(
                    Finding::new(
                        "E5005",
                        block.path.clone(),
                        format!("SSH (port 22) is open to the whole internet{read}"),
                    )
                    .help(help),
                );
            }
        }
        Some(Cover::Together(pieces)) => {
            let last = pieces.last().map_or(0, |&i| i);
            let pieces: Vec<String> = pieces
                .iter()
                .map(|&i| format!("`{}`", blocks[i].written))
                .collect();
            let listed = match pieces.as_slice() {
                [first @ .., last] if first.len() < 6 => {
                    format!("{} and {last}", first.join(", "))
                }
                _ => format!("{} and {} more", pieces[..5].join(", "), pieces.len() - 5),
            };
            findings.push(
                Finding::new(
                    "E5005",
                    blocks[last].path.clone(),
                    format!(
                        "SSH (port 22) is open to the whole internet: the security group's rules {listed} together cover `{everything}`"
                    ),
                )
                .help(help),
            );
        }
    }
}

/// A managed node group's `RemoteAccess` with a key and no source security
/// groups: EKS then opens port 22 to `0.0.0.0/0` (EKS API Reference,
/// `RemoteAccessConfig.sourceSecurityGroups`).
fn remote_access(value: Option<&Expr>, base: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::Map(access)) = value else {
        return;
    };
    if !access.contains_key("Ec2SshKey") {
        return;
    }
    let sources = match access.get("SourceSecurityGroups") {
        None => false,
        Some(Expr::List(groups)) => !groups.is_empty(),
        Some(_) => true,
    };
    if !sources {
        findings.push(
            Finding::new(
                "E5005",
                format!("{base}/RemoteAccess"),
                "SSH (port 22) is open to the whole internet: EKS opens it to `0.0.0.0/0` for a `RemoteAccess` key without `SourceSecurityGroups`",
            )
            .help("list the security groups that may reach the nodes in `SourceSecurityGroups`, or use SSM Session Manager"),
        );
    }
}
