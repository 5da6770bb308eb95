//! The `cluster` section: the cluster's name, version, endpoint and
//! network, each a literal, parameter or import.

use super::access::{NODE_ACCESS, decode_node_access};
use super::read::{missing, opt_bool};
use super::sources::{check_literal, decode_source};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::rules;
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::Node;

pub(in crate::blueprint) const CLUSTER_FIELDS: &[Field] = &[
    Field::new("nodeAccess", Ty::OneOf(|| choices(NODE_ACCESS)), "")
        .default("`accessEntries` in the API modes, `awsAuth` in `CONFIG_MAP`")
        .long(
            "`accessEntries` (the default in the API modes), `sharedAccessEntries` \
            (API modes: an existing role's access entry is a `Custom::NodeAccessEntry` \
            that several blueprints' stacks share, kept until the last of them is \
            deleted; see [Cluster access](../guide/cluster-access.md)) or `awsAuth` (the default, \
            and the only choice, in `CONFIG_MAP` mode; refused in `API` mode), or \
            `none`: no access entry and no aws-auth mapping for any group, access \
            granted outside the blueprint (see [Cluster access](../guide/cluster-access.md); \
            `awsAuthProvider` is then an error)",
        ),
    Field::new(
        "awsAuthProvider",
        Ty::Object("awsAuthProvider"),
        "The provider of aws-auth mappings and shared access entries: an existing one, or settings of the one emitted",
    )
    .long(
        "the provider of `awsAuth` and `sharedAccessEntries`: `serviceToken` of an \
        existing provider, or settings of the one emitted: \
        `subnets` and `securityGroups` (private endpoints), \
        `reservedConcurrency`, `logRetentionDays` (30)",
    ),
    Field::new("name", Ty::Source, "The cluster name")
        .required_when("yes")
        .long("cluster name"),
    Field::new(
        "kubernetesVersion",
        Ty::STRING_OR_NUMBER,
        "The Kubernetes version, quoted: \"1.33\"",
    )
    .required_when("yes")
    .long("`\"1.33\"` (quoted); chooses the AMI"),
    Field::new(
        "endpoint",
        Ty::Source,
        "The API server endpoint (required when a group bootstraps its own nodes: \
        self-managed, or managed on a custom image)",
    )
    .required_when("when a group bootstraps its nodes")
    .long(
        "API server endpoint (`https://…`): required by self-managed groups and \
        managed groups on a custom image; EKS joins a managed group's EKS-AMI \
        nodes itself",
    ),
    Field::new(
        "certificateAuthority",
        Ty::Source,
        "The certificate authority data (base64; required like `endpoint`)",
    )
    .required_when("when a group bootstraps its nodes")
    .long("base64 CA data, required like `endpoint`"),
    Field::new(
        "serviceIpv4Cidr",
        Ty::Source,
        "The Kubernetes service IPv4 CIDR (required on an IPv4 cluster)",
    )
    .required_when("on IPv4")
    .long(
        "service CIDR (/12 to /24); the DNS IP is its `.10` address. An IPv6 \
        cluster needs none (its nodes take `serviceIpv6Cidr`); one written there \
        is unused",
    ),
    Field::new("ipFamily", Ty::OneOf(|| choices(IP_FAMILIES)), "")
        .default("`ipv4`")
        .long(
            "`ipv4` (default) or `ipv6`. With `ipv6`, nodes take the service IPv6 \
            CIDR: AL2023 NodeConfig `cluster.cidr`, AL2 `bootstrap.sh --ip-family \
            ipv6 --service-ipv6-cidr`, Bottlerocket `cluster-dns-ip`; the DNS IP is \
            the CIDR's address followed by `a` (`fd00:ab12::/108` gives \
            `fd00:ab12::a`, nodeadm's rule); the node security group also lets all \
            IPv6 traffic out; node roles whose CNI does not use IRSA get the VPC \
            CNI's IPv6 permissions (`ec2:AssignIpv6Addresses` and what it reads) as \
            an inline `vpc-cni-ipv6` policy, since `AmazonEKS_CNI_Policy` covers \
            IPv4 only. Windows groups are refused (EKS Windows nodes do not support \
            IPv6). `serviceIpv4Cidr` is not needed",
        ),
    Field::new(
        "serviceIpv6Cidr",
        Ty::Source,
        "An IPv6 cluster's service CIDR \
        (`kubernetesNetworkConfig.serviceIpv6Cidr`); needs `ipFamily: ipv6`",
    )
    .required_when("with `ipv6`")
    .long(
        "the cluster's service IPv6 CIDR \
        (`kubernetesNetworkConfig.serviceIpv6Cidr`), a literal, parameter or \
        import",
    ),
    Field::new(
        "controlPlaneSecurityGroup",
        Ty::Source,
        "The control plane security group (required when a group shares the node \
        security group)",
    )
    .required_when("when a group shares the node security group")
    .long(
        "control plane security group ID, which the shared node security group's \
        rules name; not needed when every group has `nodeSecurityGroup: cluster`",
    ),
    Field::new(
        "clusterSecurityGroup",
        Ty::Source,
        "The cluster security group EKS made, for groups with `nodeSecurityGroup: \
        cluster`",
    )
    .long(
        "the cluster security group EKS made (ID, `{parameter}` or `{import}`), \
        for groups with `nodeSecurityGroup: cluster`",
    ),
    Field::new(
        "vpc",
        Ty::Source,
        "The VPC (required by the shared node security group, `ssh` and \
        `securityGroupRules`)",
    )
    .required_when("with the node security group, `ssh` or `securityGroupRules`")
    .long(
        "VPC ID, where the shared node security group and the groups' own \
        security groups (`ssh`, `securityGroupRules`) are made; not needed when \
        every group has `nodeSecurityGroup: cluster` and none has `ssh` or \
        `securityGroupRules`",
    ),
    Field::new(
        "authenticationMode",
        Ty::OneOf(|| choices(AUTHENTICATION_MODES)),
        "",
    )
    .default("`API_AND_CONFIG_MAP`")
    .long("`API`, `API_AND_CONFIG_MAP` (default) or `CONFIG_MAP`"),
    Field::new(
        "prefixDelegation",
        Ty::Boolean,
        "The VPC CNI assigns pods addresses from /28 prefixes: maxPods is checked \
        against prefix capacity",
    )
    .default("`false`")
    .long(
        "`true` when the cluster's VPC CNI assigns `/28` prefixes \
        (`ENABLE_PREFIX_DELEGATION`): `maxPods` is then checked against the \
        prefixes a node's interfaces hold instead of their addresses. eksynth \
        does not configure the CNI.",
    ),
];

