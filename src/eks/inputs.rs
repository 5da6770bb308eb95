//! Cluster values as template expressions: a literal stays a literal, a
//! parameter becomes a `Ref` (and a declared parameter), an import becomes
//! `Fn::ImportValue`.

use crate::blueprint::{Cluster, Source, Subnets};
use crate::cfn::{Expr, Parameter, Template};

/// The CloudFormation type of each kind of cluster value, for parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    SecurityGroupId,
    VpcId,
    SubnetIds,
}

impl Kind {
    pub fn parameter_type(self) -> &'static str {
        match self {
            Kind::String => "String",
            Kind::SecurityGroupId => "AWS::EC2::SecurityGroup::Id",
            Kind::VpcId => "AWS::EC2::VPC::Id",
            Kind::SubnetIds => "List<AWS::EC2::Subnet::Id>",
        }
    }
}

/// The expression for a cluster value, declaring its parameter if needed.
pub fn value(template: &mut Template, source: &Source, kind: Kind, description: &str) -> Expr {
    match source {
        Source::Literal(text) => Expr::str(text),
        Source::Parameter { name, default } => {
            declare(template, name, kind, description, default.as_deref());
            Expr::reference(name)
        }
        Source::Import(export) => Expr::import_value(Expr::sub_or_str(export)),
    }
}

/// A permissions boundary: literal ARN text may hold `${AWS::Partition}`
/// and `${AWS::AccountId}` (then `Fn::Sub`); a parameter or an import holds
/// the whole ARN.
pub fn permissions_boundary(template: &mut Template, source: &Source) -> Expr {
    match source {
        Source::Literal(arn) => Expr::sub_or_str(arn),
        other => value(
            template,
            other,
            Kind::String,
            "The ARN of the permissions boundary of the roles the stack creates",
        ),
    }
}

fn declare(
    template: &mut Template,
    name: &str,
    kind: Kind,
    description: &str,
    default: Option<&str>,
) {
    template
        .parameters
        .entry(name.to_string())
        .or_insert_with(|| {
            let mut parameter = Parameter::new(kind.parameter_type()).described(description);
            if let Some(default) = default {
                parameter.default = Some(Expr::str(default));
            }
            parameter
        });
}

/// The subnets of a node group: a list, a list parameter, or an import of a
/// comma-separated list.
pub fn subnets(template: &mut Template, subnets: &Subnets) -> Expr {
    match subnets {
        Subnets::List(ids) => Expr::list(ids.iter().map(Expr::str)),
        Subnets::Parameter { name, default } => {
            declare(
                template,
                name,
                Kind::SubnetIds,
                "Subnets the nodes are launched in",
                default.as_deref(),
            );
            Expr::reference(name)
        }
        Subnets::Import(export) => Expr::split(",", Expr::import_value(Expr::sub_or_str(export))),
    }
}

/// The cluster's values, resolved once per template.
pub struct ClusterValues {
    pub name: Expr,
    /// Written when a group bootstraps its own nodes (the loader requires
    /// them then).
    pub endpoint: Option<Expr>,
    pub certificate_authority: Option<Expr>,
    /// The IPv4 service CIDR, when written (always on an IPv4 cluster).
    pub service_ipv4_cidr: Option<Expr>,
    /// An IPv6 cluster's service CIDR.
    pub service_ipv6_cidr: Option<Expr>,
    /// The cluster DNS IP, in the service CIDR of the cluster's IP family.
    pub dns_cluster_ip: Expr,
    /// When written: the shared node security group needs it.
    pub control_plane_security_group: Option<Expr>,
    /// The cluster security group, when the blueprint names it.
    pub cluster_security_group: Option<Expr>,
    /// When written: the shared node security group and SSH security
    /// groups need it.
    pub vpc: Option<Expr>,
}

impl ClusterValues {
    pub fn resolve(template: &mut Template, cluster: &Cluster) -> ClusterValues {
        // Declared in the order the blueprint lists them, so that parameters
        // appear in that order in the template.
        let name = value(
            template,
            &cluster.name.value,
            Kind::String,
            "The EKS cluster name",
        );
        let endpoint = cluster.endpoint.as_ref().map(|endpoint| {
            value(
                template,
                &endpoint.value,
                Kind::String,
                "The cluster's API server endpoint",
            )
        });
        let certificate_authority = cluster.certificate_authority.as_ref().map(|ca| {
            value(
                template,
                &ca.value,
                Kind::String,
                "The cluster's certificate authority data (base64)",
            )
        });
        let service_ipv4_cidr = cluster.service_ipv4_cidr.as_ref().map(|cidr| {
            value(
                template,
                &cidr.value,
                Kind::String,
                "The cluster's Kubernetes service IPv4 CIDR",
            )
        });
        let service_ipv6_cidr = cluster.service_ipv6_cidr.as_ref().map(|cidr| {
            value(
                template,
                &cidr.value,
                Kind::String,
                "The cluster's Kubernetes service IPv6 CIDR",
            )
        });
        // The CIDR of the cluster's family, declared just above.
        let service_cidr = value(
            template,
            &cluster.service_cidr.value,
            Kind::String,
            "The cluster's Kubernetes service CIDR",
        );
        ClusterValues {
            name,
            endpoint,
            certificate_authority,
            dns_cluster_ip: if service_ipv6_cidr.is_some() {
                dns_cluster_ipv6(&service_cidr)
            } else {
                dns_cluster_ip(&service_cidr)
            },
            service_ipv6_cidr,
            service_ipv4_cidr,
            control_plane_security_group: cluster.control_plane_security_group.as_ref().map(
                |group| {
                    value(
                        template,
                        &group.value,
                        Kind::SecurityGroupId,
                        "The cluster control plane security group",
                    )
                },
            ),
            vpc: cluster
                .vpc
                .as_ref()
                .map(|vpc| value(template, &vpc.value, Kind::VpcId, "The VPC of the cluster")),
            cluster_security_group: cluster.cluster_security_group.as_ref().map(|source| {
                value(
                    template,
                    &source.value,
                    Kind::SecurityGroupId,
                    "The cluster security group EKS made",
                )
            }),
        }
    }
}

/// The cluster DNS IP is the `.10` address of the service CIDR. For a
/// literal CIDR it is computed now; otherwise at deploy time from the first
/// three octets (EKS service CIDRs are /12 to /24, so their network address
/// ends in `.0` and the DNS IP differs only in the last octet).
fn dns_cluster_ip(cidr: &Expr) -> Expr {
    if let Some(text) = cidr.as_str()
        && let Ok(ip) = crate::blueprint::rules::service_cidr_dns_ip(text)
    {
        return Expr::str(ip);
    }
    let octet = |i| Expr::select(i, Expr::split(".", cidr.clone()));
    Expr::join(".", vec![octet(0), octet(1), octet(2), Expr::str("10")])
}

/// An IPv6 cluster's DNS IP is the service CIDR's address followed by `a`
/// (`fd00:ab12::/108` gives `fd00:ab12::a`): the rule of nodeadm
/// (`nodeadm/internal/api/net.go`, `GetClusterDns`) and of the AL2
/// `bootstrap.sh`, for EKS's CoreDNS add-on.
fn dns_cluster_ipv6(cidr: &Expr) -> Expr {
    if let Some(text) = cidr.as_str()
        && let Some((address, _)) = text.split_once('/')
    {
        return Expr::str(format!("{address}a"));
    }
    Expr::join(
        "",
        vec![
            Expr::select(0, Expr::split("/", cidr.clone())),
            Expr::str("a"),
        ],
    )
}
