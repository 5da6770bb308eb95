//! The launch template of a node group: image, instance type, IMDS
//! hardening, the volumes (`storage`), security groups, tags, placement,
//! and the user data that joins the node (and, for a self-managed group,
//! signals CloudFormation).

use super::ami;
use super::inputs::{self, ClusterValues};
use super::security_group::{NODE_SECURITY_GROUP, rules_security_group_id, ssh_security_group_id};
use super::storage;
use super::userdata::{
    self, Bootstrap, EfsMount, ExtraPart, Label, Mode, Share, Signal, Taint, UserDataInput,
};
use crate::blueprint::tags::{NAME, user_name};
use crate::blueprint::{
    Ami, AmiFamily, Blueprint, CapacityReservation, CpuOptions, InstanceStore, NodeGroup,
    NodeSecurityGroup, PlacementGroup, PoolState, SignalClient,
};
use crate::cfn::sub::SubBuilder;
use crate::cfn::{Expr, Pseudo, Resource, Template};

/// Everything the launch template needs besides the group itself.
pub struct Context<'a> {
    pub blueprint: &'a Blueprint,
    pub cluster: &'a ClusterValues,
    /// `IamInstanceProfile.Arn`; `None` for a managed group, whose profile
    /// EKS makes.
    pub instance_profile_arn: Option<&'a Expr>,
    /// The logical ID of the Auto Scaling group the nodes signal; `None`
    /// for a managed group.
    pub auto_scaling_group: Option<&'a str>,
    pub name_tag: &'a Expr,
}

fn tag(key: &str, value: Expr) -> Expr {
    Expr::map([("Key", Expr::str(key)), ("Value", value)])
}

/// Adds the group's launch template and returns its logical ID, and who
/// takes the bytes of its user data when it is larger than EC2 accepts.
pub fn lower(
    template: &mut Template,
    group: &NodeGroup,
    context: &Context<'_>,
) -> Result<(String, Option<Share>), super::Error> {
    let id = format!("{}LaunchTemplate", group.logical_id);
    let image_id = image_id(template, group);
    let security_groups = security_groups(template, group, context);
    let network_interfaces = network_interfaces(group, &security_groups);
    let (user_data, oversized) = user_data(group, context)?;
    let options = &group.launch_options;

    let data = Resource::new("")
        .prop(
            "BlockDeviceMappings",
            storage::block_device_mappings(template, group),
        )
        .prop_opt(
            "CapacityReservationSpecification",
            capacity_reservation(group),
        )
        .prop_opt("CpuOptions", options.cpu.as_ref().map(cpu_options))
        .prop_opt("CreditSpecification", credit_specification(group))
        .prop_opt("EbsOptimized", options.ebs_optimized.map(Expr::Bool))
        .prop_opt("EnclaveOptions", options.enclave.then(enabled))
        .prop_opt("HibernationOptions", hibernation_options(group))
        .prop_opt("IamInstanceProfile", iam_instance_profile(context))
        .prop_opt("ImageId", image_id)
        .prop_opt("InstanceMarketOptions", instance_market_options(group))
        .prop_opt("InstanceType", instance_type(group))
        .prop_opt("KeyName", group.key_name.as_deref())
        .prop_opt(
            "MaintenanceOptions",
            options
                .auto_recovery
                .map(|a| Expr::map([("AutoRecovery", Expr::str(a.name()))])),
        )
        .prop("MetadataOptions", metadata_options(group))
        .prop_opt("NetworkInterfaces", network_interfaces.clone())
        .prop_opt("Monitoring", group.detailed_monitoring.then(enabled))
        .prop_opt("Placement", placement(group))
        // EC2 refuses `SecurityGroupIds` beside network interfaces, which
        // then carry the security groups.
        .prop_opt(
            "SecurityGroupIds",
            network_interfaces
                .is_none()
                .then_some(Expr::List(security_groups)),
        )
        .prop("TagSpecifications", tag_specifications(group, context))
        .prop_opt("UserData", user_data.map(Expr::base64));

    template.resources.insert(
        id.clone(),
        Resource::new("AWS::EC2::LaunchTemplate")
            .prop("LaunchTemplateData", Expr::Map(data.properties)),
    );
    Ok((id, oversized))
}