/// The values a field may take, shared by the loader and the JSON Schema.
pub(in crate::blueprint) const AUTHENTICATION_MODES: &[(&str, AuthenticationMode)] = &[
    ("API", AuthenticationMode::Api),
    ("API_AND_CONFIG_MAP", AuthenticationMode::ApiAndConfigMap),
    ("CONFIG_MAP", AuthenticationMode::ConfigMap),
];

/// The values of `cluster.ipFamily`, shared by the loader and the JSON
/// Schema.
pub(in crate::blueprint) const IP_FAMILIES: &[(&str, IpFamily)] =
    &[("ipv4", IpFamily::Ipv4), ("ipv6", IpFamily::Ipv6)];

/// The `cluster` section: its fields as written, the checks of each value
/// and of the IP family, then the cluster, when every required value is
/// there.
pub(super) fn decode_cluster(d: &mut Decoder, node: &Node, at: Span) -> Option<Cluster> {
    let written = decode_written(d, node, at)?;
    check_ids(d, &written);
    let ipv6 = check_ip_family(d, &written, at);
    let name = written.name.clone()?;
    // An IPv6 cluster without its CIDR (reported above) is checked on with
    // the IPv4 one, so that its groups' mistakes are reported too.
    let service_cidr = if ipv6 {
        written
            .service_ipv6_cidr
            .clone()
            .or_else(|| written.service_ipv4_cidr.clone())?
    } else {
        written.service_ipv4_cidr.clone()?
    };
    check_name_and_authority(d, &name, &written.certificate_authority);
    Some(Cluster {
        node_access_span: written.node_access_span.unwrap_or(name.span),
        name,
        kubernetes_version: written.version?,
        endpoint: written.endpoint,
        certificate_authority: written.certificate_authority,
        service_ipv4_cidr: written.service_ipv4_cidr,
        service_cidr,
        ip_family: written.ip_family.map(|f| (f.value, f.span)),
        service_ipv6_cidr: written.service_ipv6_cidr.filter(|_| ipv6),
        control_plane_security_group: written.control_plane_security_group,
        cluster_security_group: written.cluster_security_group,
        vpc: written.vpc,
        span: at,
        authentication_mode: written.authentication_mode?,
        node_access: written.node_access?,
        prefix_delegation: written.prefix_delegation,
    })
}

