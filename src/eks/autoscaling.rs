//! The Auto Scaling group of a self-managed node group, with a creation
//! policy and a rolling update that wait for real signals from the nodes.

use super::inputs;
use crate::blueprint::NodeGroup;
use crate::cfn::{Expr, Resource, Template};

/// Processes suspended during a rolling update, so that health checks,
/// rebalancing and scheduled actions do not replace instances under it.
const SUSPENDED_DURING_UPDATE: &[&str] = &[
    "HealthCheck",
    "ReplaceUnhealthy",
    "AZRebalance",
    "AlarmNotification",
    "ScheduledActions",
];

pub struct Context<'a> {
    pub launch_template: &'a str,
    pub name_tag: &'a Expr,
    pub cluster_tag_key: &'a Expr,
    pub autoscaler_tag_key: &'a Expr,
}

fn tag(key: Expr, value: Expr, propagate: bool) -> Expr {
    Expr::map([
        ("Key", key),
        ("PropagateAtLaunch", Expr::Bool(propagate)),
        ("Value", value),
    ])
}

pub fn logical_id(group: &NodeGroup) -> String {
    format!("{}NodeGroup", group.logical_id)
}

pub fn lower(template: &mut Template, group: &NodeGroup, context: &Context<'_>) -> String {
    let id = logical_id(group);
    let launch_template = Expr::map([
        ("LaunchTemplateId", Expr::reference(context.launch_template)),
        (
            "Version",
            Expr::get_att(context.launch_template, "LatestVersionNumber"),
        ),
    ]);

    // Instance tags first; the cluster autoscaler's discovery and
    // scale-from-zero tags stay on the group: instances do not need them,
    // and EC2 allows only 50 tags per instance.
    let mut tags = vec![
        tag(Expr::str("Name"), context.name_tag.clone(), true),
        tag(context.cluster_tag_key.clone(), Expr::str("owned"), true),
    ];
    tags.extend(
        group
            .tags
            .iter()
            .map(|(key, value)| tag(Expr::str(key), Expr::str(value), true)),
    );
    if group.cluster_autoscaler {
        tags.push(tag(
            Expr::str("k8s.io/cluster-autoscaler/enabled"),
            Expr::str("true"),
            false,
        ));
        tags.push(tag(
            context.autoscaler_tag_key.clone(),
            Expr::str("owned"),
            false,
        ));
        for (key, value) in &group.labels {
            tags.push(tag(
                Expr::str(format!(
                    "k8s.io/cluster-autoscaler/node-template/label/{key}"
                )),
                Expr::str(value),
                false,
            ));
        }
        for taint in &group.taints {
            let value = format!(
                "{}:{}",
                taint.value.as_deref().unwrap_or(""),
                taint.effect.kubernetes_name()
            );
            tags.push(tag(
                Expr::str(format!(
                    "k8s.io/cluster-autoscaler/node-template/taint/{}",
                    taint.key
                )),
                Expr::str(value),
                false,
            ));
        }
    }

    let mut resource = Resource::new("AWS::AutoScaling::AutoScalingGroup")
        .prop("MinSize", Expr::str(group.min_size.to_string()))
        .prop("MaxSize", Expr::str(group.max_size.to_string()))
        .prop_opt(
            "DesiredCapacity",
            group.desired_capacity.map(|d| Expr::str(d.to_string())),
        );
    resource = if group.instance_types.len() == 1 {
        resource.prop("LaunchTemplate", launch_template)
    } else {
        let overrides = group
            .instance_types
            .iter()
            .map(|t| Expr::map([("InstanceType", Expr::str(&t.value))]));
        resource.prop(
            "MixedInstancesPolicy",
            Expr::map([
                (
                    "InstancesDistribution",
                    Expr::map([
                        ("OnDemandAllocationStrategy", Expr::str("prioritized")),
                        ("OnDemandBaseCapacity", Expr::Int(0)),
                        ("OnDemandPercentageAboveBaseCapacity", Expr::Int(100)),
                    ]),
                ),
                (
                    "LaunchTemplate",
                    Expr::map([
                        ("LaunchTemplateSpecification", launch_template),
                        ("Overrides", Expr::list(overrides)),
                    ]),
                ),
            ]),
        )
    };
    let mut resource = resource
        .prop(
            "VPCZoneIdentifier",
            inputs::subnets(template, &group.subnets.value),
        )
        .prop("Tags", Expr::List(tags));

    let count = group.initial_capacity();
    if count > 0 {
        resource.creation_policy = Some(Expr::map([(
            "ResourceSignal",
            Expr::map([
                ("Count", Expr::from(count)),
                ("Timeout", Expr::str(&group.signal_timeout)),
            ]),
        )]));
    }
    resource.update_policy = Some(Expr::map([
        (
            "AutoScalingRollingUpdate",
            Expr::map([
                ("MaxBatchSize", Expr::from(group.update.max_batch_size)),
                (
                    "MinInstancesInService",
                    Expr::from(group.update.min_instances_in_service),
                ),
                ("PauseTime", Expr::str(&group.update.pause_time)),
                (
                    "SuspendProcesses",
                    Expr::list(SUSPENDED_DURING_UPDATE.iter().map(|p| Expr::str(*p))),
                ),
                ("WaitOnResourceSignals", Expr::Bool(true)),
            ]),
        ),
        (
            "AutoScalingScheduledAction",
            Expr::map([("IgnoreUnmodifiedGroupSizeProperties", Expr::Bool(true))]),
        ),
    ]));
    template.resources.insert(id.clone(), resource);
    id
}