/// An option that is on (`Enabled: true`).
/// A warm pool that hibernates its instances needs them launched with
/// hibernation configured (EC2's hibernation prerequisites; the root
/// volume is encrypted already).
fn hibernation_options(group: &NodeGroup) -> Option<Expr> {
    let pool = group.lifecycle.warm_pool.as_ref()?;
    (pool.pool_state.value == PoolState::Hibernated)
        .then(|| Expr::map([("Configured", Expr::Bool(true))]))
}

fn enabled() -> Expr {
    Expr::map([("Enabled", Expr::Bool(true))])
}

/// How a burstable instance's CPU credits are spent, when the blueprint
/// says.
fn credit_specification(group: &NodeGroup) -> Option<Expr> {
    group
        .launch_options
        .cpu_credits
        .map(|credits| Expr::map([("CpuCredits", Expr::str(credits.name()))]))
}

/// The instance profile of a self-managed group's nodes; EKS makes a
/// managed group's.
fn iam_instance_profile(context: &Context<'_>) -> Option<Expr> {
    context
        .instance_profile_arn
        .map(|arn| Expr::map([("Arn", arn.clone())]))
}

/// The `capacity-block` market of a group on a capacity block.
fn instance_market_options(group: &NodeGroup) -> Option<Expr> {
    capacity_block(group).map(|_| Expr::map([("MarketType", Expr::str("capacity-block"))]))
}

/// The image the nodes boot; `None` for a managed group on an EKS AMI,
/// which names its AMI type instead of an image.
fn image_id(template: &mut Template, group: &NodeGroup) -> Option<Expr> {
    match (&group.ami, group.managed.is_some()) {
        (Ami::Recommended, true) => None,
        _ => Some(ami::image_id(template, group, group.kubernetes_version)),
    }
}

/// The nodes' security groups: the node security group they share (or the
/// cluster's), the group's SSH security group, then the extra ones the
/// blueprint lists.
fn security_groups(template: &mut Template, group: &NodeGroup, context: &Context<'_>) -> Vec<Expr> {
    let shared = match (
        group.node_security_group,
        &context.cluster.cluster_security_group,
    ) {
        (NodeSecurityGroup::Cluster, Some(cluster)) => cluster.clone(),
        _ => Expr::reference(NODE_SECURITY_GROUP),
    };
    let mut security_groups = vec![shared];
    if group.ssh.is_some() {
        security_groups.push(Expr::reference(ssh_security_group_id(group)));
    }
    if !group.security_group_rules.is_empty() {
        security_groups.push(Expr::reference(rules_security_group_id(group)));
    }
    security_groups.extend(group.security_groups.iter().map(|source| {
        inputs::value(
            template,
            &source.value,
            inputs::Kind::SecurityGroupId,
            "An extra security group of the nodes",
        )
    }));
    security_groups
}

/// The tags of what the template launches: the instances of a managed
/// group (a self-managed group's get theirs from the Auto Scaling group),
/// and the volumes of every group.
fn tag_specifications(group: &NodeGroup, context: &Context<'_>) -> Expr {
    // The user's tags, the generated `Name` first unless the user names
    // the nodes.
    let mut tags = Vec::new();
    if user_name(&group.tags).is_none() {
        tags.push(tag(NAME, context.name_tag.clone()));
    }
    tags.extend(
        group
            .tags
            .iter()
            .map(|(key, value)| tag(key, Expr::str(value))),
    );
    let mut tag_specifications = Vec::new();
    if group.managed.is_some() {
        tag_specifications.push(Expr::map([
            ("ResourceType", Expr::str("instance")),
            ("Tags", Expr::List(tags.clone())),
        ]));
    }
    tag_specifications.push(Expr::map([
        ("ResourceType", Expr::str("volume")),
        ("Tags", Expr::List(tags)),
    ]));
    Expr::List(tag_specifications)
}

/// The instance metadata service's options: endpoint on, tokens and hop
/// limit as the blueprint sets them, the IPv6 endpoint and instance tags
/// when asked for.
fn metadata_options(group: &NodeGroup) -> Expr {
    let mut metadata = vec![
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
    ];
    if group.imds.ipv6 {
        metadata.push(("HttpProtocolIpv6", Expr::str("enabled")));
    }
    if group.imds.instance_tags {
        metadata.push(("InstanceMetadataTags", Expr::str("enabled")));
    }
    Expr::map(metadata)
}

