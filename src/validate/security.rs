//! Security defaults: IMDSv2 and its hop limit, encrypted volumes, no
//! hard-coded partition, no wildcard IAM actions. Who can reach SSH is
//! `network.rs`'s.

use super::values::possible;
use super::{Finding, literal, literal_number, walk_resource};
use crate::cfn::{Expr, Template};

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let base = format!("Resources/{id}/Properties");
        if resource.kind == "AWS::EC2::LaunchTemplate"
            && let Some(Expr::Map(data)) = resource.properties.get("LaunchTemplateData")
        {
            let base = format!("{base}/LaunchTemplateData");
            metadata_options(
                template,
                data.get("MetadataOptions"),
                &base,
                &format!("{base}/MetadataOptions"),
                findings,
            );
            check_volumes(
                data.get("BlockDeviceMappings"),
                &format!("{base}/BlockDeviceMappings"),
                findings,
            );
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

/// The options at `path` (`missing` where their absence is reported). An
/// `Fn::If` between option sets has each branch judged as if written in
/// its place, `AWS::NoValue` as no options at all.
fn metadata_options(
    template: &Template,
    options: Option<&Expr>,
    missing: &str,
    path: &str,
    findings: &mut Vec<Finding>,
) {
    if let Some(Expr::If {
        then, otherwise, ..
    }) = options
    {
        for (branch, value) in [(1, then), (2, otherwise)] {
            let at = format!("{path}/Fn::If/{branch}");
            let value = Some(value.as_ref())
                .filter(|v| !matches!(v, Expr::Ref(name) if name == "AWS::NoValue"));
            metadata_options(template, value, &at, &at, findings);
        }
        return;
    }
    // Chosen at deploy time: nothing to say about it here.
    if options.is_some_and(Expr::is_intrinsic) {
        return;
    }
    let Some(Expr::Map(options)) = options else {
        findings.push(
            Finding::new(
                "W5001",
                missing.to_string(),
                "no `MetadataOptions`: instances accept IMDSv1",
            )
            .help("set `MetadataOptions: {HttpTokens: required, HttpPutResponseHopLimit: 1}`"),
        );
        return;
    };
    if let Some(message) = imdsv1(template, options.get("HttpTokens")) {
        findings.push(
            Finding::new("W5001", format!("{path}/HttpTokens"), message)
                .help("SSRF bugs in any process can read the node's credentials through IMDSv1; set `HttpTokens: required`"),
        );
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

/// Why `HttpTokens` allows IMDSv1, if it does: written as anything but
/// `required` (or left out), or computed by a function that can give
/// `optional` (`values::possible`). A computed value none of whose known
/// values is `optional` is not reported, even when it can also be
/// something told only at deployment (an attribute, an import, a parameter
/// without `AllowedValues`): the template asks for nothing weaker.
fn imdsv1(template: &Template, tokens: Option<&Expr>) -> Option<String> {
    let Some(tokens) = tokens.filter(|tokens| tokens.is_intrinsic()) else {
        return (tokens.and_then(literal).as_deref() != Some("required"))
            .then(|| "IMDSv1 is allowed: `HttpTokens` is not `required`".to_string());
    };
    if !possible(template, tokens).known.contains("optional") {
        return None;
    }
    Some(match tokens {
        Expr::Ref(name) => format!(
            "IMDSv1 is allowed: `HttpTokens` is the parameter `{name}`, which can be `optional`"
        ),
        other => format!(
            "IMDSv1 is allowed: `HttpTokens` is computed by `{}`, which can give `optional`",
            other.function_name().unwrap_or("a function")
        ),
    })
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