/// The `cluster` fields as written, each decoded where it is.
struct Written {
    name: Option<Located<Source>>,
    endpoint: Option<Located<Source>>,
    certificate_authority: Option<Located<Source>>,
    service_ipv4_cidr: Option<Located<Source>>,
    /// Whether `serviceIpv4Cidr` is written with a value, decoded or not.
    service_ipv4_cidr_given: bool,
    control_plane_security_group: Option<Located<Source>>,
    vpc: Option<Located<Source>>,
    cluster_security_group: Option<Located<Source>>,
    ip_family: Option<Located<IpFamily>>,
    service_ipv6_cidr: Option<Located<Source>>,
    version: Option<Located<KubernetesVersion>>,
    authentication_mode: Option<AuthenticationMode>,
    prefix_delegation: bool,
    node_access: Option<NodeAccess>,
    node_access_span: Option<Span>,
}

/// Reads every field of `cluster` in the order they are reported, and
/// reports the fields it does not know.
fn decode_written(d: &mut Decoder, node: &Node, at: Span) -> Option<Written> {
    let mut fields = d.fields("cluster", node, CLUSTER_FIELDS)?;
    let mut required = |d: &mut Decoder, field: &str, help: &str| -> Option<Located<Source>> {
        match fields.get(field) {
            Some(value) => decode_source(d, &format!("cluster.{field}"), value),
            None => {
                missing(d, at, field, "`cluster`", help);
                None
            }
        }
    };
    let name = required(d, "name", "the cluster name, e.g. `name: prod`");
    let mut source = |d: &mut Decoder, field: &str| {
        fields
            .get(field)
            .and_then(|n| decode_source(d, &format!("cluster.{field}"), n))
    };
    // Required by what uses them (see `check_bootstrap_values`).
    let endpoint = source(d, "endpoint");
    let certificate_authority = source(d, "certificateAuthority");
    // Required by what uses them: the IPv4 service CIDR on an IPv4
    // cluster, the others by the shared node security group (see
    // `check_network_values`).
    let service_ipv4_cidr = source(d, "serviceIpv4Cidr");
    let control_plane_security_group = source(d, "controlPlaneSecurityGroup");
    let vpc = source(d, "vpc");
    let cluster_security_group = source(d, "clusterSecurityGroup");
    let ip_family = fields
        .get("ipFamily")
        .and_then(|n| d.choice("cluster.ipFamily", n, IP_FAMILIES));
    let service_ipv6_cidr = fields
        .get("serviceIpv6Cidr")
        .and_then(|n| decode_source(d, "cluster.serviceIpv6Cidr", n));
    let version = match fields.get("kubernetesVersion") {
        Some(value) => decode_version(d, "cluster.kubernetesVersion", value),
        None => {
            missing(
                d,
                at,
                "kubernetesVersion",
                "`cluster`",
                "the cluster's Kubernetes version, e.g. `kubernetesVersion: \"1.33\"`",
            );
            None
        }
    };
    let authentication_mode = match fields.get("authenticationMode") {
        Some(value) => d
            .choice("cluster.authenticationMode", value, AUTHENTICATION_MODES)
            .map(|m| m.value),
        None => Some(AuthenticationMode::ApiAndConfigMap),
    };
    let prefix_delegation =
        opt_bool(d, &mut fields, "cluster.", "prefixDelegation").is_some_and(|p| p.value);
    let node_access = decode_node_access(d, &mut fields, authentication_mode);
    let node_access_span = ["awsAuthProvider", "nodeAccess", "authenticationMode"]
        .iter()
        .find_map(|field| fields.key_span(field));
    fields.finish(d, "`cluster`");
    Some(Written {
        name,
        endpoint,
        certificate_authority,
        service_ipv4_cidr,
        service_ipv4_cidr_given: fields.given("serviceIpv4Cidr"),
        control_plane_security_group,
        vpc,
        cluster_security_group,
        ip_family,
        service_ipv6_cidr,
        version,
        authentication_mode,
        prefix_delegation,
        node_access,
        node_access_span,
    })
}

