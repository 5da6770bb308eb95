//! The node security group and its rules, equivalent to those of the
//! official `amazon-eks-nodegroup.yaml`: nodes talk to each other freely,
//! the control plane reaches kubelets and pods on 1025-65535 and 443, and
//! nodes reach the API server on 443. Beside groups on the cluster
//! security group, the two security groups let each other in on all
//! traffic, so that every node of the blueprint reaches every other.

use super::inputs;
use crate::blueprint::{NodeGroup, RuleProtocol, RuleSource};
use crate::cfn::{Expr, Resource, Template};

pub const NODE_SECURITY_GROUP: &str = "NodeSecurityGroup";

/// `efa`: some group has an Elastic Fabric Adapter, which needs all
/// traffic to and from the group itself allowed, outbound too
/// (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html>).
///
/// `ipv6`: the cluster is IPv6. The rules between security groups hold for
/// both families, but the egress EC2 gives a new security group allows
/// IPv4 only, so nodes get all IPv6 out as well (to reach the internet
/// through an egress-only gateway, and AWS endpoints over IPv6).
///
/// `cluster`: the cluster security group, when some group's nodes are on
/// it instead: it admits only itself (EKS's default rule), and the node
/// security group only itself and the control plane, so each gets an
/// inbound rule from the other for all traffic, as eksctl's
/// `IngressDefaultClusterToNodeSG` and `IngressNodeToDefaultClusterSG`.
pub fn lower(
    template: &mut Template,
    sides: &Sides<'_>,
    cluster_tag_key: &Expr,
    efa: bool,
    ipv6: bool,
) {
    template.resources.insert(
        NODE_SECURITY_GROUP.to_string(),
        node_security_group(sides.vpc, cluster_tag_key),
    );
    for rule in CLUSTER_RULES {
        if let Some(resource) = rule.resource(sides) {
            template.resources.insert(rule.id.to_string(), resource);
        }
    }
    if ipv6 {
        template
            .resources
            .insert("NodeSecurityGroupIpv6Egress".to_string(), ipv6_egress());
    }
    if let (true, Some(resource)) = (efa, EFA_EGRESS.resource(sides)) {
        template
            .resources
            .insert(EFA_EGRESS.id.to_string(), resource);
    }
}

/// The security groups the node security group's rules name, and the VPC
/// it lives in.
pub struct Sides<'a> {
    pub control_plane: &'a Expr,
    pub vpc: &'a Expr,
    /// The cluster security group, when some group's nodes are on it.
    pub cluster: Option<&'a Expr>,
}

impl Sides<'_> {
    /// The group a side stands for, if it has nodes or a control plane.
    fn group(&self, side: Side) -> Option<Expr> {
        match side {
            Side::Nodes => Some(Expr::reference(NODE_SECURITY_GROUP)),
            Side::ControlPlane => Some(self.control_plane.clone()),
            Side::Cluster => self.cluster.cloned(),
        }
    }
}

/// The nodes' security group, tagged as owned by the cluster.
fn node_security_group(vpc: &Expr, cluster_tag_key: &Expr) -> Resource {
    Resource::new("AWS::EC2::SecurityGroup")
        .prop(
            "GroupDescription",
            "Security group for all nodes in the cluster",
        )
        .prop("VpcId", vpc.clone())
        .prop(
            "Tags",
            Expr::list([Expr::map([
                ("Key", cluster_tag_key.clone()),
                ("Value", Expr::str("owned")),
            ])]),
        )
}

/// One of the two security groups a rule joins.
#[derive(Clone, Copy)]
enum Side {
    /// The node security group.
    Nodes,
    /// `cluster.controlPlaneSecurityGroup`.
    ControlPlane,
    /// The cluster security group, when some group's nodes are on it.
    Cluster,
}

/// Traffic into `group` from `peer`, or out of `group` to `peer`.
#[derive(Clone, Copy)]
enum Direction {
    Ingress,
    Egress,
}

/// A rule of one security group that lets traffic in from, or out to,
/// another.
struct Rule {
    id: &'static str,
    direction: Direction,
    description: &'static str,
    group: Side,
    peer: Side,
    protocol: &'static str,
    /// The port range, or `None` for every port.
    ports: Option<(i64, i64)>,
}

