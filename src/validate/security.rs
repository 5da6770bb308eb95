//! Security defaults: IMDSv2 and its hop limit, encrypted volumes, no SSH
//! open to the internet, no hard-coded partition, no wildcard IAM actions.

use super::{Finding, literal, literal_number, walk_resource};
use crate::cfn::{Expr, Template};

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        match resource.kind.as_str() {
            "AWS::EC2::LaunchTemplate" => {
                if let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData") {
                    let base = format!("{base}/LaunchTemplateData");
                    check_metadata_options(data.get("MetadataOptions"), &base, findings);
                    check_volumes(
                        data.get("BlockDeviceMappings"),
                        &format!("{base}/BlockDeviceMappings"),
                        findings,
                    );
                }
            }
            "AWS::EC2::SecurityGroup" => {
                if let Some(Expr::List(rules)) = resource.properties.get("SecurityGroupIngress") {
                    for (i, rule) in rules.iter().enumerate() {
                        if let Expr::Map(rule) = rule {
                            check_ingress(
                                rule,
                                &format!("{base}/SecurityGroupIngress/{i}"),
                                findings,
                            );
                        }
                    }
                }
            }
            "AWS::EC2::SecurityGroupIngress" => {
                check_ingress(&resource.properties, &base, findings)
            }
            _ => {}
        }
        walk_resource(id, resource, &mut |expr, path| {
            let text = match expr {
                Expr::String(text) => Some(text.as_str()),
                Expr::Sub { template, .. } => Some(template.as_str()),
                _ => None,
            };
            if text.is_some_and(|t| t.contains("arn:aws:")) {
                findings.push(
                    Finding::new("W5006", path, "a hard-coded `arn:aws:` ARN does not work in other partitions (China, GovCloud)")
                        .help("write `arn:${AWS::Partition}:` inside `Fn::Sub`"),
                );
            }
            if let Expr::Map(statement) = expr {
                check_statement(statement, path, findings);
            }
        });
    }
}

/// An IAM policy statement that allows every action, or every action of a
/// service. A `Deny` statement with a wildcard is a guard rail, not a grant.
fn check_statement(
    statement: &indexmap::IndexMap<String, Expr>,
    path: &str,
    findings: &mut Vec<Finding>,
) {
    let allows = statement
        .get("Effect")
        .and_then(literal)
        .is_some_and(|e| e == "Allow");
    let Some(action) = statement.get("Action") else {
        return;
    };
    if !allows {
        return;
    }
    let actions: Vec<(String, &Expr)> = match action {
        Expr::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("{path}/Action/{i}"), a))
            .collect(),
        other => vec![(format!("{path}/Action"), other)],
    };
    for (action_path, action) in actions {
        if let Some(action) = literal(action)
            && (action == "*" || action.ends_with(":*"))
        {
            findings.push(
                Finding::new(
                    "W5007",
                    action_path,
                    format!("the IAM action `{action}` allows every action"),
                )
                .help("list the actions the role needs"),
            );
        }
    }
}

fn check_metadata_options(options: Option<&Expr>, base: &str, findings: &mut Vec<Finding>) {
    // Chosen at deploy time: nothing to say about it here.
    if options.is_some_and(Expr::is_intrinsic) {
        return;
    }
    let Some(Expr::Map(options)) = options else {
        findings.push(
            Finding::new(
                "W5001",
                base.to_string(),
                "no `MetadataOptions`: instances accept IMDSv1",
            )
            .help("set `MetadataOptions: {HttpTokens: required, HttpPutResponseHopLimit: 1}`"),
        );
        return;
    };
    let path = format!("{base}/MetadataOptions");
    match options.get("HttpTokens").and_then(literal).as_deref() {
        Some("required") => {}
        Some(_) | None if options.get("HttpTokens").is_none_or(|t| !t.is_intrinsic()) => findings.push(
            Finding::new("W5001", format!("{path}/HttpTokens"), "IMDSv1 is allowed: `HttpTokens` is not `required`")
                .help("SSRF bugs in any process can read the node's credentials through IMDSv1; set `HttpTokens: required`"),
        ),
        _ => {}
    }
    if let Some(hops) = options
        .get("HttpPutResponseHopLimit")
        .and_then(literal_number)
    {
        let hop_path = format!("{path}/HttpPutResponseHopLimit");
        if !(1..=64).contains(&hops) {
            findings.push(Finding::new(
                "E5003",
                hop_path,
                format!("hop limit {hops} is outside 1 to 64"),
            ));
        } else if hops > 1 {
            findings.push(
                Finding::new(
                    "W5002",
                    hop_path,
                    format!("hop limit {hops} lets containers reach the node's IMDS credentials"),
                )
                .help("keep 1 unless an agent running in a container needs IMDS"),
            );
        }
    }
}

fn check_volumes(mappings: Option<&Expr>, base: &str, findings: &mut Vec<Finding>) {
    let Some(Expr::List(mappings)) = mappings else {
        return;
    };
    for (i, mapping) in mappings.iter().enumerate() {
        let Expr::Map(mapping) = mapping else {
            continue;
        };
        let Some(Expr::Map(ebs)) = mapping.get("Ebs") else {
            continue;
        };
        let encrypted = ebs.get("Encrypted");
        let plain = match encrypted {
            None => true,
            Some(Expr::Bool(b)) => !b,
            Some(other) => literal(other).is_some_and(|v| v != "true"),
        };
        if plain {
            findings.push(
                Finding::new("W5004", format!("{base}/{i}/Ebs/Encrypted"), "the EBS volume is not encrypted")
                    .help("set `Encrypted: true`; the account's default EBS key is used unless `KmsKeyId` is set"),
            );
        }
    }
}

fn check_ingress(rule: &indexmap::IndexMap<String, Expr>, path: &str, findings: &mut Vec<Finding>) {
    let open = ["CidrIp", "CidrIpv6"]
        .iter()
        .filter_map(|key| rule.get(*key).and_then(literal))
        .any(|cidr| cidr == "0.0.0.0/0" || cidr == "::/0");
    if !open {
        return;
    }
    let protocol = rule.get("IpProtocol").and_then(literal).unwrap_or_default();
    let from = rule.get("FromPort").and_then(literal_number);
    let to = rule.get("ToPort").and_then(literal_number);
    let all_ports = protocol == "-1" || protocol == "all";
    let covers_ssh = matches!((from, to), (Some(from), Some(to)) if from <= 22 && 22 <= to);
    if all_ports || (protocol == "tcp" || protocol == "6") && covers_ssh {
        findings.push(
            Finding::new(
                "E5005",
                path.to_string(),
                "SSH (port 22) is open to the whole internet",
            )
            .help("allow SSH only from a bastion or VPN range, or use SSM Session Manager"),
        );
    }
}