/// The capacity block a group launches into, if any.
fn capacity_block(group: &NodeGroup) -> Option<&str> {
    group.capacity_block.as_deref()
}

/// The capacity reservation the nodes launch into or prefer. A group on a
/// capacity block launches into its reservation with the `capacity-block`
/// market type (a managed group's EKS takes its one instance type from
/// here rather than from the node group).
fn capacity_reservation(group: &NodeGroup) -> Option<Expr> {
    match (capacity_block(group), &group.capacity_reservation) {
        (Some(id), _) => Some(reservation_target("CapacityReservationId", id)),
        (None, Some(CapacityReservation::Open)) => Some(preference("open")),
        (None, Some(CapacityReservation::None)) => Some(preference("none")),
        (None, Some(CapacityReservation::Id(id))) => {
            Some(reservation_target("CapacityReservationId", id))
        }
        (None, Some(CapacityReservation::ResourceGroup(arn))) => Some(reservation_target(
            "CapacityReservationResourceGroupArn",
            arn,
        )),
        (None, None) => None,
    }
}

/// The placement group the nodes launch into (named or made for the
/// group), its partition, and the nodes' tenancy; none when the blueprint
/// sets none of them.
fn placement(group: &NodeGroup) -> Option<Expr> {
    let mut placement = Vec::new();
    if let Some(placement_group) = &group.placement_group {
        let name = match placement_group {
            PlacementGroup::Named(name) => Expr::str(name),
            PlacementGroup::Cluster => Expr::reference(placement_group_id(group)),
        };
        placement.push(("GroupName", name));
    }
    if let Some(partition) = group.placement.partition_number {
        placement.push(("PartitionNumber", Expr::from(partition)));
    }
    if let Some(tenancy) = group.placement.tenancy {
        placement.push(("Tenancy", Expr::str(tenancy.name())));
    }
    (!placement.is_empty()).then(|| Expr::map(placement))
}

/// The network interfaces, when the group has an EFA or a public address:
/// both are set on the primary interface, which then carries the security
/// groups. An EFA group gets one EFA per network card: the primary (device
/// index 0) on card 0, the others at device index 1 of cards 1 and up, as
/// eksctl builds them (`pkg/cfn/builder/network_interfaces.go`).
fn network_interfaces(group: &NodeGroup, security_groups: &[Expr]) -> Option<Expr> {
    let interface = group.efa || group.associate_public_ip;
    interface.then(|| {
        let mut primary = Vec::new();
        if group.associate_public_ip {
            primary.push(("AssociatePublicIpAddress", Expr::Bool(true)));
        }
        primary.push(("DeleteOnTermination", Expr::Bool(true)));
        primary.push(("DeviceIndex", Expr::Int(0)));
        primary.push(("Groups", Expr::List(security_groups.to_vec())));
        if group.efa {
            primary.push(("InterfaceType", Expr::str("efa")));
        }
        if group.efa_cards > 1 {
            primary.push(("NetworkCardIndex", Expr::Int(0)));
        }
        let mut interfaces = vec![Expr::map(primary)];
        // The primary interface carries the node's IP traffic; the others
        // may be EFA-only, which take no IP address.
        let secondary = if group.efa_only { "efa-only" } else { "efa" };
        interfaces.extend((1..group.efa_cards).map(|card| {
            Expr::map([
                ("DeleteOnTermination", Expr::Bool(true)),
                ("DeviceIndex", Expr::Int(1)),
                ("Groups", Expr::List(security_groups.to_vec())),
                ("InterfaceType", Expr::str(secondary)),
                ("NetworkCardIndex", Expr::from(card)),
            ])
        }));
        Expr::List(interfaces)
    })
}

/// The one instance type the template names. A managed group lists its
/// instance types itself (unless on a capacity block); a self-managed group
/// with several types or a spot mix lists them in its mixed instances
/// policy.
fn instance_type(group: &NodeGroup) -> Option<Expr> {
    ((group.managed.is_none() || capacity_block(group).is_some())
        && group.instance_types.len() == 1
        && group.weights.is_empty()
        && group.distribution.is_none())
    .then(|| Expr::str(&group.instance_types[0].value))
}