impl Rule {
    /// The rule's resource, when both its groups are there.
    fn resource(&self, sides: &Sides<'_>) -> Option<Resource> {
        let group = sides.group(self.group)?;
        let peer = sides.group(self.peer)?;
        let (kind, peer_key) = match self.direction {
            Direction::Ingress => ("AWS::EC2::SecurityGroupIngress", "SourceSecurityGroupId"),
            Direction::Egress => (
                "AWS::EC2::SecurityGroupEgress",
                "DestinationSecurityGroupId",
            ),
        };
        let resource = Resource::new(kind)
            .prop("Description", self.description)
            .prop("GroupId", group)
            .prop(peer_key, peer)
            .prop("IpProtocol", self.protocol);
        Some(match self.ports {
            Some((from, to)) => resource.prop("FromPort", from).prop("ToPort", to),
            None => resource,
        })
    }
}

/// The rules between the nodes and the control plane every cluster gets,
/// and those with the cluster security group when some nodes are on it.
const CLUSTER_RULES: &[Rule] = &[
    Rule {
        id: "NodeSecurityGroupIngress",
        direction: Direction::Ingress,
        description: "Allow nodes to communicate with each other",
        group: Side::Nodes,
        peer: Side::Nodes,
        protocol: "-1",
        ports: None,
    },
    Rule {
        id: "NodeSecurityGroupFromControlPlaneIngress",
        direction: Direction::Ingress,
        description: "Allow kubelets and pods to receive communication from the cluster control plane",
        group: Side::Nodes,
        peer: Side::ControlPlane,
        protocol: "tcp",
        ports: Some((1025, 65535)),
    },
    Rule {
        id: "NodeSecurityGroupFromControlPlaneOn443Ingress",
        direction: Direction::Ingress,
        description: "Allow pods running extension API servers on port 443 to receive communication from the cluster control plane",
        group: Side::Nodes,
        peer: Side::ControlPlane,
        protocol: "tcp",
        ports: Some((443, 443)),
    },
    Rule {
        id: "ClusterControlPlaneSecurityGroupIngress",
        direction: Direction::Ingress,
        description: "Allow pods to communicate with the cluster API server",
        group: Side::ControlPlane,
        peer: Side::Nodes,
        protocol: "tcp",
        ports: Some((443, 443)),
    },
    Rule {
        id: "ControlPlaneEgressToNodeSecurityGroup",
        direction: Direction::Egress,
        description: "Allow the cluster control plane to communicate with kubelets and pods",
        group: Side::ControlPlane,
        peer: Side::Nodes,
        protocol: "tcp",
        ports: Some((1025, 65535)),
    },
    Rule {
        id: "ControlPlaneEgressToNodeSecurityGroupOn443",
        direction: Direction::Egress,
        description: "Allow the cluster control plane to communicate with pods running extension API servers on port 443",
        group: Side::ControlPlane,
        peer: Side::Nodes,
        protocol: "tcp",
        ports: Some((443, 443)),
    },
    // Between the nodes of groups on either security group; the rules
    // are on the nodes' security groups, so they hold for both families.
    Rule {
        id: "NodeSecurityGroupFromClusterSecurityGroupIngress",
        direction: Direction::Ingress,
        description: "Allow nodes on the cluster security group to communicate with nodes on the node security group",
        group: Side::Nodes,
        peer: Side::Cluster,
        protocol: "-1",
        ports: None,
    },
    Rule {
        id: "ClusterSecurityGroupFromNodeSecurityGroupIngress",
        direction: Direction::Ingress,
        description: "Allow nodes on the node security group to communicate with nodes on the cluster security group",
        group: Side::Cluster,
        peer: Side::Nodes,
        protocol: "-1",
        ports: None,
    },
];

/// The logical IDs of the rules with the cluster security group.
pub fn cluster_security_group_rules() -> impl Iterator<Item = &'static str> {
    CLUSTER_RULES
        .iter()
        .filter(|rule| matches!(rule.group, Side::Cluster) || matches!(rule.peer, Side::Cluster))
        .map(|rule| rule.id)
}

/// The traffic an Elastic Fabric Adapter sends between nodes.
const EFA_EGRESS: Rule = Rule {
    id: "NodeSecurityGroupEfaEgress",
    direction: Direction::Egress,
    description: "Allow EFA traffic from nodes to each other",
    group: Side::Nodes,
    peer: Side::Nodes,
    protocol: "-1",
    ports: None,
};

/// All IPv6 out of the nodes, which the default egress of a new security
/// group does not allow.
fn ipv6_egress() -> Resource {
    Resource::new("AWS::EC2::SecurityGroupEgress")
        .prop("CidrIpv6", "::/0")
        .prop("Description", "Allow all IPv6 traffic out of the nodes")
        .prop("GroupId", Expr::reference(NODE_SECURITY_GROUP))
        .prop("IpProtocol", "-1")
}

/// The logical ID of the security group that lets a group's SSH sources in.
pub fn ssh_security_group_id(group: &NodeGroup) -> String {
    format!("{}SshSecurityGroup", group.logical_id)
}

