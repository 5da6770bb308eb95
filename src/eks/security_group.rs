//! The node security group and its rules, equivalent to those of the
//! official `amazon-eks-nodegroup.yaml`: nodes talk to each other freely,
//! the control plane reaches kubelets and pods on 1025-65535 and 443, and
//! nodes reach the API server on 443.

use super::inputs;
use crate::blueprint::NodeGroup;
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
pub fn lower(
    template: &mut Template,
    control_plane: &Expr,
    vpc: &Expr,
    cluster_tag_key: &Expr,
    efa: bool,
    ipv6: bool,
) {
    let node = || Expr::reference(NODE_SECURITY_GROUP);
    let control_plane = || control_plane.clone();
    template.resources.insert(
        NODE_SECURITY_GROUP.to_string(),
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
            ),
    );
    let rule = |kind: &str,
                description: &str,
                group: Expr,
                peer_key: &str,
                peer: Expr,
                protocol: &str,
                ports: Option<(i64, i64)>| {
        let resource = Resource::new(kind)
            .prop("Description", description)
            .prop("GroupId", group)
            .prop(peer_key, peer)
            .prop("IpProtocol", protocol);
        match ports {
            Some((from, to)) => resource.prop("FromPort", from).prop("ToPort", to),
            None => resource,
        }
    };
    let ingress = "AWS::EC2::SecurityGroupIngress";
    let egress = "AWS::EC2::SecurityGroupEgress";
    let rules = [
        (
            "NodeSecurityGroupIngress",
            rule(
                ingress,
                "Allow nodes to communicate with each other",
                node(),
                "SourceSecurityGroupId",
                node(),
                "-1",
                None,
            ),
        ),
        (
            "NodeSecurityGroupFromControlPlaneIngress",
            rule(
                ingress,
                "Allow kubelets and pods to receive communication from the cluster control plane",
                node(),
                "SourceSecurityGroupId",
                control_plane(),
                "tcp",
                Some((1025, 65535)),
            ),
        ),
        (
            "NodeSecurityGroupFromControlPlaneOn443Ingress",
            rule(
                ingress,
                "Allow pods running extension API servers on port 443 to receive communication from the cluster control plane",
                node(),
                "SourceSecurityGroupId",
                control_plane(),
                "tcp",
                Some((443, 443)),
            ),
        ),
        (
            "ClusterControlPlaneSecurityGroupIngress",
            rule(
                ingress,
                "Allow pods to communicate with the cluster API server",
                control_plane(),
                "SourceSecurityGroupId",
                node(),
                "tcp",
                Some((443, 443)),
            ),
        ),
        (
            "ControlPlaneEgressToNodeSecurityGroup",
            rule(
                egress,
                "Allow the cluster control plane to communicate with kubelets and pods",
                control_plane(),
                "DestinationSecurityGroupId",
                node(),
                "tcp",
                Some((1025, 65535)),
            ),
        ),
        (
            "ControlPlaneEgressToNodeSecurityGroupOn443",
            rule(
                egress,
                "Allow the cluster control plane to communicate with pods running extension API servers on port 443",
                control_plane(),
                "DestinationSecurityGroupId",
                node(),
                "tcp",
                Some((443, 443)),
            ),
        ),
    ];
    for (id, resource) in rules {
        template.resources.insert(id.to_string(), resource);
    }
    if ipv6 {
        template.resources.insert(
            "NodeSecurityGroupIpv6Egress".to_string(),
            Resource::new(egress)
                .prop("CidrIpv6", "::/0")
                .prop("Description", "Allow all IPv6 traffic out of the nodes")
                .prop("GroupId", node())
                .prop("IpProtocol", "-1"),
        );
    }
    if efa {
        template.resources.insert(
            "NodeSecurityGroupEfaEgress".to_string(),
            rule(
                egress,
                "Allow EFA traffic from nodes to each other",
                node(),
                "DestinationSecurityGroupId",
                node(),
                "-1",
                None,
            ),
        );
    }
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