/// The logical ID of the cluster placement group made for a group.
pub fn placement_group_id(group: &NodeGroup) -> String {
    format!("{}PlacementGroup", group.logical_id)
}

/// `CpuOptions` with the fields the blueprint sets.
fn cpu_options(options: &CpuOptions) -> Expr {
    let mut entries = Vec::new();
    if options.amd_sev_snp {
        entries.push(("AmdSevSnp", Expr::str("enabled")));
    }
    if let Some(cores) = options.core_count {
        entries.push(("CoreCount", Expr::from(cores)));
    }
    if let Some(threads) = options.threads_per_core {
        entries.push(("ThreadsPerCore", Expr::from(threads)));
    }
    Expr::map(entries)
}

fn preference(value: &str) -> Expr {
    Expr::map([("CapacityReservationPreference", Expr::str(value))])
}

/// A resource group ARN may be written with `${AWS::Partition}`, so it is
/// `Fn::Sub` when it holds a variable.
fn reservation_target(key: &str, value: &str) -> Expr {
    Expr::map([(
        "CapacityReservationTarget",
        Expr::map([(key, Expr::sub_or_str(value))]),
    )])
}

/// Renders the user data with placeholders for template values, then turns
/// it into `Fn::Sub`. `None` when there is nothing to add (a managed group on
/// an EKS AMI with no customisation). When the text is larger than EC2
/// accepts, also who takes its bytes.
fn user_data(
    group: &NodeGroup,
    context: &Context<'_>,
) -> Result<(Option<Expr>, Option<Share>), super::Error> {
    let mut sub = SubBuilder::new();
    let input = user_data_input(group, context, &mut sub);
    let internal = |error: userdata::UserDataError| super::Error {
        group: group.name.value.clone(),
        message: error.to_string(),
    };
    let text = userdata::render(&input).map_err(internal)?;
    if text.is_empty() {
        return Ok((None, None));
    }
    let oversized = userdata::oversized(&input, &text).map_err(internal)?;
    Ok((Some(user_data_expr(&sub, &text)), oversized))
}

/// What the user data is rendered from: the group's bootstrap settings,
/// and the cluster's values as placeholders of `sub` (taken in the order
/// their variables are to be named).
fn user_data_input(
    group: &NodeGroup,
    context: &Context<'_>,
    sub: &mut SubBuilder,
) -> UserDataInput {
    let cluster = context.cluster;
    let region = sub.placeholder("Region", &Expr::pseudo(Pseudo::Region));
    let url_suffix = sub.placeholder("URLSuffix", &Expr::pseudo(Pseudo::UrlSuffix));
    let signal = context
        .auto_scaling_group
        .map(|asg| signal(group, asg, sub, &region, &url_suffix));
    UserDataInput {
        bootstrap: bootstrap(group.ami_family),
        mode: mode(group),
        cluster_name: sub.placeholder("ClusterName", &cluster.name),
        // Absent only when no group bootstraps its own nodes, and a managed
        // group on an EKS AMI, which EKS joins, renders neither.
        api_server_endpoint: cluster
            .endpoint
            .as_ref()
            .map(|endpoint| sub.placeholder("ApiServerEndpoint", endpoint))
            .unwrap_or_default(),
        certificate_authority: cluster
            .certificate_authority
            .as_ref()
            .map(|ca| sub.placeholder("CertificateAuthority", ca))
            .unwrap_or_default(),
        service_ipv4_cidr: cluster
            .service_ipv4_cidr
            .as_ref()
            .map(|cidr| sub.placeholder("ServiceIpv4Cidr", cidr)),
        service_ipv6_cidr: cluster
            .service_ipv6_cidr
            .as_ref()
            .map(|cidr| sub.placeholder("ServiceIpv6Cidr", cidr)),
        dns_cluster_ip: sub.placeholder("DnsClusterIp", &cluster.dns_cluster_ip),
        cluster_dns: group.cluster_dns.clone(),
        labels: labels(group),
        taints: taints(group),
        max_pods: group.max_pods,
        kubelet_config: group.kubelet_config.clone(),
        node_config: group.node_config.clone(),
        pre_bootstrap_commands: group.pre_bootstrap_commands.clone(),
        user_data_parts: user_data_parts(group),
        bottlerocket_settings: group.bottlerocket_settings.clone(),
        efs_mounts: efs_mounts(group, &region, &url_suffix),
        block_pod_imds: group.imds.block_pods,
        signal,
        bootstrap_arguments: group.bootstrap_arguments.clone(),
        instance_store_raid0: group.instance_store == Some(InstanceStore::Raid0),
        warm_pool: group.managed.is_none() && group.lifecycle.warm_pool.is_some(),
    }
}