/// A group with `ssh` sources gets a security group of its own with one
/// port 22 rule per source, added to its nodes' groups.
pub fn lower_ssh(template: &mut Template, vpc: &Expr, group: &NodeGroup) {
    let Some(ssh) = &group.ssh else {
        return;
    };
    let ssh_rule = |peer_key: &str, peer: Expr| {
        let mut rule = vec![
            ("Description", Expr::str("Allow SSH to the nodes")),
            ("FromPort", Expr::Int(22)),
            ("IpProtocol", Expr::str("tcp")),
            (peer_key, peer),
            ("ToPort", Expr::Int(22)),
        ];
        rule.sort_by_key(|(key, _)| *key);
        Expr::map(rule)
    };
    let mut rules = Vec::new();
    for source in &ssh.source_security_groups {
        let peer = inputs::value(
            template,
            &source.value,
            inputs::Kind::SecurityGroupId,
            "A security group that may reach the nodes over SSH",
        );
        rules.push(ssh_rule("SourceSecurityGroupId", peer));
    }
    for cidr in &ssh.source_cidrs {
        let key = if cidr.contains(':') {
            "CidrIpv6"
        } else {
            "CidrIp"
        };
        rules.push(ssh_rule(key, Expr::str(cidr)));
    }
    template.resources.insert(
        ssh_security_group_id(group),
        Resource::new("AWS::EC2::SecurityGroup")
            .prop(
                "GroupDescription",
                format!("SSH to the nodes of group {}", group.name.value),
            )
            .prop("SecurityGroupIngress", Expr::List(rules))
            .prop("VpcId", vpc.clone()),
    );
}

/// The logical ID of the security group that holds a group's
/// `securityGroupRules`.
pub fn rules_security_group_id(group: &NodeGroup) -> String {
    format!("{}RulesSecurityGroup", group.logical_id)
}

/// A group with `securityGroupRules` gets a security group of its own with
/// one inbound rule each, added to its nodes' groups.
pub fn lower_rules(template: &mut Template, vpc: &Expr, group: &NodeGroup) {
    if group.security_group_rules.is_empty() {
        return;
    }
    let mut rules = Vec::new();
    for rule in &group.security_group_rules {
        let (protocol, ports) = match rule.protocol {
            RuleProtocol::All => ("-1", None),
            // Every ICMP type and code.
            RuleProtocol::Icmp | RuleProtocol::Icmpv6 => (rule.protocol.name(), Some((-1, -1))),
            RuleProtocol::Tcp | RuleProtocol::Udp => (
                rule.protocol.name(),
                rule.ports
                    .map(|(from, to)| (i64::from(from), i64::from(to))),
            ),
        };
        let (peer_key, peer) = match &rule.source {
            RuleSource::Cidr(cidr) if cidr.contains(':') => ("CidrIpv6", Expr::str(cidr)),
            RuleSource::Cidr(cidr) => ("CidrIp", Expr::str(cidr)),
            RuleSource::SecurityGroup(source) => (
                "SourceSecurityGroupId",
                inputs::value(
                    template,
                    &source.value,
                    inputs::Kind::SecurityGroupId,
                    "A security group that a node group's rules let in",
                ),
            ),
        };
        let mut entry = vec![
            (
                "Description",
                Expr::str(rule_description(rule.protocol, rule.ports)),
            ),
            ("IpProtocol", Expr::str(protocol)),
            (peer_key, peer),
        ];
        if let Some((from, to)) = ports {
            entry.push(("FromPort", Expr::Int(from)));
            entry.push(("ToPort", Expr::Int(to)));
        }
        entry.sort_by_key(|(key, _)| *key);
        rules.push(Expr::map(entry));
    }
    template.resources.insert(
        rules_security_group_id(group),
        Resource::new("AWS::EC2::SecurityGroup")
            .prop(
                "GroupDescription",
                format!("Rules of the nodes of group {}", group.name.value),
            )
            .prop("SecurityGroupIngress", Expr::List(rules))
            .prop("VpcId", vpc.clone()),
    );
}

/// What a rule lets in, in words.
fn rule_description(protocol: RuleProtocol, ports: Option<(u16, u16)>) -> String {
    match (protocol, ports) {
        (RuleProtocol::All, _) => "Allow all traffic to the nodes".to_string(),
        (_, Some((from, to))) if from == to => {
            format!("Allow {} port {from} to the nodes", protocol.name())
        }
        (_, Some((from, to))) => {
            format!("Allow {} ports {from}-{to} to the nodes", protocol.name())
        }
        (_, None) => format!("Allow {} to the nodes", protocol.name()),
    }
}
