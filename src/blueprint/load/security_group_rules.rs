//! A group's `securityGroupRules`: inbound rules on a security group of
//! the group's own, each a protocol, its ports and one source (a CIDR or a
//! security group), never open to the whole internet.
//!
//! The rules are judged together as `ssh`'s sources are: for each protocol
//! and each stretch of ports, the CIDRs of the rules that let it in must
//! not cover every IPv4 or IPv6 address, alone or together
//! (`crate::cidr`'s arithmetic). A rule of every protocol counts for every
//! port of each.

use super::read::{Opt, first_column, missing};
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::{RuleProtocol, RuleSource, SecurityGroupRule, Source};
use crate::cidr::{Cidr, Cover, Family, cover};
use crate::source::Span;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const SECURITY_GROUP_RULE_FIELDS: &[Field] = &[
    Field::new("protocol", Ty::OneOf(|| choices(RULE_PROTOCOLS)), "")
        .required()
        .long(
            "`tcp`, `udp`, `icmp`, `icmpv6` or `all` (every protocol and port); \
            `icmp` takes IPv4 sources, `icmpv6` IPv6 ones",
        ),
    Field::new(
        "ports",
        Ty::Either(&[Ty::integer(0, 65_535), Ty::pattern("^[0-9]+-[0-9]+$", None)]),
        "",
    )
    .required_when("with `tcp` and `udp`, and only there")
    .long(
        "one port (`443`) or a range `from-to` (`30000-32767`), 0 to 65535; \
        `icmp`, `icmpv6` and `all` take none (every ICMP type, every port)",
    ),
    Field::new("source", Ty::Source, "").required().long(
        "an IPv4 or IPv6 CIDR (`10.0.0.0/16`), or a security group: an ID \
        (`sg-…`), `{parameter: Name}` (of type `AWS::EC2::SecurityGroup::Id`) or \
        `{import: ExportName}`",
    ),
];

pub(in crate::blueprint) const RULE_PROTOCOLS: &[(&str, RuleProtocol)] = &[
    ("tcp", RuleProtocol::Tcp),
    ("udp", RuleProtocol::Udp),
    ("icmp", RuleProtocol::Icmp),
    ("icmpv6", RuleProtocol::Icmpv6),
    ("all", RuleProtocol::All),
];

/// One rule as written, with where its parts are.
#[derive(Clone)]
pub(super) struct RuleSpec {
    rule: SecurityGroupRule,
    /// The source as written, for messages about it.
    source_span: Span,
}

/// `securityGroupRules`: a list of rules, judged together.
pub(super) fn decode_security_group_rules(
    d: &mut Decoder,
    node: &Node,
) -> Opt<Vec<SecurityGroupRule>> {
    let items = d.list("securityGroupRules", node);
    if !matches!(node.value, Value::Seq(_)) {
        return None;
    }
    let errors_before = d.diagnostics.iter().filter(|x| x.is_error()).count();
    let rules: Vec<RuleSpec> = items.iter().filter_map(|n| decode_rule(d, n)).collect();
    check_world_open(d, &rules);
    let errors_after = d.diagnostics.iter().filter(|x| x.is_error()).count();
    (errors_after == errors_before)
        .then(|| Located::new(rules.into_iter().map(|r| r.rule).collect(), node.span))
}

fn decode_rule(d: &mut Decoder, node: &Node) -> Option<RuleSpec> {
    let mut f = d.fields("securityGroupRules[]", node, SECURITY_GROUP_RULE_FIELDS)?;
    let protocol = f
        .get("protocol")
        .and_then(|n| d.choice("securityGroupRules[].protocol", n, RULE_PROTOCOLS));
    let ports = f.get("ports").and_then(|n| decode_ports(d, n));
    let source = f.get("source").and_then(|n| decode_rule_source(d, n));
    f.finish(d, "a security group rule");
    let at = first_column(node.span);
    let Some(protocol) = protocol else {
        if !f.given("protocol") {
            missing(
                d,
                at,
                "protocol",
                "security group rule",
                "the protocol it lets in, e.g. `protocol: tcp`",
            );
        }
        return None;
    };
    let Some((source, source_span)) = source else {
        if !f.given("source") {
            missing(
                d,
                at,
                "source",
                "security group rule",
                "where the traffic may come from: a CIDR or a security group, e.g. `source: 10.0.0.0/16`",
            );
        }
        return None;
    };
    let ports = check_ports(d, protocol.value, ports, f.given("ports"), at)?;
    check_icmp_family(d, protocol.value, &source, source_span)?;
    Some(RuleSpec {
        rule: SecurityGroupRule {
            protocol: protocol.value,
            ports,
            source,
        },
        source_span,
    })
}

