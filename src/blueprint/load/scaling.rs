//! How a group's instances are mixed and replaced: the self-managed
//! `updatePolicy`, `instancesDistribution` and `lifecycle`, and the managed
//! `updateConfig`.

use super::asg_settings::{
    DELETION_PROTECTIONS, HEALTH_CHECK_TYPES, MAX_HOOKS, TERMINATION_POLICIES, ZONE_DISTRIBUTIONS,
    decode_settings,
};
use super::instances::{
    ON_DEMAND_ALLOCATION_STRATEGIES, check_placement_group_name, decode_capacity_reservation,
};
use super::read::{Opt, duration, opt_bool, opt_string, opt_u32};
use super::warm_pool::decode_warm_pool;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Kind, Text, Ty, choices};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const DISTRIBUTION_FIELDS: &[Field] = &[
    Field::new("onDemandBaseCapacity", Ty::integer(0, 10_000), "Instances"),
    Field::new(
        "onDemandPercentageAboveBaseCapacity",
        Ty::integer(0, 100),
        "Percent",
    ),
    Field::new(
        "spotAllocationStrategy",
        Ty::OneOf(|| SPOT_ALLOCATION_STRATEGIES.to_vec()),
        "",
    )
    .long("how EC2 Auto Scaling picks spot capacity"),
    Field::new("capacityRebalance", Ty::Boolean, "Capacity rebalancing"),
    Field::new(
        "onDemandAllocationStrategy",
        Ty::OneOf(|| ON_DEMAND_ALLOCATION_STRATEGIES.to_vec()),
        "prioritized (the order of instanceTypes; the default) or lowest-price \
        (the default with instanceRequirements)",
    ),
    Field::new(
        "spotInstancePools",
        Ty::integer(1, 20),
        "Spot pools the lowest-price strategy spreads over",
    ),
    Field::new(
        "spotMaxPrice",
        Ty::Text(Text {
            pattern: Some("^[0-9]+(\\.[0-9]{1,5})?$"),
            min_length: None,
            max_length: None,
            numbers: true,
        }),
        "The most an hour of spot may cost, in US dollars (default: the on-demand \
        price)",
    ),
];
pub(in crate::blueprint) const LIFECYCLE_FIELDS: &[Field] = &[
    Field::new("terminationHookTimeout", Ty::integer(30, 7200), "Seconds").self_managed(),
    Field::new(
        "warmPool",
        Ty::Object("warmPool"),
        "A warm pool of prepared instances",
    )
    .long(
        "Instances launched ahead of need and kept `Stopped`, `Running` or \
        `Hibernated` until the group scales out; `Hibernated` configures \
        hibernation in the launch template (the encrypted root volume must hold \
        the instance's memory). Managed: the node group's `WarmPoolConfig`, \
        which EKS runs (EKS AMIs only; not `Hibernated` nor `reuseOnScaleIn` on \
        Bottlerocket). Self-managed (AL2023 and AL2): an \
        `AWS::AutoScaling::WarmPool`; a warmed instance prepares (pre-bootstrap \
        commands) but joins and signals only once in service. Changing it \
        updates the pool in place and rolls no node, except a switch to or from \
        `Hibernated` and, on a self-managed group, adding or removing it (the \
        launch template changes); a rolling update does not replace the pool's \
        instances (see [Upgrades](../guide/upgrades.md)).",
    ),
    Field::new(
        "maxInstanceLifetime",
        Ty::integer(86_400, 31_536_000),
        "Seconds",
    )
    .self_managed(),
    Field::new("metricsCollection", Ty::Boolean, "Group metrics").self_managed(),
    Field::new("healthCheckGracePeriod", Ty::integer(0, 7200), "Seconds").self_managed(),
    Field::new(
        "terminationPolicies",
        Ty::List {
            item: &Ty::Either(&[
                Ty::OneOf(|| TERMINATION_POLICIES.to_vec()),
                Ty::pattern("^arn:.+:lambda:.+:function:", Some(1600)),
            ]),
            min: Some(1),
            max: None,
        },
        "Which instances Auto Scaling terminates first when it scales in, in \
        order",
    )
    .default("`Default`")
    .long(
        "`TerminationPolicies`, tried in order: `Default`, `AllocationStrategy`, \
        `OldestLaunchTemplate`, `ClosestToNextInstanceHour`, `NewestInstance`, \
        `OldestInstance`, or a Lambda function's ARN (a custom policy; the \
        partition, region and account may be pseudo parameters), each once",
    )
    .self_managed(),
    Field::new(
        "defaultInstanceWarmup",
        Ty::Integer { min: 0, max: None },
        "Seconds",
    )
    .long(
        "`DefaultInstanceWarmup`: seconds after an instance goes `InService` \
        before its metrics count for scaling and an instance refresh moves on. \
        Removing the field leaves the group's warmup as it was (Auto Scaling \
        clears it only when told `-1`); write `0` rather than removing it",
    )
    .self_managed(),
    Field::new(
        "healthCheckType",
        Ty::OneOrMany(&Ty::OneOf(|| HEALTH_CHECK_TYPES.to_vec())),
        "Health checks besides EC2's own that make Auto Scaling replace an \
        instance",
    )
    .default("`EC2`")
    .long(
        "`HealthCheckType`: one of `EC2`, `ELB`, `EBS`, `VPC_LATTICE`, or a list \
        of them, each once (EC2's own check is always on). `ELB` needs \
        `targetGroupArns` or `classicLoadBalancerNames`; `VPC_LATTICE` asks the \
        VPC Lattice target groups attached to the group outside eksynth \
        (`TrafficSources` in `overrides`). Applies with \
        `healthCheckGracePeriod`",
    )
    .self_managed(),
    Field::new(
        "protectFromScaleIn",
        Ty::Boolean,
        "New instances are protected from scale-in",
    )
    .long(
        "`NewInstancesProtectedFromScaleIn`: Auto Scaling does not choose these \
        instances when it scales in (a lower desired capacity), from the time \
        they are `InService`; which nodes go is then up to whoever lowers \
        the protection of an instance or terminates it. Applies to instances \
        launched after the change",
    )
    .self_managed(),
    Field::new(
        "instanceMaintenancePolicy",
        Ty::Object("instanceMaintenancePolicy"),
        "How much of the group stays healthy while Auto Scaling replaces \
        instances",
    )
    .long(
        "`InstanceMaintenancePolicy`: `{minHealthyPercentage, \
        maxHealthyPercentage}`, both (0 to 100 and 100 to 200, at most 100 \
        apart), for instance refreshes and health-check replacements; \
        CloudFormation's own rolling update follows `updatePolicy`. Removing it \
        leaves the policy as it was",
    )
    .self_managed(),
    Field::new(
        "availabilityZoneDistribution",
        Ty::OneOf(|| ZONE_DISTRIBUTIONS.to_vec()),
        "",
    )
    .default("`balanced-best-effort`")
    .long(
        "`AvailabilityZoneDistribution.CapacityDistributionStrategy`: \
        `balanced-best-effort` launches in another zone when one fails, \
        `balanced-only` keeps trying the failing zone to stay balanced",
    )
    .self_managed(),
    Field::new(
        "deletionProtection",
        Ty::OneOf(|| DELETION_PROTECTIONS.to_vec()),
        "",
    )
    .default("`none`")
    .long(
        "`DeletionProtection`: `prevent-force-deletion` refuses a delete that \
        would terminate the group's instances with it, `prevent-all-deletion` \
        refuses any delete: deleting the stack or the group, or a change that \
        replaces the group (`autoScalingGroupName`), then fails until a deploy \
        of its own lowers the protection",
    )
    .self_managed(),
    Field::new(
        "hooks",
        Ty::List {
            item: &Ty::Object("lifecycleHook"),
            min: Some(1),
            max: Some(MAX_HOOKS),
        },
        "Lifecycle hooks, made with the group",
    )
    .long(
        "`LifecycleHookSpecificationList`: launch and termination hooks, each \
        `{name, lifecycleTransition, heartbeatTimeout, defaultResult, \
        notificationTargetArn, roleArn}`, made with the group so that they hold \
        its first instances too; at most 50, names unique. A launch hook holds \
        each new instance in `Pending:Wait`: its `heartbeatTimeout` must end by \
        the node's deadline (see [The signal](../guide/signal.md)), else \
        CloudFormation could move on before the instance is in service. A \
        termination hook here replaces `terminationHookTimeout` (not both)",
    )
    .self_managed(),
    Field::new(
        "placementGroup",
        Ty::STRING,
        "The older spelling of the group's `placementGroup`",
    )
    .self_managed(),
    Field::new(
        "capacityReservation",
        Ty::STRING,
        "The older spelling of the group's `capacityReservation`",
    )
    .self_managed(),
];
pub(in crate::blueprint) const UPDATE_CONFIG_FIELDS: &[Field] = &[
    Field::new("maxUnavailable", Ty::integer(1, 100), "Nodes or percent"),
    Field::new(
        "maxUnavailablePercentage",
        Ty::integer(1, 100),
        "Nodes or percent",
    ),
    Field::new(
        "updateStrategy",
        Ty::OneOf(|| choices(UPDATE_STRATEGIES)),
        "",
    )
    .long(
        "`DEFAULT` (new nodes first) or `MINIMAL` (old nodes terminated first, \
        for scarce capacity such as GPUs)",
    ),
];
/// `updateConfig.updateStrategy`, as `AWS::EKS::Nodegroup` spells it.
pub(in crate::blueprint) const UPDATE_STRATEGIES: &[(&str, UpdateStrategy)] = &[
    ("DEFAULT", UpdateStrategy::Default),
    ("MINIMAL", UpdateStrategy::Minimal),
];

