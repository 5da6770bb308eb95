//! The nested sections of a node group: `subnets`, `labels`, `taints`,
//! `imds`, `efsMounts`, `iam`, `updatePolicy`,
//! `instancesDistribution`, `lifecycle` and `updateConfig`.

use super::iam;
use super::instances::{
    ON_DEMAND_ALLOCATION_STRATEGIES, check_placement_group_name, decode_capacity_reservation,
};
use super::sources::decode_source;
use super::{Opt, duration, first_column, missing, opt_bool, opt_string, opt_u32};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::rules;
use crate::blueprint::*;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const DISTRIBUTION_FIELDS: &[&str] = &[
    "onDemandBaseCapacity",
    "onDemandPercentageAboveBaseCapacity",
    "spotAllocationStrategy",
    "capacityRebalance",
    "onDemandAllocationStrategy",
    "spotInstancePools",
    "spotMaxPrice",
];
pub(in crate::blueprint) const LIFECYCLE_FIELDS: &[&str] = &[
    "terminationHookTimeout",
    "warmPool",
    "maxInstanceLifetime",
    "metricsCollection",
    "healthCheckGracePeriod",
    "placementGroup",
    "capacityReservation",
];
pub(in crate::blueprint) const UPDATE_CONFIG_FIELDS: &[&str] = &[
    "maxUnavailable",
    "maxUnavailablePercentage",
    "updateStrategy",
];
/// `updateConfig.updateStrategy`, as `AWS::EKS::Nodegroup` spells it.
pub(in crate::blueprint) const UPDATE_STRATEGIES: &[(&str, UpdateStrategy)] = &[
    ("DEFAULT", UpdateStrategy::Default),
    ("MINIMAL", UpdateStrategy::Minimal),
];

pub(in crate::blueprint) const IMDS_FIELDS: &[&str] =
    &["httpTokens", "hopLimit", "blockPods", "instanceTags"];
pub(in crate::blueprint) const IAM_FIELDS: &[&str] = &[
    "cniUsesIrsa",
    "ssmManagedInstance",
    "extraManagedPolicies",
    "roleName",
    "instanceProfileArn",
    "createdRoleName",
    "rolePath",
    "instanceProfilePath",
    "permissionsBoundary",
    "policyStatements",
];
pub(in crate::blueprint) const UPDATE_FIELDS: &[&str] =
    &["maxBatchSize", "minInstancesInService", "pauseTime"];
pub(in crate::blueprint) const TAINT_FIELDS: &[&str] = &["key", "value", "effect"];
pub(in crate::blueprint) const EFS_FIELDS: &[&str] = &["fileSystemId", "mountPoint"];

pub(in crate::blueprint) const SPOT_ALLOCATION_STRATEGIES: &[&str] = &[
    "price-capacity-optimized",
    "capacity-optimized",
    "capacity-optimized-prioritized",
    "lowest-price",
];
/// Taint effects in Kubernetes' spelling and in the EKS API's.
pub(in crate::blueprint) const TAINT_EFFECTS: &[(&str, TaintEffect)] = &[
    ("NoSchedule", TaintEffect::NoSchedule),
    ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
    ("NoExecute", TaintEffect::NoExecute),
    ("NO_SCHEDULE", TaintEffect::NoSchedule),
    ("PREFER_NO_SCHEDULE", TaintEffect::PreferNoSchedule),
    ("NO_EXECUTE", TaintEffect::NoExecute),
];

/// `imds.httpTokens`: whether tokens are required.
pub(in crate::blueprint) const HTTP_TOKENS: &[(&str, bool)] =
    &[("required", true), ("optional", false)];

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
pub(super) struct ImdsSpec {
    pub(super) tokens_required: Opt<bool>,
    pub(super) hop_limit: Opt<u32>,
    pub(super) block_pods: Opt<bool>,
    pub(super) instance_tags: Opt<bool>,
}

