//! A managed node group (`AWS::EKS::Nodegroup`) with a custom launch
//! template: EKS runs the Auto Scaling group, drains nodes on updates and
//! maps the node role in the cluster, so the template carries no signal and
//! no aws-auth entry.

use super::inputs::{self, ClusterValues};
use crate::blueprint::{
    Ami, Amount, CapacityType, ExistingLaunchTemplate, KubernetesVersion, Managed, NodeGroup,
    NodeRepair, PoolState, RepairAction, TaintEffect, UpdateStrategy, WarmPool,
};
use crate::cfn::{Expr, Resource, Template};
use crate::upstream::ami_catalogue;

pub fn logical_id(group: &NodeGroup) -> String {
    format!("{}Nodegroup", group.logical_id)
}

/// The EKS API spells taint effects in upper snake case.
fn eks_effect(effect: TaintEffect) -> &'static str {
    match effect {
        TaintEffect::NoSchedule => "NO_SCHEDULE",
        TaintEffect::PreferNoSchedule => "PREFER_NO_SCHEDULE",
        TaintEffect::NoExecute => "NO_EXECUTE",
    }
}

pub struct Context<'a> {
    pub cluster: &'a ClusterValues,
    pub role_arn: &'a Expr,
    /// The node group's `LaunchTemplate`: its own, or an existing one.
    pub launch_template: Expr,
    /// The Kubernetes version of the group's nodes.
    pub version: KubernetesVersion,
}

pub fn lower(
    template: &mut Template,
    group: &NodeGroup,
    managed: &Managed,
    context: &Context<'_>,
) -> String {
    let id = logical_id(group);
    let ami_type = ami_type(group, managed);
    let resource = Resource::new("AWS::EKS::Nodegroup")
        .prop_opt("AmiType", ami_type.clone().map(Expr::from))
        .prop("CapacityType", capacity_type(managed.capacity_type))
        .prop("ClusterName", context.cluster.name.clone())
        .prop_opt(
            "ForceUpdateEnabled",
            managed.force_update_enabled.then_some(Expr::Bool(true)),
        )
        .prop_opt("InstanceTypes", instance_types(group))
        .prop_opt("Labels", labels(group))
        .prop("LaunchTemplate", context.launch_template.clone())
        .prop_opt(
            "NodeRepairConfig",
            managed.node_repair.as_ref().map(node_repair_config),
        )
        .prop("NodeRole", context.role_arn.clone())
        .prop("NodegroupName", managed.nodegroup_name.value.as_str())
        .prop_opt("ReleaseVersion", managed.release_version.as_deref())
        .prop("ScalingConfig", scaling_config(group))
        .prop("Subnets", inputs::subnets(template, &group.subnets.value))
        .prop_opt("Tags", tags(group))
        .prop_opt("Taints", taints(group))
        .prop_opt("UpdateConfig", update_config(managed))
        .prop_opt(
            "WarmPoolConfig",
            group.lifecycle.warm_pool.as_ref().map(warm_pool_config),
        )
        // EKS upgrades the nodes of a group on an EKS AMI when its `Version`
        // changes, with its update settings; a custom AMI is the launch
        // template's, and EKS refuses a `Version` beside it.
        .prop_opt(
            "Version",
            ami_type
                .is_some()
                .then(|| Expr::str(context.version.to_string())),
        );
    template.resources.insert(id.clone(), resource);
    id
}

fn capacity_type(capacity_type: CapacityType) -> &'static str {
    match capacity_type {
        CapacityType::OnDemand => "ON_DEMAND",
        CapacityType::Spot => "SPOT",
        CapacityType::CapacityBlock => "CAPACITY_BLOCK",
    }
}

/// On an EKS AMI the group names its AMI type; a custom AMI is in the
/// launch template, and `AmiType` must then be left out.
fn ami_type(group: &NodeGroup, managed: &Managed) -> Option<String> {
    match &group.ami {
        Ami::Recommended => Some(managed.ami_type.clone().unwrap_or_else(|| {
            ami_catalogue::managed_ami_type(
                group.ami_family,
                group.arch,
                group.accelerator,
                group.fips,
            )
        })),
        Ami::Pinned(_) | Ami::Ssm(_) | Ami::Parameter { .. } => None,
    }
}

/// The group's instance types. A capacity block's instance type is in the
/// launch template, where EKS requires it, and the node group then names
/// none.
fn instance_types(group: &NodeGroup) -> Option<Expr> {
    group
        .capacity_block
        .is_none()
        .then(|| Expr::list(group.instance_types.iter().map(|t| Expr::str(&t.value))))
}

/// The nodes' Kubernetes labels, when the group has some.
fn labels(group: &NodeGroup) -> Option<Expr> {
    (!group.labels.is_empty())
        .then(|| Expr::map(group.labels.iter().map(|(k, v)| (k.clone(), Expr::str(v)))))
}

/// The group's launch template, at its latest version.
pub fn own_launch_template(launch_template: &str) -> Expr {
    Expr::map([
        ("Id", Expr::reference(launch_template)),
        (
            "Version",
            Expr::get_att(launch_template, "LatestVersionNumber"),
        ),
    ])
}