pub(in crate::blueprint) const UPDATE_FIELDS: &[Field] = &[
    Field::new(
        "maxBatchSize",
        Ty::integer(1, 10_000),
        "Instances per batch",
    ),
    Field::new(
        "minInstancesInService",
        Ty::integer(0, 10_000),
        "Instances kept in service",
    ),
    Field::new("pauseTime", Ty::Duration, "Pause between batches"),
];
pub(in crate::blueprint) const SPOT_ALLOCATION_STRATEGIES: &[&str] = &[
    "price-capacity-optimized",
    "capacity-optimized",
    "capacity-optimized-prioritized",
    "lowest-price",
];
#[derive(Clone, Default)]
pub(super) struct DistributionSpec {
    pub(super) on_demand_base_capacity: Option<u32>,
    pub(super) on_demand_percentage_above_base: Option<u32>,
    pub(super) spot_allocation_strategy: Option<Located<String>>,
    pub(super) capacity_rebalance: Option<bool>,
    pub(super) on_demand_allocation_strategy: Option<Located<String>>,
    pub(super) spot_instance_pools: Option<Located<u32>>,
    pub(super) spot_max_price: Option<String>,
}

#[derive(Clone, Default)]
pub(super) struct UpdateSpec {
    pub(super) max_batch_size: Opt<u32>,
    pub(super) min_instances_in_service: Opt<u32>,
    pub(super) pause_time: Opt<String>,
}

