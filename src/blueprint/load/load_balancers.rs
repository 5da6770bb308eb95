//! The load balancers a self-managed group's Auto Scaling group registers
//! its instances with: `targetGroupArns` (Application, Network and Gateway
//! Load Balancers) and `classicLoadBalancerNames`, each item a literal,
//! `{parameter: Name}` or `{import: ExportName}`.

use super::read::Opt;
use super::sources::decode_source;
use crate::blueprint::Source;
use crate::blueprint::decode::{Decoder, Located};
use crate::syntax::{Node, Value};

/// The most target groups, and the most Classic Load Balancers, one Auto
/// Scaling group takes: the fixed quotas "Elastic Load Balancing target
/// groups per Auto Scaling group" and "Classic Load Balancers per Auto
/// Scaling group" (<https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-quotas.html>).
pub(in crate::blueprint) const MAX_LOAD_BALANCERS: u32 = 50;

/// `targetGroupArns`: each a target group's ARN (the partition, region and
/// account may be `${AWS::Partition}`, `${AWS::Region}` and
/// `${AWS::AccountId}`), or a value source holding one.
pub(super) fn decode_target_groups(d: &mut Decoder, node: &Node) -> Opt<Vec<Located<Source>>> {
    decode_list(d, "targetGroupArns", node, |text| {
        (!is_target_group_arn(text)).then_some(
            "target group ARNs look like `arn:${AWS::Partition}:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123456789abcdef`",
        )
    })
}

/// `classicLoadBalancerNames`: each a Classic Load Balancer's name, or a
/// value source holding one.
pub(super) fn decode_classic_load_balancers(
    d: &mut Decoder,
    node: &Node,
) -> Opt<Vec<Located<Source>>> {
    decode_list(d, "classicLoadBalancerNames", node, |text| {
        (!is_classic_load_balancer_name(text)).then_some(
            "a Classic Load Balancer's name is 1 to 32 letters, digits and dashes, not starting or ending with a dash",
        )
    })
}

/// A list of at most [`MAX_LOAD_BALANCERS`] values, each a literal that
/// `problem` accepts or a value source; `None` when any item is wrong.
fn decode_list(
    d: &mut Decoder,
    field: &str,
    node: &Node,
    problem: fn(&str) -> Option<&'static str>,
) -> Opt<Vec<Located<Source>>> {
    let Value::Seq(items) = &node.value else {
        d.wrong_type(
            field,
            node,
            "a list of values, each a literal, `{parameter: Name}` or `{import: ExportName}`",
        );
        return None;
    };
    if items.is_empty() {
        d.error(node.span, format!("`{field}` is empty")).help =
            Some("list at least one, or leave the field out".into());
        return None;
    }
    if let Some(extra) = items.get(MAX_LOAD_BALANCERS as usize) {
        let message = format!("`{field}` lists more than {MAX_LOAD_BALANCERS}");
        d.error(extra.span, message).help = Some(format!(
            "an Auto Scaling group takes at most {MAX_LOAD_BALANCERS} (a fixed EC2 Auto Scaling quota)"
        ));
        return None;
    }
    let mut values = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(source) = decode_source(d, field, item) else {
            ok = false;
            continue;
        };
        if let Source::Literal(text) = &source.value
            && let Some(help) = problem(text)
        {
            d.error(source.span, format!("`{field}` item `{text}` is not valid"))
                .help = Some(help.into());
            ok = false;
            continue;
        }
        values.push(source);
    }
    ok.then(|| Located::new(values, node.span))
}

/// `arn:<partition>:elasticloadbalancing:<region>:<account>:targetgroup/<name>/<id>`,
/// the partition, region and account possibly pseudo parameters, and at
/// most 511 characters (the provider schema's limit).
fn is_target_group_arn(text: &str) -> bool {
    let plain = text
        .replace("${AWS::Partition}", "aws")
        .replace("${AWS::Region}", "region")
        .replace("${AWS::AccountId}", "account");
    let parts: Vec<&str> = plain.splitn(6, ':').collect();
    text.len() <= 511
        && !plain.contains("${")
        && parts.len() == 6
        && parts[0] == "arn"
        && parts[2] == "elasticloadbalancing"
        && parts[5].strip_prefix("targetgroup/").is_some_and(|rest| {
            rest.split_once('/')
                .is_some_and(|(name, id)| !name.is_empty() && !id.is_empty())
        })
}

/// Elastic Load Balancing's rule for a load balancer's name
/// (`CreateLoadBalancer`): 1 to 32 letters, digits and dashes, neither
/// first nor last a dash.
fn is_classic_load_balancer_name(text: &str) -> bool {
    (1..=32).contains(&text.len())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_group_arns_name_a_target_group() {
        assert!(is_target_group_arn(
            "arn:${AWS::Partition}:elasticloadbalancing:${AWS::Region}:${AWS::AccountId}:targetgroup/web/0123456789abcdef"
        ));
        assert!(is_target_group_arn(
            "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123"
        ));
        assert!(!is_target_group_arn(
            "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/web/0123"
        ));
        assert!(!is_target_group_arn(
            "arn:${Bad}:elasticloadbalancing:r:a:targetgroup/web/1"
        ));
        assert!(!is_target_group_arn("web"));
    }

    #[test]
    fn classic_names_follow_elastic_load_balancing() {
        assert!(is_classic_load_balancer_name("web-1"));
        assert!(!is_classic_load_balancer_name("-web"));
        assert!(!is_classic_load_balancer_name("web_1"));
        assert!(!is_classic_load_balancer_name(&"a".repeat(33)));
    }
}
