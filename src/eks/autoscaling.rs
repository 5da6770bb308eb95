//! The Auto Scaling group of a self-managed node group, with a creation
//! policy and a rolling update that wait for real signals from the nodes.

use super::inputs;
use crate::blueprint::instances::default_on_demand_strategy;
use crate::blueprint::tags::{NAME, user_name};

use crate::blueprint::{
    InstanceRequirements, Lifecycle, Located, NodeGroup, PoolState, Range, Source,
};
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

/// Everything the Auto Scaling group needs besides the group itself.
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

/// The logical ID of a self-managed group's Auto Scaling group.
pub fn logical_id(group: &NodeGroup) -> String {
    format!("{}NodeGroup", group.logical_id)
}

/// Adds the group's Auto Scaling group, and its termination hook, and
/// returns the group's logical ID.
pub fn lower(template: &mut Template, group: &NodeGroup, context: &Context<'_>) -> String {
    let id = logical_id(group);
    let resource = sizes(Resource::new("AWS::AutoScaling::AutoScalingGroup"), group);
    let resource = instance_source(resource, group, context.launch_template);
    let lifecycle = &group.lifecycle;
    let mut resource = resource
        .prop_opt(
            "HealthCheckGracePeriod",
            lifecycle.health_check_grace_period.map(Expr::from),
        )
        .prop_opt(
            "MaxInstanceLifetime",
            lifecycle.max_instance_lifetime.map(Expr::from),
        )
        .prop_opt(
            "MetricsCollection",
            lifecycle
                .metrics_collection
                .then(|| Expr::list([Expr::map([("Granularity", Expr::str("1Minute"))])])),
        )
        .prop(
            "VPCZoneIdentifier",
            inputs::subnets(template, &group.subnets.value),
        )
        .prop_opt(
            "TargetGroupARNs",
            load_balancers(
                template,
                &group.target_group_arns,
                "The ARN of a target group the nodes are registered with",
            ),
        )
        .prop_opt(
            "LoadBalancerNames",
            load_balancers(
                template,
                &group.classic_load_balancer_names,
                "The name of a Classic Load Balancer the nodes are registered with",
            ),
        )
        .prop("Tags", tags(group, context));
    resource = settings(resource, lifecycle);
    resource.creation_policy = creation_policy(group);
    resource.update_policy = Some(update_policy(group));
    template.resources.insert(id.clone(), resource);
    lower_lifecycle(template, group, &id);
    lower_warm_pool(template, group, &id);
    id
}

/// The load balancers the group registers its instances with, in the
/// blueprint's order: a literal may name pseudo parameters (`Fn::Sub`), a
/// parameter is declared, an import is `Fn::ImportValue`. `None` for none.
fn load_balancers(
    template: &mut Template,
    sources: &[Located<Source>],
    description: &str,
) -> Option<Expr> {
    (!sources.is_empty()).then(|| {
        Expr::List(
            sources
                .iter()
                .map(|source| match &source.value {
                    Source::Literal(text) => Expr::sub_or_str(text.as_str()),
                    other => inputs::value(template, other, inputs::Kind::String, description),
                })
                .collect(),
        )
    })
}

/// The group's `lifecycle` settings beyond its first ones, and the
/// lifecycle hooks made with it.
fn settings(resource: Resource, lifecycle: &Lifecycle) -> Resource {
    let hooks = lifecycle.hooks.iter().map(|hook| {
        let mut entries = vec![
            ("DefaultResult", Expr::str(hook.default_result)),
            ("HeartbeatTimeout", Expr::from(hook.heartbeat_timeout)),
            ("LifecycleHookName", Expr::str(&hook.name)),
            ("LifecycleTransition", Expr::str(hook.transition)),
        ];
        if let (Some(target), Some(role)) = (&hook.notification_target_arn, &hook.role_arn) {
            entries.push(("NotificationTargetARN", Expr::sub_or_str(target)));
            entries.push(("RoleARN", Expr::sub_or_str(role)));
        }
        Expr::map(entries)
    });
    resource
        .prop_opt(
            "TerminationPolicies",
            (!lifecycle.termination_policies.is_empty()).then(|| {
                Expr::list(
                    lifecycle
                        .termination_policies
                        .iter()
                        .map(|p| Expr::sub_or_str(p)),
                )
            }),
        )
        .prop_opt(
            "DefaultInstanceWarmup",
            lifecycle.default_instance_warmup.map(Expr::from),
        )
        .prop_opt(
            "HealthCheckType",
            (!lifecycle.health_check_types.is_empty())
                .then(|| Expr::str(lifecycle.health_check_types.join(","))),
        )
        .prop_opt(
            "NewInstancesProtectedFromScaleIn",
            lifecycle.protect_from_scale_in.map(Expr::Bool),
        )
        .prop_opt(
            "InstanceMaintenancePolicy",
            lifecycle.instance_maintenance.map(|(min, max)| {
                Expr::map([
                    ("MaxHealthyPercentage", Expr::from(max)),
                    ("MinHealthyPercentage", Expr::from(min)),
                ])
            }),
        )
        .prop_opt(
            "AvailabilityZoneDistribution",
            lifecycle
                .availability_zone_distribution
                .map(|strategy| Expr::map([("CapacityDistributionStrategy", Expr::str(strategy))])),
        )
        .prop_opt(
            "DeletionProtection",
            lifecycle.deletion_protection.map(Expr::str),
        )
        .prop_opt(
            "LifecycleHookSpecificationList",
            (!lifecycle.hooks.is_empty()).then(|| Expr::list(hooks)),
        )
}