pub(super) fn decode_distribution(d: &mut Decoder, node: &Node) -> Opt<DistributionSpec> {
    let mut f = d.fields("instancesDistribution", node, DISTRIBUTION_FIELDS)?;
    let p = "instancesDistribution.";
    let spec = DistributionSpec {
        on_demand_base_capacity: opt_u32(d, &mut f, p, "onDemandBaseCapacity").map(|v| v.value),
        on_demand_percentage_above_base: opt_u32(
            d,
            &mut f,
            p,
            "onDemandPercentageAboveBaseCapacity",
        )
        .map(|v| v.value),
        spot_allocation_strategy: f
            .get("spotAllocationStrategy")
            .and_then(|n| {
                d.name_choice(
                    "instancesDistribution.spotAllocationStrategy",
                    n,
                    SPOT_ALLOCATION_STRATEGIES,
                )
            })
            .map(|c| Located::new(c.value.to_string(), c.span)),
        capacity_rebalance: opt_bool(d, &mut f, p, "capacityRebalance").map(|v| v.value),
        on_demand_allocation_strategy: f
            .get("onDemandAllocationStrategy")
            .and_then(|n| {
                d.name_choice(
                    "instancesDistribution.onDemandAllocationStrategy",
                    n,
                    ON_DEMAND_ALLOCATION_STRATEGIES,
                )
            })
            .map(|c| Located::new(c.value.to_string(), c.span)),
        spot_instance_pools: opt_u32(d, &mut f, p, "spotInstancePools"),
        spot_max_price: f.get("spotMaxPrice").and_then(|n| spot_max_price(d, n)),
    };
    f.finish(d, "`instancesDistribution`");
    Some(Located::new(spec, node.span))
}

/// `lifecycle`, and the placement group and capacity reservation that may
/// still be written in it (the older spelling of the group fields).
pub(super) fn decode_lifecycle(
    d: &mut Decoder,
    node: &Node,
) -> Option<(Located<Lifecycle>, Opt<String>, Opt<CapacityReservation>)> {
    let mut f = d.fields("lifecycle", node, LIFECYCLE_FIELDS)?;
    let p = "lifecycle.";
    let termination_hook = opt_u32(d, &mut f, p, "terminationHookTimeout").map(|v| v.value);
    let max_instance_lifetime = opt_u32(d, &mut f, p, "maxInstanceLifetime").map(|v| v.value);
    let metrics_collection = opt_bool(d, &mut f, p, "metricsCollection").is_some_and(|v| v.value);
    let health_check_grace_period =
        opt_u32(d, &mut f, p, "healthCheckGracePeriod").map(|v| v.value);
    let settings = decode_settings(d, &mut f);
    let lifecycle = Lifecycle {
        termination_hook,
        max_instance_lifetime,
        metrics_collection,
        health_check_grace_period,
        termination_policies: settings.termination_policies,
        default_instance_warmup: settings.default_instance_warmup,
        health_check_span: settings.health_check_types.as_ref().map(|t| t.span),
        health_check_types: settings
            .health_check_types
            .map(|t| t.value)
            .unwrap_or_default(),
        protect_from_scale_in: settings.protect_from_scale_in,
        instance_maintenance: settings.instance_maintenance,
        availability_zone_distribution: settings.availability_zone_distribution,
        deletion_protection: settings.deletion_protection,
        hooks: settings.hooks,
        warm_pool: f.get("warmPool").and_then(|n| decode_warm_pool(d, n)),
    };
    let placement_group = opt_string(d, &mut f, p, "placementGroup")
        .filter(|name| check_placement_group_name(d, name));
    let capacity_reservation = f
        .get("capacityReservation")
        .and_then(|n| decode_capacity_reservation(d, "lifecycle.capacityReservation", n));
    f.finish(d, "`lifecycle`");
    Some((
        Located::new(lifecycle, node.span),
        placement_group,
        capacity_reservation,
    ))
}

