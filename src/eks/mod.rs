//! EKS knowledge: how a blueprint's node groups become CloudFormation
//! resources. Nothing here knows about YAML or JSON.
//!
//! **Architecture invariant:** lowering does not reject blueprints. Every
//! rule a blueprint must follow was checked when it was loaded; the only
//! failure here is an internal one (a user-data template that does not
//! render), which is a bug in eksynth, not in the input.

pub mod access;
pub mod ami;
pub mod autoscaling;
pub mod iam;
pub mod inputs;
pub mod launch_template;
pub mod managed;
pub mod priorities;
pub mod security_group;
pub mod stacks;
pub mod storage;
pub mod tags;
pub mod userdata;

use indexmap::IndexMap;

use crate::blueprint::{
    AuthenticationMode, Blueprint, NodeGroup, NodeSecurityGroup, PlacementGroup,
};
use crate::cfn::sub::SubBuilder;
use crate::cfn::{Expr, Output, Resource, Template};
use crate::source::Span;
use inputs::ClusterValues;

/// A user-data template failed to render: a bug in eksynth, not in the input.
#[derive(Debug, thiserror::Error)]
#[error("internal error: the user data of node group `{group}` did not render: {message}")]
pub struct Error {
    pub group: String,
    pub message: String,
}

/// Text made of literal pieces and template values, as `Fn::Sub` (or a
/// plain string when every piece is literal).
fn text(pieces: &[(&str, Option<&Expr>)]) -> Expr {
    let mut sub = SubBuilder::new();
    let mut out = String::new();
    for (piece, value) in pieces {
        match value {
            Some(value) => out.push_str(&sub.placeholder(piece, value)),
            None => out.push_str(piece),
        }
    }
    sub.finish(&out)
}

/// A template and, for each resource, the blueprint location it comes
/// from (the node group's name, or the cluster section for shared ones).
#[derive(Debug)]
pub struct Lowered {
    pub template: Template,
    pub origins: IndexMap<String, Span>,
    /// Finer origins: a path under `Resources/` (`Id/Properties/...`) and
    /// the blueprint field that writes the value there, for findings about
    /// that value.
    pub field_origins: IndexMap<String, Span>,
    /// For each resource, the index of the stack it belongs to
    /// ([`crate::blueprint::Blueprint::stacks`]).
    pub resource_stacks: IndexMap<String, usize>,
    /// For each output, the index of the stack it belongs to.
    pub output_stacks: IndexMap<String, usize>,
    /// Launch templates whose user data is larger than EC2 accepts: the
    /// index of their group in the blueprint, and who takes the bytes.
    pub oversized_user_data: IndexMap<String, (usize, userdata::Share)>,
}