/// A port or a range `from-to`, 0 to 65535, `from` not above `to`.
fn decode_ports(d: &mut Decoder, node: &Node) -> Opt<(u16, u16)> {
    let field = "securityGroupRules[].ports";
    if let Value::Int(_) = node.value {
        let port = d.integer(field, node, 0, 65_535)?;
        let port = port.value as u16;
        return Some(Located::new((port, port), node.span));
    }
    let text = d.string(field, node)?;
    let range = text.value.split_once('-').and_then(|(from, to)| {
        let from: u16 = from.parse().ok()?;
        let to: u16 = to.parse().ok()?;
        Some((from, to))
    });
    match range {
        Some((from, to)) if from <= to => Some(Located::new((from, to), text.span)),
        Some(_) => {
            let message = format!("`{field}` `{}` runs backwards", text.value);
            d.error(text.span, message).help =
                Some("write the lower port first, e.g. `30000-32767`".into());
            None
        }
        None => {
            let message = format!("`{field}` `{}` is not a port or a port range", text.value);
            d.error(text.span, message).help = Some(
                "write one port (`443`) or a range `from-to` of ports 0 to 65535 (`30000-32767`)"
                    .into(),
            );
            None
        }
    }
}

/// A CIDR, or a security group: an ID, a parameter or an import.
fn decode_rule_source(d: &mut Decoder, node: &Node) -> Option<(RuleSource, Span)> {
    let field = "securityGroupRules[].source";
    if let Value::Map(_) = node.value {
        let source = decode_source(d, field, node)?;
        return Some((RuleSource::SecurityGroup(source), node.span));
    }
    let text = d.string(field, node)?;
    if text.value.starts_with("sg-") {
        if !crate::blueprint::rules::is_ec2_id("sg", &text.value) {
            d.error(
                text.span,
                format!("`{}` is not a security group ID", text.value),
            )
            .help = Some("security group IDs look like `sg-0123456789abcdef0`".into());
            return None;
        }
        let source = Located::new(Source::Literal(text.value), text.span);
        return Some((RuleSource::SecurityGroup(source), text.span));
    }
    match Cidr::parse(&text.value) {
        Ok(_) => Some((RuleSource::Cidr(text.value), text.span)),
        Err(problem) => {
            let message = format!("`{field}` `{}` {problem}", text.value);
            d.error(text.span, message).help = Some(
                "write an IPv4 or IPv6 CIDR such as `10.0.0.0/16`, or a security group ID".into(),
            );
            None
        }
    }
}

/// `tcp` and `udp` need their ports; the other protocols take none.
fn check_ports(
    d: &mut Decoder,
    protocol: RuleProtocol,
    ports: Opt<(u16, u16)>,
    ports_given: bool,
    at: Span,
) -> Option<Option<(u16, u16)>> {
    let takes_ports = matches!(protocol, RuleProtocol::Tcp | RuleProtocol::Udp);
    match (takes_ports, ports) {
        (true, Some(ports)) => Some(Some(ports.value)),
        (true, None) => {
            if !ports_given {
                missing(
                    d,
                    at,
                    "ports",
                    "security group rule",
                    &format!(
                        "the {} ports it lets in, e.g. `ports: 443` or `ports: 30000-32767`",
                        protocol.name()
                    ),
                );
            }
            None
        }
        (false, Some(ports)) => {
            let message = format!("`{}` rules take no `ports`", protocol.name());
            d.error(ports.span, message).help = Some(
                "an `icmp` or `icmpv6` rule lets every ICMP type in, and `all` every protocol and port; remove `ports`".into(),
            );
            None
        }
        (false, None) => Some(None),
    }
}

/// ICMP comes from IPv4 addresses, ICMPv6 from IPv6 ones.
fn check_icmp_family(
    d: &mut Decoder,
    protocol: RuleProtocol,
    source: &RuleSource,
    at: Span,
) -> Option<()> {
    let RuleSource::Cidr(text) = source else {
        return Some(());
    };
    let family = Cidr::read(text).map(|c| c.family);
    let (wrong, right) = match (protocol, family) {
        (RuleProtocol::Icmp, Some(Family::V6)) => ("an IPv6", "icmpv6"),
        (RuleProtocol::Icmpv6, Some(Family::V4)) => ("an IPv4", "icmp"),
        _ => return Some(()),
    };
    let message = format!(
        "a `{}` rule cannot come from {wrong} source (`{text}`)",
        protocol.name()
    );
    d.error(at, message).help = Some(format!("use `protocol: {right}` for that source"));
    None
}

