//! The launch template of a node group: image, instance type, IMDS
//! hardening, the encrypted root volume, security groups, tags and the
//! user data that joins the node and signals CloudFormation.

use super::ami;
use super::iam::NodeIdentity;
use super::inputs::ClusterValues;
use super::security_group::NODE_SECURITY_GROUP;
use super::userdata::{self, Bootstrap, EfsMount, Label, Signal, Taint, UserDataInput};
use crate::blueprint::{AmiFamily, Blueprint, NodeGroup};
use crate::cfn::sub::SubBuilder;
use crate::cfn::{Expr, Pseudo, Resource, Template};

/// Everything the launch template needs besides the group itself.
pub struct Context<'a> {
    pub blueprint: &'a Blueprint,
    pub cluster: &'a ClusterValues,
    pub identity: &'a NodeIdentity,
    /// The logical ID of the Auto Scaling group the nodes signal.
    pub auto_scaling_group: &'a str,
    pub name_tag: &'a Expr,
}

pub fn lower(
    template: &mut Template,
    group: &NodeGroup,
    context: &Context<'_>,
) -> Result<String, super::Error> {
    let id = format!("{}LaunchTemplate", group.logical_id);
    let image_id = ami::image_id(
        template,
        group,
        context.blueprint.cluster.kubernetes_version.value,
    );

    let mut ebs = Resource::new("")
        .prop("VolumeSize", group.root_volume.size_gib)
        .prop("VolumeType", group.root_volume.volume_type.as_str())
        .prop_opt("Iops", group.root_volume.iops)
        .prop_opt("Throughput", group.root_volume.throughput)
        .prop("Encrypted", group.root_volume.encrypted)
        .prop_opt("KmsKeyId", group.root_volume.kms_key_id.as_deref())
        .prop("DeleteOnTermination", true)
        .properties;
    ebs.sort_by(|a, _, b, _| property_rank(a).cmp(&property_rank(b)));

    let mut security_groups = vec![Expr::reference(NODE_SECURITY_GROUP)];
    security_groups.extend(group.security_groups.iter().map(Expr::str));

    let mut volume_tags = vec![Expr::map([
        ("Key", Expr::str("Name")),
        ("Value", context.name_tag.clone()),
    ])];
    volume_tags.extend(
        group
            .tags
            .iter()
            .map(|(key, value)| Expr::map([("Key", Expr::str(key)), ("Value", Expr::str(value))])),
    );

    let metadata = Expr::map([
        ("HttpEndpoint", Expr::str("enabled")),
        (
            "HttpTokens",
            Expr::str(if group.imds.tokens_required {
                "required"
            } else {
                "optional"
            }),
        ),
        ("HttpPutResponseHopLimit", Expr::from(group.imds.hop_limit)),
    ]);

    let data = Resource::new("")
        .prop(
            "BlockDeviceMappings",
            Expr::list([Expr::map([
                ("DeviceName", Expr::str(root_device(group.ami_family))),
                ("Ebs", Expr::Map(ebs)),
            ])]),
        )
        .prop(
            "IamInstanceProfile",
            Expr::map([("Arn", context.identity.instance_profile_arn.clone())]),
        )
        .prop("ImageId", image_id)
        .prop_opt(
            "InstanceType",
            (group.instance_types.len() == 1).then(|| Expr::str(&group.instance_types[0].value)),
        )
        .prop_opt("KeyName", group.key_name.as_deref())
        .prop("MetadataOptions", metadata)
        .prop_opt(
            "Monitoring",
            group
                .detailed_monitoring
                .then(|| Expr::map([("Enabled", Expr::Bool(true))])),
        )
        .prop("SecurityGroupIds", Expr::List(security_groups))
        .prop(
            "TagSpecifications",
            Expr::list([Expr::map([
                ("ResourceType", Expr::str("volume")),
                ("Tags", Expr::List(volume_tags)),
            ])]),
        )
        .prop("UserData", Expr::base64(user_data(group, context)?));

    template.resources.insert(
        id.clone(),
        Resource::new("AWS::EC2::LaunchTemplate")
            .prop("LaunchTemplateData", Expr::Map(data.properties)),
    );
    Ok(id)
}

/// EBS properties in the order the CloudFormation documentation lists them.
fn property_rank(name: &str) -> usize {
    [
        "DeleteOnTermination",
        "Encrypted",
        "Iops",
        "KmsKeyId",
        "Throughput",
        "VolumeSize",
        "VolumeType",
    ]
    .iter()
    .position(|n| *n == name)
    .unwrap_or(usize::MAX)
}

fn root_device(family: AmiFamily) -> &'static str {
    match family {
        AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2 => "/dev/xvda",
    }
}

/// Renders the user data with placeholders for template values, then turns
/// it into `Fn::Sub`.
fn user_data(group: &NodeGroup, context: &Context<'_>) -> Result<Expr, super::Error> {
    let cluster = context.cluster;
    let mut sub = SubBuilder::new();
    let region = sub.placeholder("Region", &Expr::pseudo(Pseudo::Region));
    let url_suffix = sub.placeholder("URLSuffix", &Expr::pseudo(Pseudo::UrlSuffix));
    let input = UserDataInput {
        bootstrap: match group.ami_family {
            AmiFamily::AmazonLinux2023 => Bootstrap::Al2023,
            AmiFamily::AmazonLinux2 => Bootstrap::Al2,
        },
        cluster_name: sub.placeholder("ClusterName", &cluster.name),
        api_server_endpoint: sub.placeholder("ApiServerEndpoint", &cluster.endpoint),
        certificate_authority: sub
            .placeholder("CertificateAuthority", &cluster.certificate_authority),
        service_ipv4_cidr: sub.placeholder("ServiceIpv4Cidr", &cluster.service_ipv4_cidr),
        dns_cluster_ip: sub.placeholder("DnsClusterIp", &cluster.dns_cluster_ip),
        labels: group
            .labels
            .iter()
            .map(|(key, value)| Label {
                key: key.clone(),
                value: value.clone(),
            })
            .collect(),
        taints: group
            .taints
            .iter()
            .map(|taint| Taint {
                key: taint.key.clone(),
                value: taint.value.clone(),
                effect: taint.effect.kubernetes_name().to_string(),
            })
            .collect(),
        max_pods: group.max_pods,
        kubelet_config: group.kubelet_config.clone(),
        pre_bootstrap_commands: group.pre_bootstrap_commands.clone(),
        efs_mounts: group
            .efs_mounts
            .iter()
            .map(|mount| EfsMount {
                file_system_id: mount.file_system_id.clone(),
                mount_point: mount.mount_point.clone(),
                dns_name: format!("{}.efs.{region}.{url_suffix}", mount.file_system_id),
            })
            .collect(),
        block_pod_imds: group.imds.block_pods,
        signal: Signal {
            stack_name: sub.placeholder("StackName", &Expr::pseudo(Pseudo::StackName)),
            logical_id: context.auto_scaling_group.to_string(),
            region: region.clone(),
            url_suffix: url_suffix.clone(),
            timeout_seconds: group.signal_timeout_seconds,
        },
    };
    let text = userdata::render(&input).map_err(|error| super::Error {
        group: group.name.value.clone(),
        message: error.to_string(),
    })?;
    Ok(sub.finish(&text))
}