/// Lowers a checked blueprint into a template: the cluster's shared
/// resources in the main stack, then each node group's resources in its
/// own, then the stack's outputs.
pub fn lower(blueprint: &Blueprint) -> Result<Lowered, Error> {
    let mut template = Template::default();
    let mut origins = IndexMap::new();
    let mut field_origins = IndexMap::new();
    template.description = Some(description(blueprint));
    let cluster = ClusterValues::resolve(&mut template, &blueprint.cluster);
    let shared = Shared::new(blueprint, &cluster);
    let node_security_group = lower_node_security_group(&mut template, &shared);
    record_origins(&template, &mut origins, blueprint.cluster.name.span);
    // The rules with the cluster security group are there for the first
    // group on it.
    if let Some(group) = blueprint
        .node_groups
        .iter()
        .find(|g| g.node_security_group == NodeSecurityGroup::Cluster)
    {
        let span = group
            .field_spans
            .iter()
            .find(|(field, _)| *field == "nodeSecurityGroup")
            .map_or(group.name.span, |(_, span)| *span);
        for id in security_group::cluster_security_group_rules() {
            if let Some(origin) = origins.get_mut(id) {
                *origin = span;
            }
        }
    }
    access::lower_shared(&mut template, blueprint, &cluster.name);
    record_origins(&template, &mut origins, blueprint.cluster.node_access_span);
    tag_since(&mut template, 0, &blueprint.tags, None);
    let mut resource_stacks = IndexMap::new();
    let mut output_stacks = IndexMap::new();
    record_stack(&template, &mut resource_stacks, &mut output_stacks, 0);

    let mut oversized_user_data = IndexMap::new();
    // The access of existing roles, which lives in the main stack.
    let mut shared_access: Vec<String> = Vec::new();
    for (index, group) in blueprint.node_groups.iter().enumerate() {
        let first = template.resources.len();
        let lowered = lower_group(&mut template, &shared, group)?;
        // An existing role's access is shared by the groups on the role,
        // like the resources of the main stack.
        let role_access = lowered.existing_role_access.as_deref();
        tag_since(&mut template, first, &group.tags, role_access);
        if let Some(id) = role_access {
            tags::apply(&mut template.resources[id], &blueprint.tags);
        }
        if let (Some(share), Some(launch_template)) =
            (lowered.oversized_user_data, &lowered.launch_template)
        {
            oversized_user_data.insert(launch_template.clone(), (index, share));
        }
        shared_access.extend(lowered.existing_role_access);
        record_origins(&template, &mut origins, group.name.span);
        // The group's own rules come from the line that writes them.
        if let Some((_, span)) = group
            .field_spans
            .iter()
            .find(|(field, _)| *field == "securityGroupRules")
        {
            let id = security_group::rules_security_group_id(group);
            if let Some(origin) = origins.get_mut(&id) {
                *origin = *span;
            }
        }
        // A self-managed group's warm pool comes from `lifecycle.warmPool`.
        if let (Some(pool), None) = (&group.lifecycle.warm_pool, &group.managed) {
            origins.insert(autoscaling::warm_pool_id(group), pool.span);
        }
        record_field_origins(
            &mut field_origins,
            group,
            lowered.launch_template.as_deref(),
            lowered.auto_scaling_group.as_deref(),
        );
        record_stack(
            &template,
            &mut resource_stacks,
            &mut output_stacks,
            group.stack,
        );
    }
    stack_outputs(&mut template, blueprint, node_security_group);
    tidy_parameters(&mut template);
    record_stack(&template, &mut resource_stacks, &mut output_stacks, 0);
    // An existing role's access lives in the main stack whatever groups
    // use it: groups of several stacks may share the role, EKS has one
    // access entry per role and aws-auth one mapping, and adding or
    // removing a group must never move it between stacks (deleting it in
    // one and creating it in another, which EKS refuses while the first
    // exists). Group stacks wait for it by importing it.
    for id in shared_access {
        resource_stacks.insert(id, 0);
    }
    Ok(Lowered {
        template,
        origins,
        field_origins,
        resource_stacks,
        output_stacks,
        oversized_user_data,
    })
}

/// The cluster-wide values every node group is lowered against.
struct Shared<'a> {
    blueprint: &'a Blueprint,
    cluster: &'a ClusterValues,
    /// `kubernetes.io/cluster/<cluster name>`.
    cluster_tag_key: Expr,
    /// `k8s.io/cluster-autoscaler/<cluster name>`.
    autoscaler_tag_key: Expr,
}

impl<'a> Shared<'a> {
    fn new(blueprint: &'a Blueprint, cluster: &'a ClusterValues) -> Shared<'a> {
        Shared {
            blueprint,
            cluster_tag_key: text(&[
                ("kubernetes.io/cluster/", None),
                ("ClusterName", Some(&cluster.name)),
            ]),
            autoscaler_tag_key: text(&[
                ("k8s.io/cluster-autoscaler/", None),
                ("ClusterName", Some(&cluster.name)),
            ]),
            cluster,
        }
    }
}

/// What lowering one node group leaves for the whole template to record.
struct LoweredGroup {
    /// The group's own launch template: none on an existing one.
    launch_template: Option<String>,
    /// The Auto Scaling group of a self-managed group.
    auto_scaling_group: Option<String>,
    /// Who takes the bytes when the user data is larger than EC2 accepts.
    oversized_user_data: Option<userdata::Share>,
    /// The access of the group's existing role, which lives in the main
    /// stack.
    existing_role_access: Option<String>,
}

