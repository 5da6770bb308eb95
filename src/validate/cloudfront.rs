//! CloudFront distributions: every alternate domain name in
//! `DistributionConfig/Aliases` must be a lowercase host name, with `*` only
//! as its whole first label (`E7015`). CloudFront refuses anything else when
//! it creates or updates the distribution: the Amazon CloudFront Developer
//! Guide's "Requirements for using alternate domain names" (CNAMEs.html)
//! asks for lowercase names and a wildcard only as a leading `*.`, and a
//! host name's labels are letters, digits and hyphens, neither first nor
//! last a hyphen (RFC 1123). cfn-lint (E3013) and cloudformation-validate
//! check the same.

use super::Finding;
use super::schema::is_dynamic_reference;
use crate::cfn::{Expr, Template};

const DISTRIBUTION: &str = "AWS::CloudFront::Distribution";

/// The longest label of a domain name (RFC 1035).
const LABEL_MAX: usize = 63;

/// The longest domain name, without a trailing dot (RFC 1035).
const NAME_MAX: usize = 253;

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        if resource.kind != DISTRIBUTION {
            continue;
        }
        let Some(Expr::Map(config)) = resource.properties.get("DistributionConfig") else {
            continue;
        };
        let Some(aliases) = config.get("Aliases") else {
            continue;
        };
        let path = format!("Resources/{id}/Properties/DistributionConfig/Aliases");
        check_aliases(aliases, &path, findings);
    }
}

/// Each literal name of `aliases`, a list or a `Fn::If` between lists or
/// names; names made by intrinsics are not known before deployment.
fn check_aliases(aliases: &Expr, path: &str, findings: &mut Vec<Finding>) {
    match aliases {
        Expr::List(items) => {
            for (index, item) in items.iter().enumerate() {
                check_aliases(item, &format!("{path}/{index}"), findings);
            }
        }
        Expr::If {
            then, otherwise, ..
        } => {
            check_aliases(then, &format!("{path}/Fn::If/1"), findings);
            check_aliases(otherwise, &format!("{path}/Fn::If/2"), findings);
        }
        Expr::String(name) if !is_dynamic_reference(name) => {
            if let Some(problem) = problem(name) {
                findings.push(
                    Finding::new(
                        "E7015",
                        path.to_string(),
                        format!("CloudFront alias \"{name}\" {problem}"),
                    )
                    .help("an alternate domain name is a lowercase host name (`www.example.com`), or one with `*` as its whole first label (`*.example.com`)"),
                );
            }
        }
        _ => {}
    }
}

/// What is wrong with `name` as an alternate domain name, if anything.
fn problem(name: &str) -> Option<String> {
    if name.len() > NAME_MAX {
        return Some(format!("is longer than {NAME_MAX} characters"));
    }
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        return Some("is not lowercase".to_string());
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return Some("is not a domain name with at least two labels".to_string());
    }
    for (index, label) in labels.iter().enumerate() {
        if *label == "*" {
            if index > 0 {
                return Some("has a wildcard past its first label".to_string());
            }
            continue;
        }
        if label.contains('*') {
            return Some("has a wildcard that is not a whole label".to_string());
        }
        if label.is_empty() {
            return Some("has an empty label".to_string());
        }
        if label.len() > LABEL_MAX {
            return Some(format!("has a label longer than {LABEL_MAX} characters"));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Some(format!("holds {c:?}, which no host name holds"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Some(format!(
                "has the label \"{label}\", which starts or ends with a hyphen"
            ));
        }
    }
    let top = labels[labels.len() - 1];
    if top.len() < 2 || top == "*" {
        return Some(format!("ends in \"{top}\", which is no top-level domain"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn host_names_and_a_leading_wildcard_pass() {
        for name in [
            "www.example.com",
            "*.example.com",
            "xn--caf-dma.com",
            "1111111111.ex--ample.nl",
            "e-mail.internal.ex-ample.eu",
        ] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    #[test]
    fn what_cloudfront_refuses_is_named() {
        for (name, expected) in [
            ("email.*.example.com", "has a wildcard past its first label"),
            (
                "*www.example.com",
                "has a wildcard that is not a whole label",
            ),
            ("WWW.EXAMPLE.COM", "is not lowercase"),
            (
                "-example.com",
                "has the label \"-example\", which starts or ends with a hyphen",
            ),
            (
                "www.example.com-",
                "has the label \"com-\", which starts or ends with a hyphen",
            ),
            ("example.c", "ends in \"c\", which is no top-level domain"),
            ("www.example.com ", "holds ' ', which no host name holds"),
            ("www..example.com", "has an empty label"),
            ("localhost", "is not a domain name with at least two labels"),
        ] {
            assert_eq!(problem(name).as_deref(), Some(expected), "{name}");
        }
    }
}