fn bootstrap(family: AmiFamily) -> Bootstrap {
    match family {
        AmiFamily::AmazonLinux2023 => Bootstrap::Al2023,
        AmiFamily::AmazonLinux2 => Bootstrap::Al2,
        AmiFamily::Bottlerocket => Bootstrap::Bottlerocket,
        AmiFamily::Windows(_) => Bootstrap::Windows,
        AmiFamily::Ubuntu(_) => Bootstrap::Ubuntu,
    }
}

/// Who joins the nodes: the user data of a self-managed group or of a
/// managed group on a custom AMI does, EKS does on its own AMI.
fn mode(group: &NodeGroup) -> Mode {
    match (&group.managed, &group.ami) {
        (None, _) => Mode::SelfManaged,
        (Some(_), ami) if ami.is_custom() => Mode::ManagedCustomAmi,
        (Some(_), _) => Mode::ManagedEksAmi,
    }
}

fn labels(group: &NodeGroup) -> Vec<Label> {
    group
        .labels
        .iter()
        .map(|(key, value)| Label {
            key: key.clone(),
            value: value.clone(),
        })
        .collect()
}

fn taints(group: &NodeGroup) -> Vec<Taint> {
    group
        .taints
        .iter()
        .map(|taint| Taint {
            key: taint.key.clone(),
            value: taint.value.clone(),
            effect: taint.effect.kubernetes_name().to_string(),
        })
        .collect()
}

/// How a self-managed group's nodes tell CloudFormation they have joined:
/// a signal to the Auto Scaling group `asg` of this stack.
fn signal(
    group: &NodeGroup,
    asg: &str,
    sub: &mut SubBuilder,
    region: &str,
    url_suffix: &str,
) -> Signal {
    Signal {
        stack_name: sub.placeholder("StackName", &Expr::pseudo(Pseudo::StackName)),
        logical_id: asg.to_string(),
        region: region.to_string(),
        url_suffix: url_suffix.to_string(),
        timeout_seconds: group.signal_timeout_seconds(),
        client: match group.signal_client {
            SignalClient::Image => userdata::SignalClient::Image,
            SignalClient::Embedded => userdata::SignalClient::Embedded,
        },
        kubelet_unit: if group.ami_family.is_ubuntu() {
            "snap.kubelet-eks.daemon.service"
        } else {
            "kubelet.service"
        }
        .to_string(),
        post_bootstrap_commands: group.post_bootstrap_commands.clone(),
    }
}

fn user_data_parts(group: &NodeGroup) -> Vec<ExtraPart> {
    group
        .user_data_parts
        .iter()
        .map(|part| ExtraPart {
            content_type: part.content_type.mime_type().to_string(),
            content: part.content.clone(),
        })
        .collect()
}

/// The EFS file systems the nodes mount, each by the DNS name of its
/// region.
fn efs_mounts(group: &NodeGroup, region: &str, url_suffix: &str) -> Vec<EfsMount> {
    group
        .efs_mounts
        .iter()
        .map(|mount| EfsMount {
            file_system_id: mount.file_system_id.clone(),
            mount_point: mount.mount_point.clone(),
            dns_name: format!("{}.efs.{region}.{url_suffix}", mount.file_system_id),
        })
        .collect()
}

/// Rendered user data as one `Fn::Sub`; when a MIME part is sent base64,
/// an `Fn::Join` of the pieces in which CloudFormation encodes that part's
/// body (`Fn::Base64`) once its template values are filled in.
fn user_data_expr(sub: &SubBuilder, text: &str) -> Expr {
    let pieces = userdata::pieces(text);
    if let [userdata::Piece::Text(text)] = pieces.as_slice() {
        return sub.finish(text);
    }
    let items = pieces
        .into_iter()
        .map(|piece| match piece {
            userdata::Piece::Text(text) => sub.finish(text),
            userdata::Piece::Base64(text) => Expr::base64(sub.finish(text)),
        })
        .collect();
    Expr::join("", items)
}