/// The template's description: the blueprint's own, or one naming the
/// node groups.
fn description(blueprint: &Blueprint) -> String {
    blueprint.description.clone().unwrap_or_else(|| {
        let group_names: Vec<&str> = blueprint
            .node_groups
            .iter()
            .map(|g| g.name.value.as_str())
            .collect();
        format!(
            "EKS node groups: {}. Generated by eksynth; edit the blueprint, not this file.",
            group_names.join(", ")
        )
    })
}

/// The node security group shared by the groups that use it, if some do;
/// tells whether it was added.
fn lower_node_security_group(template: &mut Template, shared: &Shared) -> bool {
    // The shared node security group exists only for the groups that use
    // it; groups on the cluster security group need none of its rules.
    let groups: Vec<&NodeGroup> = shared_groups(shared.blueprint).collect();
    // The loader requires the control plane's security group and the VPC
    // when some group shares the node security group.
    match (
        &shared.cluster.control_plane_security_group,
        &shared.cluster.vpc,
    ) {
        (Some(control_plane), Some(vpc)) if !groups.is_empty() => {
            let efa = groups.iter().any(|g| g.efa);
            let ipv6 = shared.blueprint.cluster.service_ipv6_cidr.is_some();
            // The loader requires the cluster security group's ID of a
            // group on it.
            let on_cluster = shared
                .blueprint
                .node_groups
                .iter()
                .any(|g| g.node_security_group == NodeSecurityGroup::Cluster);
            let sides = security_group::Sides {
                control_plane,
                vpc,
                cluster: shared
                    .cluster
                    .cluster_security_group
                    .as_ref()
                    .filter(|_| on_cluster),
            };
            security_group::lower(template, &sides, &shared.cluster_tag_key, efa, ipv6);
            true
        }
        _ => false,
    }
}

/// The node groups that share the node security group.
fn shared_groups(blueprint: &Blueprint) -> impl Iterator<Item = &NodeGroup> {
    blueprint
        .node_groups
        .iter()
        .filter(|g| g.node_security_group == NodeSecurityGroup::Shared)
}

/// One node group's resources: its identity, placement group, SSH
/// security group, launch template, the nodes themselves (an Auto Scaling
/// group with its access, or a managed node group), and its outputs.
fn lower_group(
    template: &mut Template,
    shared: &Shared,
    group: &NodeGroup,
) -> Result<LoweredGroup, Error> {
    let cluster = shared.cluster;
    let ipv6 = shared.blueprint.cluster.service_ipv6_cidr.is_some();
    let identity = iam::lower(template, group, ipv6);
    let name_tag = text(&[
        ("ClusterName", Some(&cluster.name)),
        (&format!("-{}-Node", group.name.value), None),
    ]);
    let asg = group
        .managed
        .is_none()
        .then(|| autoscaling::logical_id(group));
    lower_placement_group(template, group);
    // The loader requires the VPC when some group has SSH sources or
    // security group rules.
    if let Some(vpc) = &cluster.vpc {
        security_group::lower_ssh(template, vpc, group);
        security_group::lower_rules(template, vpc, group);
    }
    // The group's own launch template, unless a managed group names an
    // existing one.
    let own_launch_template = |template: &mut Template| {
        launch_template::lower(
            template,
            group,
            &launch_template::Context {
                blueprint: shared.blueprint,
                cluster,
                instance_profile_arn: identity.instance_profile_arn.as_ref(),
                auto_scaling_group: asg.as_deref(),
                name_tag: &name_tag,
            },
        )
    };
    let mut existing_role_access = None;
    let (nodes, launch_template, oversized_user_data) = match &group.managed {
        None => {
            let (launch_template, oversized) = own_launch_template(template)?;
            let (asg, access) = lower_self_managed(
                template,
                shared,
                group,
                &identity,
                &launch_template,
                &name_tag,
            );
            if group.iam.existing.is_some() {
                existing_role_access = access;
            }
            (
                Nodes::AutoScalingGroup(asg),
                Some(launch_template),
                oversized,
            )
        }
        Some(managed) => {
            let (reference, launch_template, oversized) = match &managed.launch_template {
                Some(existing) => (
                    managed::existing_launch_template(template, existing),
                    None,
                    None,
                ),
                None => {
                    let (launch_template, oversized) = own_launch_template(template)?;
                    let reference = managed::own_launch_template(&launch_template);
                    (reference, Some(launch_template), oversized)
                }
            };
            let nodes = Nodes::Managed(managed::lower(
                template,
                group,
                managed,
                &managed::Context {
                    cluster,
                    role_arn: &identity.role_arn,
                    launch_template: reference,
                    version: group.kubernetes_version,
                },
            ));
            (nodes, launch_template, oversized)
        }
    };
    group_outputs(template, group, &identity, &nodes);
    Ok(LoweredGroup {
        launch_template,
        auto_scaling_group: asg,
        oversized_user_data,
        existing_role_access,
    })
}