/// What a rule lets in, for the judgement of its sources: a protocol with
/// ports (ICMP's types as one stretch), or every protocol.
fn reaches(rule: &SecurityGroupRule, protocol: RuleProtocol) -> Option<(u32, u32)> {
    let whole = (0, 65_535);
    match rule.protocol {
        RuleProtocol::All => Some(whole),
        p if p == protocol => Some(rule.ports.map_or(whole, |(f, t)| (f.into(), t.into()))),
        _ => None,
    }
}

/// No protocol and stretch of ports is open to every address of a family,
/// by one rule or by several together; each such cover reported once, at
/// the source that completes it.
fn check_world_open(d: &mut Decoder, rules: &[RuleSpec]) {
    let mut reported: Vec<Vec<usize>> = Vec::new();
    for protocol in [
        RuleProtocol::Tcp,
        RuleProtocol::Udp,
        RuleProtocol::Icmp,
        RuleProtocol::Icmpv6,
    ] {
        // The CIDR rules of this protocol, with the ports they let in.
        let open: Vec<(usize, (u32, u32), Cidr)> = rules
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let RuleSource::Cidr(text) = &r.rule.source else {
                    return None;
                };
                Some((i, reaches(&r.rule, protocol)?, Cidr::read(text)?))
            })
            .collect();
        // Each stretch of ports between two rules' bounds is let in by the
        // same rules throughout.
        let mut starts: Vec<u32> = open
            .iter()
            .flat_map(|(_, (from, to), _)| [*from, to + 1])
            .collect();
        starts.sort_unstable();
        starts.dedup();
        for (&start, &end) in starts.iter().zip(starts.iter().skip(1)) {
            let here: Vec<&(usize, (u32, u32), Cidr)> = open
                .iter()
                .filter(|(_, (from, to), _)| *from <= start && start <= *to)
                .collect();
            let blocks: Vec<Cidr> = here.iter().map(|(_, _, cidr)| *cidr).collect();
            for family in [Family::V4, Family::V6] {
                let Some(found) = cover(family, &blocks) else {
                    continue;
                };
                let pieces = match found {
                    Cover::Alone(whole) => whole.into_iter().map(|i| vec![here[i].0]).collect(),
                    Cover::Together(pieces) => vec![pieces.iter().map(|&i| here[i].0).collect()],
                };
                for piece in pieces {
                    if reported.contains(&piece) {
                        continue;
                    }
                    report_open(d, rules, &piece, protocol, (start, end - 1), family);
                    reported.push(piece);
                }
            }
        }
    }
}

fn report_open(
    d: &mut Decoder,
    rules: &[RuleSpec],
    piece: &[usize],
    protocol: RuleProtocol,
    (from, to): (u32, u32),
    family: Family,
) {
    let Some((&last, before)) = piece.split_last() else {
        return;
    };
    let every = piece
        .iter()
        .all(|&i| rules[i].rule.protocol == RuleProtocol::All);
    let what = match protocol {
        _ if every => "every protocol and port".to_string(),
        RuleProtocol::Icmp | RuleProtocol::Icmpv6 => protocol.name().to_string(),
        _ if from == to => format!("{} port {from}", protocol.name()),
        _ => format!("{} ports {from}-{to}", protocol.name()),
    };
    let source = |i: usize| match &rules[i].rule.source {
        RuleSource::Cidr(text) => format!("`{text}`"),
        RuleSource::SecurityGroup(_) => String::new(),
    };
    let message = if before.is_empty() {
        format!(
            "`securityGroupRules` source {} opens {what} to the whole internet",
            source(last)
        )
    } else {
        let before: Vec<String> = before.iter().map(|&i| source(i)).collect();
        format!(
            "`securityGroupRules` sources {} and {} together open {what} to the whole internet (`{}`)",
            before.join(", "),
            source(last),
            family.everything()
        )
    };
    let ssh = protocol == RuleProtocol::Tcp && from <= 22 && 22 <= to;
    let diagnostic = d.error(rules[last].source_span, message);
    // Port 22 open to everyone is the finding `validate` reports on the
    // template, said at the field.
    if ssh {
        diagnostic.code = Some("E5005");
    }
    diagnostic.help = Some(
        "let in a known network (a load balancer's subnets, a VPN range) or a security group, never every address"
            .into(),
    );
}