/// The group's name, when the blueprint gives one, and its sizes.
fn sizes(resource: Resource, group: &NodeGroup) -> Resource {
    resource
        .prop_opt(
            "AutoScalingGroupName",
            group
                .auto_scaling_group_name
                .as_ref()
                .map(|n| Expr::str(&n.value)),
        )
        .prop("MinSize", Expr::str(group.min_size.to_string()))
        .prop("MaxSize", Expr::str(group.max_size.to_string()))
        .prop_opt(
            "DesiredCapacity",
            group.desired_capacity.map(|d| Expr::str(d.to_string())),
        )
}

/// Where the instances come from: the launch template alone for one
/// instance type, or a mixed instances policy (with capacity rebalancing
/// when asked for) for several types, weights or a spot mix.
fn instance_source(resource: Resource, group: &NodeGroup, launch_template: &str) -> Resource {
    let specification = Expr::map([
        ("LaunchTemplateId", Expr::reference(launch_template)),
        (
            "Version",
            Expr::get_att(launch_template, "LatestVersionNumber"),
        ),
    ]);
    let mixed = group.distribution.is_some()
        || group.instance_types.len() != 1
        || !group.weights.is_empty();
    if !mixed {
        return resource.prop("LaunchTemplate", specification);
    }
    resource
        .prop_opt(
            "CapacityRebalance",
            group
                .distribution
                .as_ref()
                .filter(|d| d.capacity_rebalance)
                .map(|_| Expr::Bool(true)),
        )
        .prop(
            "MixedInstancesPolicy",
            Expr::map([
                ("InstancesDistribution", instances_distribution(group)),
                (
                    "LaunchTemplate",
                    Expr::map([
                        ("LaunchTemplateSpecification", specification),
                        ("Overrides", overrides(group)),
                    ]),
                ),
            ]),
        )
}

/// The mixed instances policy's split between on-demand and spot
/// instances: all on demand unless the blueprint sets a distribution.
fn instances_distribution(group: &NodeGroup) -> Expr {
    let distribution = group.distribution.as_ref();
    let on_demand_strategy = distribution.map_or_else(
        || default_on_demand_strategy(group.instance_requirements.is_some()),
        |d| d.on_demand_allocation_strategy.as_str(),
    );
    let mut instances = vec![
        ("OnDemandAllocationStrategy", Expr::str(on_demand_strategy)),
        (
            "OnDemandBaseCapacity",
            Expr::from(distribution.map_or(0, |d| d.on_demand_base_capacity)),
        ),
        (
            "OnDemandPercentageAboveBaseCapacity",
            Expr::from(distribution.map_or(100, |d| d.on_demand_percentage_above_base)),
        ),
    ];
    if let Some(distribution) = distribution {
        instances.push((
            "SpotAllocationStrategy",
            Expr::str(&distribution.spot_allocation_strategy),
        ));
        if let Some(pools) = distribution.spot_instance_pools {
            instances.push(("SpotInstancePools", Expr::from(pools)));
        }
        if let Some(price) = &distribution.spot_max_price {
            instances.push(("SpotMaxPrice", Expr::str(price)));
        }
    }
    Expr::map(instances)
}

/// The group's tags. Instance tags first; the cluster autoscaler's
/// discovery and scale-from-zero tags stay on the group: instances do not
/// need them, and EC2 allows only 50 tags per instance. A user's `Name`
/// tag replaces the generated one, in its place.
fn tags(group: &NodeGroup, context: &Context<'_>) -> Expr {
    let name = user_name(&group.tags).map_or_else(|| context.name_tag.clone(), Expr::str);
    let mut tags = vec![
        tag(Expr::str(NAME), name, true),
        // EC2 refuses to launch an instance whose tags are in its metadata
        // when a tag key holds `/`, so the cluster tag then stays on the
        // group (the loader warns).
        tag(
            context.cluster_tag_key.clone(),
            Expr::str("owned"),
            !group.imds.instance_tags,
        ),
    ];
    tags.extend(
        group
            .tags
            .iter()
            .filter(|(key, _)| key != NAME)
            .map(|(key, value)| tag(Expr::str(key), Expr::str(value), true)),
    );
    if group.cluster_autoscaler {
        tags.extend(autoscaler_tags(group, context));
    }
    Expr::List(tags)
}