/// The cluster placement group made for a group that asks for one: EFA
/// nodes talk over a low-latency network in one placement group of their
/// own.
fn lower_placement_group(template: &mut Template, group: &NodeGroup) {
    if group.placement_group == Some(PlacementGroup::Cluster) {
        template.resources.insert(
            launch_template::placement_group_id(group),
            Resource::new("AWS::EC2::PlacementGroup").prop("Strategy", "cluster"),
        );
    }
}

/// A self-managed group's Auto Scaling group and the access of its role,
/// which the Auto Scaling group waits for: self-managed nodes join only
/// once their role is authorized (EKS authorizes a managed group's role
/// itself). Returns both logical IDs; no access with `nodeAccess: none`,
/// where it is granted outside the blueprint.
fn lower_self_managed(
    template: &mut Template,
    shared: &Shared,
    group: &NodeGroup,
    identity: &iam::NodeIdentity,
    launch_template: &str,
    name_tag: &Expr,
) -> (String, Option<String>) {
    let asg = autoscaling::lower(
        template,
        group,
        &autoscaling::Context {
            launch_template,
            name_tag,
            cluster_tag_key: &shared.cluster_tag_key,
            autoscaler_tag_key: &shared.autoscaler_tag_key,
        },
    );
    let access = access::lower(
        template,
        shared.blueprint,
        &shared.cluster.name,
        group,
        &identity.role_arn,
    );
    if let Some(access) = &access {
        template.resources[&asg].depends_on.push(access.clone());
    }
    (asg, access)
}

/// The resource a node group's nodes are made by.
enum Nodes {
    AutoScalingGroup(String),
    Managed(String),
}

/// A node group's outputs: its role's and instance profile's ARNs when it
/// creates them, then its Auto Scaling group's name or managed node
/// group's ARN.
fn group_outputs(
    template: &mut Template,
    group: &NodeGroup,
    identity: &iam::NodeIdentity,
    nodes: &Nodes,
) {
    let identity_id = &group.identity;
    if let Some(role) = &identity.role {
        output(
            template,
            &format!("{identity_id}NodeRoleArn"),
            "The node role ARN",
            Expr::get_att(role, "Arn"),
        );
    }
    if let Some(profile) = &identity.instance_profile {
        output(
            template,
            &format!("{identity_id}InstanceProfileArn"),
            "The node instance profile ARN",
            Expr::get_att(profile, "Arn"),
        );
    }
    let id = &group.logical_id;
    match nodes {
        Nodes::AutoScalingGroup(asg) => output(
            template,
            &format!("{id}AutoScalingGroupName"),
            "The Auto Scaling group name",
            Expr::reference(asg),
        ),
        Nodes::Managed(node_group) => output(
            template,
            &format!("{id}NodegroupArn"),
            "The managed node group ARN",
            Expr::get_att(node_group, "Arn"),
        ),
    }
}

/// The outputs about the whole stack: the aws-auth provider's role and the
/// shared node security group, when there are.
fn stack_outputs(template: &mut Template, blueprint: &Blueprint, node_security_group: bool) {
    if let Some(arn) = access::provider_role_arn(template, blueprint) {
        let description = if blueprint.cluster.authentication_mode == AuthenticationMode::ConfigMap
        {
            "The aws-auth provider role: map it once in aws-auth to a group that may edit ConfigMaps in kube-system (see eksynth's docs/src/guide/cluster-access.md)"
        } else {
            "The aws-auth provider's role"
        };
        output(template, "AwsAuthProviderRoleArn", description, arn);
    }
    if node_security_group {
        // Groups on the cluster security group do not share it.
        let description = if shared_groups(blueprint).count() == blueprint.node_groups.len() {
            "The security group shared by all nodes of the stack"
        } else {
            "The security group shared by the nodes of the groups not on the cluster security group"
        };
        output(
            template,
            "NodeSecurityGroupId",
            description,
            Expr::reference(security_group::NODE_SECURITY_GROUP),
        );
    }
}