#[derive(Clone, Default)]
pub(super) struct IamSpec {
    pub(super) cni_uses_irsa: Opt<bool>,
    pub(super) ssm_managed_instance: Opt<bool>,
    pub(super) extra_managed_policies: Opt<Vec<String>>,
    pub(super) role_name: Opt<String>,
    pub(super) instance_profile_arn: Opt<Source>,
    pub(super) created_role_name: Opt<String>,
    pub(super) role_path: Opt<String>,
    pub(super) instance_profile_path: Opt<String>,
    /// The boundary's ARN text (a policy name already made an ARN).
    pub(super) permissions_boundary: Opt<Source>,
    pub(super) policy_statements: Opt<Vec<serde_json::Value>>,
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
        on_demand_base_capacity: opt_u32(d, &mut f, p, "onDemandBaseCapacity", 0, 10_000)
            .map(|v| v.value),
        on_demand_percentage_above_base: opt_u32(
            d,
            &mut f,
            p,
            "onDemandPercentageAboveBaseCapacity",
            0,
            100,
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
        spot_instance_pools: opt_u32(d, &mut f, p, "spotInstancePools", 1, 20),
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
    if f.get("warmPool").is_some()
        && let Some(at) = f.key_span("warmPool")
    {
        d.error(
            at,
            "`lifecycle.warmPool` is refused: a warmed instance would join the cluster",
        )
        .help = Some(
            "the user data joins the cluster and signals CloudFormation at first boot, before the instance is InService; an instance launched into a warm pool would register as a Kubernetes node, take pods, and then be stopped. Remove `warmPool`".into(),
        );
    }
    let lifecycle = Lifecycle {
        termination_hook: opt_u32(d, &mut f, p, "terminationHookTimeout", 30, 7_200)
            .map(|v| v.value),
        max_instance_lifetime: opt_u32(d, &mut f, p, "maxInstanceLifetime", 86_400, 31_536_000)
            .map(|v| v.value),
        metrics_collection: opt_bool(d, &mut f, p, "metricsCollection").is_some_and(|v| v.value),
        health_check_grace_period: opt_u32(d, &mut f, p, "healthCheckGracePeriod", 0, 7_200)
            .map(|v| v.value),
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
    let count = opt_u32(d, &mut f, "updateConfig.", "maxUnavailable", 1, 100);
    let percentage = opt_u32(
        d,
        &mut f,
        "updateConfig.",
        "maxUnavailablePercentage",
        1,
        100,
    );
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

pub(super) fn decode_subnets(d: &mut Decoder, node: &Node) -> Opt<Subnets> {
    match &node.value {
        Value::Seq(_) => {
            let items = d.string_list("subnets", node)?;
            if items.is_empty() {
                d.error(node.span, "`subnets` is empty").help =
                    Some("list at least one subnet ID".into());
                return None;
            }
            for item in &items {
                if !item.value.starts_with("subnet-") {
                    d.error(item.span, format!("`{}` is not a subnet ID", item.value))
                        .help = Some("subnet IDs look like `subnet-0123456789abcdef0`".into());
                }
            }
            Some(Located::new(
                Subnets::List(items.into_iter().map(|s| s.value).collect()),
                node.span,
            ))
        }
        Value::Map(_) => {
            let source = decode_source(d, "subnets", node)?;
            match source.value {
                Source::Parameter { name, default } => Some(Located::new(
                    Subnets::Parameter { name, default },
                    source.span,
                )),
                Source::Import(name) => Some(Located::new(Subnets::Import(name), source.span)),
                Source::Literal(_) => None,
            }
        }
        _ => {
            d.wrong_type(
                "subnets",
                node,
                "a list of subnet IDs, `{parameter: Name}` or `{import: ExportName}`",
            );
            None
        }
    }
}

/// Extra security groups: each an ID, `{parameter: Name}` (an
/// `AWS::EC2::SecurityGroup::Id` parameter) or `{import: ExportName}` (an
/// export holding one ID).
pub(super) fn decode_security_groups(d: &mut Decoder, node: &Node) -> Opt<Vec<Located<Source>>> {
    decode_security_group_list(d, "securityGroups", node)
}

/// A list of security groups, each an ID or a value source.
pub(super) fn decode_security_group_list(
    d: &mut Decoder,
    field: &str,
    node: &Node,
) -> Opt<Vec<Located<Source>>> {
    let Value::Seq(items) = &node.value else {
        d.wrong_type(
            field,
            node,
            "a list of security group IDs, `{parameter: Name}` or `{import: ExportName}`",
        );
        return None;
    };
    let mut groups = Vec::new();
    for item in items {
        let source = match &item.value {
            Value::Map(_) => decode_source(d, field, item),
            _ => d
                .string(field, item)
                .map(|s| Located::new(Source::Literal(s.value), s.span)),
        };
        let Some(source) = source else { continue };
        if let Source::Literal(id) = &source.value
            && !crate::blueprint::rules::is_ec2_id("sg", id)
        {
            d.error(source.span, format!("`{id}` is not a security group ID"))
                .help = Some(
                "security group IDs look like `sg-0123456789abcdef0`; or write `{parameter: Name}` or `{import: ExportName}`".into(),
            );
            continue;
        }
        groups.push(source);
    }
    Some(Located::new(groups, node.span))
}

pub(super) fn check_label(d: &mut Decoder, key: &Located<String>, value: &Located<String>) {
    if let Some(problem) = rules::label_key_problem(&key.value) {
        let message = format!(
            "label key `{}` is not a valid Kubernetes label key: {problem}",
            key.value
        );
        d.error(key.span, message).help =
            Some("a label key is an optional DNS prefix and a name of up to 63 letters, digits, `-`, `_` or `.`".into());
    } else if let Some(problem) = rules::kubelet_refuses_label(&key.value) {
        let message = format!("label `{}` cannot be set by kubelet", key.value);
        d.error(key.span, message).help = Some(format!(
            "{problem}; use another prefix such as `node.kubernetes.io/` or your own domain"
        ));
    }
    if let Some(problem) = rules::label_value_problem(&value.value) {
        let message = format!(
            "label value `{}` for `{}` is not valid: it {problem}",
            value.value, key.value
        );
        d.error(value.span, message).help =
            Some("a label value has up to 63 letters, digits, `-`, `_` or `.`".into());
    }
}

pub(super) fn decode_taint(d: &mut Decoder, node: &Node) -> Option<Located<Taint>> {
    if let Value::String(text) = &node.value {
        let message = format!("taint `{text}` must be a mapping with `key`, `value` and `effect`");
        d.error(node.span, message).help =
            Some("write `- {key: dedicated, value: gpu, effect: NoSchedule}`".into());
        return None;
    }
    let mut f = d.fields("taints[]", node, TAINT_FIELDS)?;
    let key = match f.get("key") {
        Some(n) => d.string("taints[].key", n),
        None => {
            missing(
                d,
                first_column(node.span),
                "key",
                "taint",
                "the taint's `key`",
            );
            None
        }
    };
    let value = f
        .get("value")
        .and_then(|n| d.string_or_number("taints[].value", n));
    let effect = match f.get("effect") {
        Some(n) => d.choice("taints[].effect", n, TAINT_EFFECTS),
        None => {
            missing(
                d,
                first_column(node.span),
                "effect",
                "taint",
                "`effect: NoSchedule`, `PreferNoSchedule` or `NoExecute`",
            );
            None
        }
    };
    f.finish(d, "a taint");
    let key = key?;
    if let Some(problem) = rules::label_key_problem(&key.value) {
        d.error(
            key.span,
            format!("taint key `{}` is not valid: {problem}", key.value),
        );
        return None;
    }
    if let Some(value) = &value
        && let Some(problem) = rules::label_value_problem(&value.value)
    {
        d.error(
            value.span,
            format!("taint value `{}` is not valid: it {problem}", value.value),
        );
        return None;
    }
    Some(Located::new(
        Taint {
            key: key.value,
            value: value.map(|v| v.value),
            effect: effect?.value,
        },
        node.span,
    ))
}

pub(super) fn decode_imds(d: &mut Decoder, node: &Node) -> ImdsSpec {
    let Some(mut f) = d.fields("imds", node, IMDS_FIELDS) else {
        return ImdsSpec::default();
    };
    let tokens = f
        .get("httpTokens")
        .and_then(|n| d.choice("imds.httpTokens", n, HTTP_TOKENS));
    let hop_limit = f.get("hopLimit").and_then(|n| {
        let value = d.integer("imds.hopLimit", n, 1, 3);
        if value.is_none()
            && let Some(last) = d.diagnostics.last_mut() {
                last.help = Some("1 keeps pods away from node credentials; 2 or 3 only for agents in containers that need IMDS".into());
            }
        value.map(|v| Located::new(v.value as u32, v.span))
    });
    let spec = ImdsSpec {
        tokens_required: tokens,
        hop_limit,
        block_pods: opt_bool(d, &mut f, "imds.", "blockPods"),
        instance_tags: opt_bool(d, &mut f, "imds.", "instanceTags"),
    };
    f.finish(d, "`imds`");
    spec
}

pub(super) fn decode_efs(d: &mut Decoder, node: &Node) -> Option<EfsMount> {
    let mut f = d.fields("efsMounts[]", node, EFS_FIELDS)?;
    let id = f
        .get("fileSystemId")
        .and_then(|n| d.string("efsMounts[].fileSystemId", n));
    let mount_point = f
        .get("mountPoint")
        .and_then(|n| d.string("efsMounts[].mountPoint", n));
    f.finish(d, "an EFS mount");
    if (id.is_none() && f.given("fileSystemId")) || (mount_point.is_none() && f.given("mountPoint"))
    {
        return None;
    }
    let Some(id) = id else {
        missing(
            d,
            first_column(node.span),
            "fileSystemId",
            "EFS mount",
            "the file system ID, e.g. `fileSystemId: fs-0123456789abcdef0`",
        );
        return None;
    };
    let Some(mount_point) = mount_point else {
        missing(
            d,
            first_column(node.span),
            "mountPoint",
            "EFS mount",
            "where to mount it, e.g. `mountPoint: /mnt/efs`",
        );
        return None;
    };
    let id_ok = id
        .value
        .strip_prefix("fs-")
        .is_some_and(|hex| !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()));
    if !id_ok {
        d.error(
            id.span,
            format!("`{}` is not an EFS file system ID", id.value),
        )
        .help = Some("EFS IDs look like `fs-0123456789abcdef0`".into());
        return None;
    }
    let path_ok = mount_point.value.starts_with('/')
        && mount_point.value.len() > 1
        && mount_point
            .value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
    if !path_ok {
        d.error(
            mount_point.span,
            format!(
                "mount point `{}` must be an absolute path",
                mount_point.value
            ),
        )
        .help = Some("use letters, digits, `/`, `-`, `_` and `.`, e.g. `/mnt/efs`".into());
        return None;
    }
    Some(EfsMount {
        file_system_id: id.value,
        mount_point: mount_point.value,
    })
}

pub(super) fn decode_iam(d: &mut Decoder, node: &Node) -> IamSpec {
    let Some(mut f) = d.fields("iam", node, IAM_FIELDS) else {
        return IamSpec::default();
    };
    let spec = IamSpec {
        cni_uses_irsa: opt_bool(d, &mut f, "iam.", "cniUsesIrsa"),
        ssm_managed_instance: opt_bool(d, &mut f, "iam.", "ssmManagedInstance"),
        extra_managed_policies: f
            .get("extraManagedPolicies")
            .and_then(|n| extra_managed_policies(d, n)),
        role_name: opt_string(d, &mut f, "iam.", "roleName"),
        instance_profile_arn: iam::instance_profile_arn(d, &mut f),
        created_role_name: iam::role_name(d, &mut f),
        role_path: iam::path(d, &mut f, "rolePath", "iam.rolePath"),
        instance_profile_path: iam::path(
            d,
            &mut f,
            "instanceProfilePath",
            "iam.instanceProfilePath",
        ),
        permissions_boundary: iam::permissions_boundary(d, &mut f, "iam.permissionsBoundary"),
        policy_statements: f
            .get("policyStatements")
            .and_then(|n| iam::statements(d, n)),
    };
    f.finish(d, "`iam`");
    spec
}

/// `iam.extraManagedPolicies`: policy ARNs, each written with
/// `${AWS::Partition}` (a literal partition is an error at that item, as
/// in every IAM field: the template must deploy in every partition).
fn extra_managed_policies(d: &mut Decoder, node: &Node) -> Opt<Vec<String>> {
    let items = d.string_list("iam.extraManagedPolicies", node)?;
    let mut ok = true;
    for policy in &items {
        if !policy.value.starts_with("arn:") {
            ok = false;
            d.error(policy.span, format!("`{}` is not a policy ARN", policy.value))
                .help = Some(
                "write the full ARN, `arn:${AWS::Partition}:iam::aws:policy/NAME` for an AWS managed policy".into(),
            );
        } else if iam::partition_problem(d, policy, "iam.extraManagedPolicies") {
            ok = false;
        }
    }
    ok.then(|| {
        Located::new(
            items.into_iter().map(|policy| policy.value).collect(),
            node.span,
        )
    })
}

pub(super) fn decode_update(d: &mut Decoder, node: &Node) -> UpdateSpec {
    let Some(mut f) = d.fields("updatePolicy", node, UPDATE_FIELDS) else {
        return UpdateSpec::default();
    };
    let spec = UpdateSpec {
        max_batch_size: opt_u32(d, &mut f, "updatePolicy.", "maxBatchSize", 1, 10_000),
        min_instances_in_service: opt_u32(
            d,
            &mut f,
            "updatePolicy.",
            "minInstancesInService",
            0,
            10_000,
        ),
        pause_time: f
            .get("pauseTime")
            .and_then(|n| duration(d, "updatePolicy.pauseTime", n, 0, 3_600)),
    };
    f.finish(d, "`updatePolicy`");
    spec
}