/// The cluster autoscaler's discovery tags, and the node-template tags it
/// reads the labels and taints of a group scaled to zero from.
fn autoscaler_tags(group: &NodeGroup, context: &Context<'_>) -> Vec<Expr> {
    let mut tags = vec![
        tag(
            Expr::str("k8s.io/cluster-autoscaler/enabled"),
            Expr::str("true"),
            false,
        ),
        tag(
            context.autoscaler_tag_key.clone(),
            Expr::str("owned"),
            false,
        ),
    ];
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
    tags
}

/// The creation policy that waits for a signal from each initial
/// instance; none when the group starts empty. Weighted sizes count
/// capacity units, and signals come from instances.
fn creation_policy(group: &NodeGroup) -> Option<Expr> {
    let count = group.initial_instances();
    (count > 0).then(|| {
        Expr::map([(
            "ResourceSignal",
            Expr::map([
                ("Count", Expr::from(count)),
                ("Timeout", Expr::str(&group.signal_timeout)),
            ]),
        )])
    })
}

/// The rolling update that replaces instances in batches, waiting for
/// each new one's signal, and keeps the sizes scheduled actions set.
fn update_policy(group: &NodeGroup) -> Expr {
    Expr::map([
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
    ])
}

/// The mixed instances policy's overrides: the instance types, each with
/// its weight (a string in this API), or the attributes that choose them.
fn overrides(group: &NodeGroup) -> Expr {
    if let Some(requirements) = &group.instance_requirements {
        return Expr::list([Expr::map([(
            "InstanceRequirements",
            instance_requirements(requirements),
        )])]);
    }
    Expr::list(group.instance_types.iter().enumerate().map(|(i, t)| {
        let mut entries = vec![("InstanceType", Expr::str(&t.value))];
        if let Some(weight) = group.weights.get(i) {
            entries.push(("WeightedCapacity", Expr::str(weight.to_string())));
        }
        Expr::map(entries)
    }))
}

/// `InstanceRequirements`: it has no architecture; the image's decides
/// which of the matching types the group launches.
fn instance_requirements(requirements: &InstanceRequirements) -> Expr {
    let range = |range: &Range| {
        let mut entries = vec![("Min", Expr::from(range.min))];
        if let Some(max) = range.max {
            entries.push(("Max", Expr::from(max)));
        }
        Expr::map(entries)
    };
    let mut entries = Vec::new();
    if !requirements.excluded_instance_types.is_empty() {
        entries.push((
            "ExcludedInstanceTypes",
            Expr::list(requirements.excluded_instance_types.iter().map(Expr::str)),
        ));
    }
    if !requirements.generations.is_empty() {
        entries.push((
            "InstanceGenerations",
            Expr::list(requirements.generations.iter().map(Expr::str)),
        ));
    }
    entries.push(("MemoryMiB", range(&requirements.memory_mib)));
    entries.push(("VCpuCount", range(&requirements.vcpu)));
    Expr::map(entries)
}

/// The termination hook that belongs to the group.
fn lower_lifecycle(template: &mut Template, group: &NodeGroup, asg: &str) {
    let lifecycle = &group.lifecycle;
    if let Some(timeout) = lifecycle.termination_hook {
        template.resources.insert(
            format!("{}TerminationHook", group.logical_id),
            Resource::new("AWS::AutoScaling::LifecycleHook")
                .prop("AutoScalingGroupName", Expr::reference(asg))
                .prop("DefaultResult", "CONTINUE")
                .prop("HeartbeatTimeout", Expr::from(timeout))
                .prop(
                    "LifecycleTransition",
                    "autoscaling:EC2_INSTANCE_TERMINATING",
                ),
        );
    }
}

/// The logical ID of a self-managed group's warm pool.
pub fn warm_pool_id(group: &NodeGroup) -> String {
    format!("{}WarmPool", group.logical_id)
}

/// The group's warm pool. It names the group, so CloudFormation creates
/// it once the group is complete: the instances it launches come after
/// the creation policy's count, and their user data neither joins nor
/// signals until Auto Scaling puts them in service.
fn lower_warm_pool(template: &mut Template, group: &NodeGroup, asg: &str) {
    let Some(pool) = &group.lifecycle.warm_pool else {
        return;
    };
    let state = match pool.pool_state.value {
        PoolState::Stopped => "Stopped",
        PoolState::Running => "Running",
        PoolState::Hibernated => "Hibernated",
    };
    let resource = Resource::new("AWS::AutoScaling::WarmPool")
        .prop("AutoScalingGroupName", Expr::reference(asg))
        .prop_opt(
            "InstanceReusePolicy",
            pool.reuse_on_scale_in
                .value
                .then(|| Expr::map([("ReuseOnScaleIn", Expr::Bool(true))])),
        )
        .prop_opt(
            "MaxGroupPreparedCapacity",
            pool.max_prepared_capacity.map(Expr::from),
        )
        .prop_opt("MinSize", pool.min_size.map(Expr::from))
        .prop("PoolState", state);
    template.resources.insert(warm_pool_id(group), resource);
}