/// Drops the parameters nothing uses, and puts the image parameters last:
/// they have defaults and are rarely overridden.
fn tidy_parameters(template: &mut Template) {
    template.remove_unused_parameters();
    template
        .parameters
        .sort_by(|a, _, b, _| ami::is_image_parameter(a).cmp(&ami::is_image_parameter(b)));
}

/// Places every resource and output not placed yet in stack `stack`.
/// Lowering only ever adds resources and outputs, in order, so the ones not
/// placed yet are those past the counts already placed.
fn record_stack(
    template: &Template,
    resources: &mut IndexMap<String, usize>,
    outputs: &mut IndexMap<String, usize>,
    stack: usize,
) {
    for id in template.resources.keys().skip(resources.len()) {
        resources.insert(id.clone(), stack);
    }
    for name in template.outputs.keys().skip(outputs.len()) {
        outputs.insert(name.clone(), stack);
    }
}

/// Tags the resources from the `first`-th on (those one lowering step
/// added), but `except`.
fn tag_since(
    template: &mut Template,
    first: usize,
    tags: &[(String, String)],
    except: Option<&str>,
) {
    for (id, resource) in template.resources.iter_mut().skip(first) {
        if Some(id.as_str()) != except {
            tags::apply(resource, tags);
        }
    }
}

/// Records `span` as the origin of every resource that has none yet (the
/// ones added since the last call, as in [`record_stack`]).
fn record_origins(template: &Template, origins: &mut IndexMap<String, Span>, span: Span) {
    for id in template.resources.keys().skip(origins.len()) {
        origins.insert(id.clone(), span);
    }
}

/// The group fields that write one property of a self-managed group's Auto
/// Scaling group each, and that property's path.
const AUTO_SCALING_GROUP_FIELDS: &[(&str, &str)] = &[
    ("targetGroupArns", "Properties/TargetGroupARNs"),
    ("classicLoadBalancerNames", "Properties/LoadBalancerNames"),
    ("lifecycle", "Properties/TerminationPolicies"),
    ("lifecycle", "Properties/DefaultInstanceWarmup"),
    ("lifecycle", "Properties/HealthCheckType"),
    ("lifecycle", "Properties/NewInstancesProtectedFromScaleIn"),
    ("lifecycle", "Properties/InstanceMaintenancePolicy"),
    ("lifecycle", "Properties/AvailabilityZoneDistribution"),
    ("lifecycle", "Properties/DeletionProtection"),
    ("lifecycle", "Properties/LifecycleHookSpecificationList"),
    ("tags", "Properties/Tags"),
    ("minSize", "Properties/MinSize"),
    ("maxSize", "Properties/MaxSize"),
    ("desiredCapacity", "Properties/DesiredCapacity"),
    ("subnets", "Properties/VPCZoneIdentifier"),
];

/// The group fields that write one property of its launch template each,
/// and that property's path: what an organisation's rules (and
/// validation) judge is found at the field that wrote it.
const LAUNCH_TEMPLATE_FIELDS: &[(&str, &str)] = &[
    ("tags", "Properties/LaunchTemplateData/TagSpecifications"),
    (
        "associatePublicIpAddress",
        "Properties/LaunchTemplateData/NetworkInterfaces/0/AssociatePublicIpAddress",
    ),
    ("keyName", "Properties/LaunchTemplateData/KeyName"),
    (
        "detailedMonitoring",
        "Properties/LaunchTemplateData/Monitoring",
    ),
    (
        "rootVolume",
        "Properties/LaunchTemplateData/BlockDeviceMappings/0",
    ),
];