/// The endpoint is an https URL, and the IDs written as literals have
/// their kind's shape.
fn check_ids(d: &mut Decoder, written: &Written) {
    if let Some(endpoint) = &written.endpoint {
        check_literal(d, endpoint, "cluster.endpoint", |v| {
            (!v.starts_with("https://")).then(|| "must be an https:// URL".to_string())
        });
    }
    let ids = [
        (
            &written.cluster_security_group,
            "clusterSecurityGroup",
            "sg",
            "a security group ID",
        ),
        (
            &written.control_plane_security_group,
            "controlPlaneSecurityGroup",
            "sg",
            "a security group ID",
        ),
        (&written.vpc, "vpc", "vpc", "a VPC ID"),
    ];
    for (value, field, kind, what) in ids {
        if let Some(value) = value {
            check_literal(d, value, &format!("cluster.{field}"), |v| {
                (!rules::is_ec2_id(kind, v)).then(|| {
                    format!("is not {what}: `{kind}-` and 8 or 17 lower case hexadecimal digits")
                })
            });
        }
    }
}

/// The service CIDRs against the IP family: an IPv6 cluster needs its IPv6
/// CIDR, an IPv4 one its IPv4 CIDR and no IPv6 one. Returns whether the
/// cluster is IPv6.
fn check_ip_family(d: &mut Decoder, written: &Written, at: Span) -> bool {
    if let Some(cidr) = &written.service_ipv6_cidr {
        check_literal(d, cidr, "cluster.serviceIpv6Cidr", |v| {
            let ok = v.split_once('/').is_some_and(|(address, length)| {
                address.parse::<std::net::Ipv6Addr>().is_ok()
                    && length.parse::<u8>().is_ok_and(|l| l <= 128)
            });
            (!ok).then(|| "is not an IPv6 CIDR such as `fd00:ab12::/108`".to_string())
        });
    }
    let ipv6 = written
        .ip_family
        .as_ref()
        .is_some_and(|f| f.value == IpFamily::Ipv6);
    match (&written.ip_family, &written.service_ipv6_cidr) {
        (Some(family), None) if ipv6 => {
            d.error(family.span, "`cluster.ipFamily: ipv6` needs `cluster.serviceIpv6Cidr`")
                .help = Some(
                "the cluster's service IPv6 CIDR (`aws eks describe-cluster --query cluster.kubernetesNetworkConfig.serviceIpv6Cidr`)".into(),
            );
        }
        (_, Some(cidr)) if !ipv6 => {
            d.error(
                cidr.span,
                "`cluster.serviceIpv6Cidr` needs `cluster.ipFamily: ipv6`",
            )
            .help = Some("an IPv4 cluster's services have IPv4 addresses only".into());
        }
        _ => {}
    }
    if let Some(cidr) = &written.service_ipv4_cidr {
        check_literal(d, cidr, "cluster.serviceIpv4Cidr", |v| {
            rules::service_cidr_dns_ip(v).err()
        });
    }
    // An IPv6 cluster's services have IPv6 addresses only: its nodes take
    // `serviceIpv6Cidr`, and an IPv4 CIDR is needed only on IPv4.
    if written.service_ipv4_cidr.is_none() && !ipv6 && !written.service_ipv4_cidr_given {
        missing(
            d,
            at,
            "serviceIpv4Cidr",
            "`cluster`",
            "the service CIDR, e.g. `serviceIpv4Cidr: 10.100.0.0/16`",
        );
    }
    ipv6
}