/// The keys of `lifecycle` only a self-managed group understands, with
/// where they are written, for the check of the kind of group.
pub(super) fn self_managed_lifecycle_keys(node: &Node) -> Vec<(&'static str, Span)> {
    let Value::Map(entries) = &node.value else {
        return Vec::new();
    };
    LIFECYCLE_FIELDS
        .iter()
        .filter(|field| field.kind == Kind::SelfManaged)
        .filter_map(|field| {
            entries
                .iter()
                .find(|(key, _)| key.name == field.name)
                .map(|(key, _)| (field.name, key.span))
        })
        .collect()
}

/// `spotMaxPrice`: US dollars an hour, as EC2 writes prices (`"0.35"`,
/// up to 5 decimals); a number written without quotes is taken as written.
fn spot_max_price(d: &mut Decoder, node: &Node) -> Option<String> {
    let field = "instancesDistribution.spotMaxPrice";
    let text = d.string_or_number(field, node)?;
    let valid = match text.value.split_once('.') {
        Some((whole, fraction)) => {
            !whole.is_empty()
                && whole.chars().all(|c| c.is_ascii_digit())
                && (1..=5).contains(&fraction.len())
                && fraction.chars().all(|c| c.is_ascii_digit())
        }
        None => !text.value.is_empty() && text.value.chars().all(|c| c.is_ascii_digit()),
    };
    let positive = text.value.chars().any(|c| matches!(c, '1'..='9'));
    if !valid || !positive {
        let message = format!("`{field}` `{}` is not a price", text.value);
        d.error(text.span, message).help = Some(
            "write US dollars an hour above zero with at most 5 decimals, e.g. `\"0.35\"`; leave it out to cap spot at the on-demand price".into(),
        );
        return None;
    }
    // At most 255 characters, as `SpotMaxPrice` allows.
    (text.value.len() <= 255).then_some(text.value)
}

/// `updateConfig`: how many nodes a version update may take down at once,
/// and its strategy.
pub(super) fn decode_update_config(
    d: &mut Decoder,
    node: &Node,
) -> (Opt<Amount>, Opt<UpdateStrategy>) {
    let Some(mut f) = d.fields("updateConfig", node, UPDATE_CONFIG_FIELDS) else {
        return (None, None);
    };
    let strategy = f
        .get("updateStrategy")
        .and_then(|n| d.choice("updateConfig.updateStrategy", n, UPDATE_STRATEGIES));
    let count = opt_u32(d, &mut f, "updateConfig.", "maxUnavailable");
    let percentage = opt_u32(d, &mut f, "updateConfig.", "maxUnavailablePercentage");
    f.finish(d, "`updateConfig`");
    let max_unavailable = match (count, percentage) {
        (Some(count), None) => Some(Located::new(Amount::Count(count.value), count.span)),
        (None, Some(pct)) => Some(Located::new(Amount::Percentage(pct.value), pct.span)),
        (Some(count), Some(_)) => {
            d.error(
                count.span,
                "`updateConfig` sets both `maxUnavailable` and `maxUnavailablePercentage`",
            )
            .help = Some("keep one of them".into());
            None
        }
        (None, None) => None,
    };
    (max_unavailable, strategy)
}

pub(super) fn decode_update(d: &mut Decoder, node: &Node) -> UpdateSpec {
    let Some(mut f) = d.fields("updatePolicy", node, UPDATE_FIELDS) else {
        return UpdateSpec::default();
    };
    let spec = UpdateSpec {
        max_batch_size: opt_u32(d, &mut f, "updatePolicy.", "maxBatchSize"),
        min_instances_in_service: opt_u32(d, &mut f, "updatePolicy.", "minInstancesInService"),
        pause_time: f
            .get("pauseTime")
            .and_then(|n| duration(d, "updatePolicy.pauseTime", n, 0, 3_600)),
    };
    f.finish(d, "`updatePolicy`");
    spec
}