/// An existing launch template, at its default version unless the
/// blueprint names one.
pub fn existing_launch_template(
    template: &mut Template,
    existing: &ExistingLaunchTemplate,
) -> Expr {
    let mut spec = vec![(
        "Id",
        inputs::value(
            template,
            &existing.id.value,
            inputs::Kind::String,
            "The launch template of a managed node group",
        ),
    )];
    if let Some(version) = &existing.version {
        spec.push((
            "Version",
            inputs::value(
                template,
                &version.value,
                inputs::Kind::String,
                "The version of a managed node group's launch template",
            ),
        ));
    }
    Expr::map(spec)
}

/// The warm pool EKS attaches to the group's Auto Scaling group; EKS
/// spells pool states in upper case.
fn warm_pool_config(pool: &WarmPool) -> Expr {
    let state = match pool.pool_state.value {
        PoolState::Stopped => "STOPPED",
        PoolState::Running => "RUNNING",
        PoolState::Hibernated => "HIBERNATED",
    };
    let mut config = vec![("Enabled", Expr::Bool(true))];
    if let Some(max) = pool.max_prepared_capacity {
        config.push(("MaxGroupPreparedCapacity", Expr::from(max)));
    }
    if let Some(min) = pool.min_size {
        config.push(("MinSize", Expr::from(min)));
    }
    config.push(("PoolState", Expr::str(state)));
    if pool.reuse_on_scale_in.value {
        config.push(("ReuseOnScaleIn", Expr::Bool(true)));
    }
    Expr::map(config)
}

/// The group's sizes, the desired one when the blueprint sets it.
fn scaling_config(group: &NodeGroup) -> Expr {
    let mut scaling = vec![
        ("MinSize", Expr::from(group.min_size)),
        ("MaxSize", Expr::from(group.max_size)),
    ];
    if let Some(desired) = group.desired_capacity {
        scaling.push(("DesiredSize", Expr::from(desired)));
    }
    Expr::map(scaling)
}

/// The node group's own tags, when the group has some.
fn tags(group: &NodeGroup) -> Option<Expr> {
    (!group.tags.is_empty())
        .then(|| Expr::map(group.tags.iter().map(|(k, v)| (k.clone(), Expr::str(v)))))
}

/// The nodes' taints, when the group has some, in the EKS API's spelling.
fn taints(group: &NodeGroup) -> Option<Expr> {
    (!group.taints.is_empty()).then(|| {
        Expr::list(group.taints.iter().map(|taint| {
            let mut entries = vec![("Key", Expr::str(&taint.key))];
            if let Some(value) = &taint.value {
                entries.push(("Value", Expr::str(value)));
            }
            entries.push(("Effect", Expr::str(eks_effect(taint.effect))));
            Expr::map(entries)
        }))
    })
}

/// How many nodes an update may take down at once, as a count or a
/// percentage, and the update strategy, when the blueprint sets either.
fn update_config(managed: &Managed) -> Option<Expr> {
    let mut update_config = Vec::new();
    match managed.max_unavailable {
        Some(Amount::Count(count)) => {
            update_config.push(("MaxUnavailable", Expr::from(count)));
        }
        Some(Amount::Percentage(pct)) => {
            update_config.push(("MaxUnavailablePercentage", Expr::from(pct)));
        }
        None => {}
    }
    if let Some(strategy) = managed.update_strategy {
        let name = match strategy {
            UpdateStrategy::Default => "DEFAULT",
            UpdateStrategy::Minimal => "MINIMAL",
        };
        update_config.push(("UpdateStrategy", Expr::str(name)));
    }
    (!update_config.is_empty()).then(|| Expr::map(update_config))
}

/// `NodeRepairConfig`: each threshold as a count or a percentage, and the
/// overrides in blueprint order.
fn node_repair_config(repair: &NodeRepair) -> Expr {
    let mut entries = vec![("Enabled", Expr::Bool(repair.enabled))];
    let amounts = [
        (
            repair.max_parallel,
            "MaxParallelNodesRepairedCount",
            "MaxParallelNodesRepairedPercentage",
        ),
        (
            repair.max_unhealthy,
            "MaxUnhealthyNodeThresholdCount",
            "MaxUnhealthyNodeThresholdPercentage",
        ),
    ];
    for (amount, count, percentage) in amounts {
        match amount {
            Some(Amount::Count(n)) => entries.push((count, Expr::from(n))),
            Some(Amount::Percentage(n)) => entries.push((percentage, Expr::from(n))),
            None => {}
        }
    }
    if !repair.overrides.is_empty() {
        let overrides = repair.overrides.iter().map(|o| {
            let action = match o.action {
                RepairAction::Replace => "Replace",
                RepairAction::Reboot => "Reboot",
                RepairAction::NoAction => "NoAction",
            };
            Expr::map([
                ("MinRepairWaitTimeMins", Expr::from(o.min_wait_minutes)),
                ("NodeMonitoringCondition", Expr::str(&o.condition)),
                ("NodeUnhealthyReason", Expr::str(&o.reason)),
                ("RepairAction", Expr::str(action)),
            ])
        });
        entries.push(("NodeRepairConfigOverrides", Expr::list(overrides)));
    }
    Expr::map(entries)
}