/// The group fields that write one property of a managed node group each,
/// and that property's path.
const MANAGED_NODE_GROUP_FIELDS: &[(&str, &str)] = &[
    ("tags", "Properties/Tags"),
    ("minSize", "Properties/ScalingConfig/MinSize"),
    ("maxSize", "Properties/ScalingConfig/MaxSize"),
    ("desiredCapacity", "Properties/ScalingConfig/DesiredSize"),
    ("subnets", "Properties/Subnets"),
];

/// Records where `group`'s fields that findings are about are written: in
/// its launch template and, for a self-managed group, its Auto Scaling group.
fn record_field_origins(
    field_origins: &mut IndexMap<String, Span>,
    group: &NodeGroup,
    launch_template: Option<&str>,
    auto_scaling_group: Option<&str>,
) {
    let mut fields = Vec::new();
    if let Some(launch_template) = launch_template {
        fields.push((
            launch_template,
            "Properties/LaunchTemplateData/MetadataOptions/HttpTokens",
            group.imds.tokens_span,
        ));
        fields.push((
            launch_template,
            "Properties/LaunchTemplateData/MetadataOptions/HttpPutResponseHopLimit",
            group.imds.hop_limit_span,
        ));
        for (field, path) in LAUNCH_TEMPLATE_FIELDS {
            fields.push((launch_template, path, written(group, field)));
        }
        // The root volume's mapping comes first, then one per volume.
        if let Some(span) = written(group, "volumes") {
            for index in 1..=group.volumes.len() {
                field_origins.insert(
                    format!(
                        "{launch_template}/Properties/LaunchTemplateData/BlockDeviceMappings/{index}"
                    ),
                    span,
                );
            }
        }
    }
    if let Some(asg) = auto_scaling_group {
        fields.push((
            asg,
            "UpdatePolicy/AutoScalingRollingUpdate/PauseTime",
            group.update.pause_time_span,
        ));
        for (field, path) in AUTO_SCALING_GROUP_FIELDS {
            fields.push((asg, path, written(group, field)));
        }
    }
    let nodegroup = group.managed.as_ref().map(|_| managed::logical_id(group));
    if let Some(nodegroup) = &nodegroup {
        for (field, path) in MANAGED_NODE_GROUP_FIELDS {
            fields.push((nodegroup, path, written(group, field)));
        }
    }
    if let (Some(nodegroup), Some(pool)) = (&nodegroup, &group.lifecycle.warm_pool) {
        fields.push((nodegroup, "Properties/WarmPoolConfig", Some(pool.span)));
    }
    for (id, path, span) in fields {
        if let Some(span) = span {
            field_origins.insert(format!("{id}/{path}"), span);
        }
    }
    // Each instance type, wherever the group's resources name it: the
    // launch template (one type), the mixed instances policy's overrides,
    // or the managed node group's list.
    let types = &group.instance_types;
    if let (Some(first), Some(launch_template)) = (types.first(), launch_template) {
        field_origins.insert(
            format!("{launch_template}/Properties/LaunchTemplateData/InstanceType"),
            first.span,
        );
    }
    for (index, located) in types.iter().enumerate() {
        if let Some(asg) = auto_scaling_group {
            field_origins.insert(
                format!(
                    "{asg}/Properties/MixedInstancesPolicy/LaunchTemplate/Overrides/{index}/InstanceType"
                ),
                located.span,
            );
        }
        if group.managed.is_some() {
            field_origins.insert(
                format!(
                    "{}Nodegroup/Properties/InstanceTypes/{index}",
                    group.identity
                ),
                located.span,
            );
        }
    }
}

/// Where `group` (or the defaults it takes) writes `field`.
fn written(group: &NodeGroup, field: &str) -> Option<Span> {
    group
        .field_spans
        .iter()
        .find(|(written, _)| *written == field)
        .map(|(_, span)| *span)
}

/// An output exported as `<stack name>-<output name>`.
fn output(template: &mut Template, name: &str, description: &str, value: Expr) {
    template.outputs.insert(
        name.to_string(),
        Output {
            description: Some(description.to_string()),
            condition: None,
            value,
            export: Some(Expr::sub(format!("${{AWS::StackName}}-{name}"))),
        },
    );
}