/// The cluster name as EKS takes it, and the certificate authority as
/// base64.
fn check_name_and_authority(
    d: &mut Decoder,
    name: &Located<Source>,
    certificate_authority: &Option<Located<Source>>,
) {
    check_literal(d, name, "cluster.name", |v| {
        let ok = !v.is_empty()
            && v.len() <= 100
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        (!ok).then(|| {
            "must be 1 to 100 letters, digits, `-` or `_`, starting with a letter or digit"
                .to_string()
        })
    });
    if let Some(certificate_authority) = certificate_authority {
        check_literal(
            d,
            certificate_authority,
            "cluster.certificateAuthority",
            |v| {
                let ok = !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='));
                (!ok).then(|| "must be base64 data".to_string())
            },
        );
    }
}

/// A Kubernetes version written `major.minor`, for `field`.
pub(super) fn decode_version(
    d: &mut Decoder,
    field: &str,
    node: &Node,
) -> Option<Located<KubernetesVersion>> {
    let text = d.string_or_number(field, node)?;
    let parsed = text
        .value
        .split_once('.')
        .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)));
    match parsed {
        Some((1, minor)) if (23..=99).contains(&minor) => Some(Located::new(
            KubernetesVersion { major: 1, minor },
            text.span,
        )),
        _ => {
            let message = format!(
                "`{field}` `{}` is not a Kubernetes version EKS runs",
                text.value
            );
            d.error(text.span, message).help =
                Some("write it quoted as `major.minor`, e.g. `\"1.33\"`".into());
            None
        }
    }
}

/// `endpoint` and `certificateAuthority` are required only when a group
/// bootstraps its own nodes: a self-managed group, or a managed group on a
/// custom image. EKS joins the nodes of a managed group on an EKS AMI
/// itself, and a template of such groups only would not use them.
pub(super) fn check_bootstrap_values(d: &mut Decoder, cluster: &Node, at: Span, bootstraps: bool) {
    if !bootstraps {
        return;
    }
    let written = |field: &str| {
        cluster
            .as_map()
            .is_some_and(|entries| entries.iter().any(|(key, _)| key.name == field))
    };
    for (field, help) in [
        (
            "endpoint",
            "the API server endpoint (`aws eks describe-cluster --query cluster.endpoint`), which self-managed groups and managed groups on a custom image join",
        ),
        (
            "certificateAuthority",
            "the certificate authority data (`aws eks describe-cluster --query cluster.certificateAuthority.data`), which self-managed groups and managed groups on a custom image trust",
        ),
    ] {
        if !written(field) {
            missing(d, at, field, "`cluster`", help);
        }
    }
}

/// `controlPlaneSecurityGroup` and `vpc` are required only by what uses
/// them: the shared node security group (its rules name the control
/// plane's group, and it lives in the VPC) and a group's own security
/// groups for `ssh` and `securityGroupRules` (in the VPC). Groups all on the cluster security group without
/// SSH need neither. `cluster` is the section as written (`at` its key),
/// so that a missing field is reported even when another field of it
/// did not decode.
pub(super) fn check_network_values(
    d: &mut Decoder,
    cluster: &Node,
    at: Span,
    shared_security_group: bool,
    own_security_groups: bool,
) {
    let written = |field: &str| {
        cluster
            .as_map()
            .is_some_and(|entries| entries.iter().any(|(key, _)| key.name == field))
    };
    if shared_security_group && !written("controlPlaneSecurityGroup") {
        missing(
            d,
            at,
            "controlPlaneSecurityGroup",
            "`cluster`",
            "the control plane security group ID, e.g. `controlPlaneSecurityGroup: sg-0123456789abcdef0`, which the shared node security group's rules name (or put every group on the cluster security group with `nodeSecurityGroup: cluster`)",
        );
    }
    if (shared_security_group || own_security_groups) && !written("vpc") {
        let user = if shared_security_group {
            "the shared node security group is made"
        } else {
            "the groups' own security groups (`ssh`, `securityGroupRules`) are made"
        };
        missing(
            d,
            at,
            "vpc",
            "`cluster`",
            &format!("the VPC ID, e.g. `vpc: vpc-0123456789abcdef0`, where {user}"),
        );
    }
}
