//! The stages of a node group's resolution, one function for each thing
//! it checks across sections (kind of group, image family, instances,
//! sizes, subnets, storage, rolling update, IAM, networking, bootstrap,
//! managed settings, labels, tags), called in order by `resolve_group`.

use super::ami;
use super::families::{check_bootstrap_limits, check_signal_client};
use super::group_fields::{GROUP_FIELDS, MAX_AUTO_SCALING_TYPES, MAX_NODEGROUP_TYPES};
use super::kubelet::KUBELET_FIELDS;
use super::node_config::check_node_config;
use super::node_group::GroupSpec;
use super::storage::{check_instance_store, check_root_volume, check_volumes};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Kind, declares};
use crate::blueprint::instances::{default_on_demand_strategy, instance_info};
use crate::blueprint::max_pods;
use crate::blueprint::*;
use crate::source::Span;
use crate::upstream::kubelet_config;

/// Kind of group: a field that only a managed group understands is an
/// error on a self-managed one, and the other way round, so that a field
/// written in the wrong list is not silently ignored.
pub(super) fn check_kind_of_group(d: &mut Decoder, spec: &GroupSpec, is_managed: bool) {
    let (wrong, kind, other) = if is_managed {
        (Kind::SelfManaged, "managed node groups", "`nodeGroups`")
    } else {
        (
            Kind::Managed,
            "self-managed node groups",
            "`managedNodeGroups`",
        )
    };
    let only_other = |name: &str| {
        GROUP_FIELDS
            .iter()
            .any(|field| field.name == name && field.kind == wrong)
    };
    for (field, at) in spec.written.iter().filter(|(field, _)| only_other(field)) {
        let message = format!("`{field}` does not apply to {kind}");
        d.error(*at, message).help = Some(format!("it belongs to groups in {other}"));
    }
    // A managed group's `lifecycle` holds only its warm pool: the rest
    // configures an Auto Scaling group that EKS runs.
    if is_managed {
        for (field, at) in &spec.lifecycle_self_managed {
            let message = format!("`lifecycle.{field}` does not apply to {kind}");
            d.error(*at, message).help =
                Some("a managed group's `lifecycle` takes only `warmPool`".into());
        }
    }
}

/// Image family: the AMI family and the Kubernetes version of the nodes,
/// which must not be too far from the cluster's, and no AL2 image past
/// the last Kubernetes version it was built for.
pub(super) fn resolve_image_family(
    d: &mut Decoder,
    spec: &GroupSpec,
    cluster: &Cluster,
    name: &Located<String>,
) -> (AmiFamily, KubernetesVersion) {
    let ami_family = ami::resolve_family(d, &spec.ami_family, &spec.ami);
    let version = check_version_skew(d, spec, cluster);
    if ami_family == AmiFamily::AmazonLinux2
        && version
            >= (KubernetesVersion {
                major: 1,
                minor: 33,
            })
    {
        let at = spec.ami_family.as_ref().map_or(name.span, |f| f.span);
        let message = format!("`AmazonLinux2` has no EKS-optimized AMI for Kubernetes {version}");
        d.error(at, message).help =
            Some("AL2 images end with Kubernetes 1.32; use `amiFamily: AmazonLinux2023`".into());
    }
    // Canonical builds each release's EKS images from a Kubernetes version
    // on, which eksctl enforces the same way (`validateVersionForUbuntu` in
    // eksctl's `pkg/ami/ssm_resolver.go`).
    if let AmiFamily::Ubuntu(release) = ami_family
        && version < release.oldest_kubernetes()
    {
        let at = spec.ami_family.as_ref().map_or(name.span, |f| f.span);
        let message = format!(
            "`{}` has no EKS image for Kubernetes {version}",
            ami_family.name()
        );
        d.error(at, message).help = Some(format!(
            "Canonical's Ubuntu {} EKS images start with Kubernetes {}",
            release.number(),
            release.oldest_kubernetes()
        ));
    }
    (ami_family, version)
}

/// Instances, by name: `instanceType` or `instanceTypes`, never both and
/// never next to `instanceRequirements`, and no more than the group's kind
/// takes: 40 overrides for an Auto Scaling group, 20 types for EKS.
pub(super) fn resolve_instance_types(
    d: &mut Decoder,
    spec: &GroupSpec,
    name: &Located<String>,
    is_managed: bool,
) -> Vec<Located<String>> {
    let requirements = spec.instance_requirements.as_ref();
    let instance_types: Vec<Located<String>> = match (&spec.instance_type, &spec.instance_types) {
        (Some(single), None) if requirements.is_none() => vec![single.clone()],
        (None, Some(list)) if requirements.is_none() && !list.value.is_empty() => {
            list.value.iter().map(|t| t.name.clone()).collect()
        }
        (None, Some(list)) if requirements.is_none() => {
            d.error(list.span, "`instanceTypes` is empty").help =
                Some("list at least one instance type".into());
            Vec::new()
        }
        (Some(single), Some(_)) => {
            let message = "both `instanceType` and `instanceTypes` are set";
            d.error(single.span, message).help =
                Some("use `instanceType` for one type or `instanceTypes` for several".into());
            Vec::new()
        }
        (Some(_), None) | (None, Some(_)) => {
            let at = spec.instance_type.as_ref().map_or_else(
                || spec.instance_types.as_ref().map_or(name.span, |t| t.span),
                |t| t.span,
            );
            d.error(
                at,
                "`instanceRequirements` is set, and instance types are named too",
            )
            .help = Some(
                "choose the types by their attributes (`instanceRequirements`) or by name, not both".into(),
            );
            Vec::new()
        }
        (None, None) if requirements.is_some() => Vec::new(),
        (None, None)
            if spec
                .reported
                .iter()
                .any(|f| f.starts_with("instanceType") || *f == "instanceRequirements") =>
        {
            Vec::new()
        }
        (None, None) => {
            d.error(
                name.span,
                format!("node group `{}` has no instance type", name.value),
            )
            .help = Some("add `instanceType: m6i.large` (or set it in `defaults`), or `instanceRequirements`".into());
            Vec::new()
        }
    };
    let (max, takes) = if is_managed {
        (
            MAX_NODEGROUP_TYPES,
            "EKS takes at most 20 instance types for a managed node group",
        )
    } else {
        (
            MAX_AUTO_SCALING_TYPES,
            "an Auto Scaling group's mixed instances policy takes at most 40 instance types",
        )
    };
    if let Some(extra) = instance_types.get(max) {
        d.error(extra.span, format!("more than {max} instance types"))
            .help = Some(takes.into());
    }
    instance_types
}

/// Instances, by what they are: every named type is a known EC2 type, and
/// one group keeps to one architecture and one kind of accelerator, since
/// it boots one image.
pub(super) fn resolve_hardware(
    d: &mut Decoder,
    instance_types: &[Located<String>],
    requirements: Option<&Located<InstanceRequirements>>,
) -> (Arch, Accelerator) {
    let mut arch = None;
    let mut accelerator = Accelerator::None;
    for instance_type in instance_types {
        let Some(info) = instance_info(&instance_type.value) else {
            let message = format!("`{}` is not an EC2 instance type", instance_type.value);
            let diagnostic = d.error(instance_type.span, message);
            diagnostic.help = Some("instance types look like `m6i.large` or `m7g.2xlarge`".into());
            continue;
        };
        if accelerator == Accelerator::None {
            accelerator = info.accelerator;
        } else if info.accelerator != Accelerator::None && info.accelerator != accelerator {
            d.error(
                instance_type.span,
                "one group cannot mix NVIDIA and Neuron instance types",
            )
            .help =
                Some("each accelerator needs its own AMI; put them in separate node groups".into());
        }
        match arch {
            None => arch = Some((info.arch, instance_type.value.clone())),
            Some((first, ref first_name)) if first != info.arch => {
                let message = format!(
                    "`{}` is {} but `{first_name}` is {}; one group cannot mix architectures",
                    instance_type.value,
                    arch_name(info.arch),
                    arch_name(first)
                );
                d.error(instance_type.span, message).help =
                    Some("put each architecture in its own node group".into());
            }
            Some(_) => {}
        }
    }
    let arch = match requirements {
        Some(requirements) => requirements.value.arch,
        None => arch.map_or(Arch::X86_64, |(arch, _)| arch),
    };
    (arch, accelerator)
}

/// Sizes: `maxSize` is required, `minSize` defaults to 1, and the
/// desired capacity, when written, lies between them.
pub(super) fn resolve_sizes(
    d: &mut Decoder,
    spec: &GroupSpec,
    name: &Located<String>,
) -> (u32, u32) {
    let min_size = spec.min_size.as_ref().map_or(1, |v| v.value);
    let max_size = match &spec.max_size {
        Some(v) => v.value,
        None if spec.reported.contains(&"maxSize") => min_size.max(1),
        None => {
            d.error(
                name.span,
                format!("node group `{}` has no `maxSize`", name.value),
            )
            .help = Some("add `maxSize` (and `minSize`, 1 by default)".into());
            min_size.max(1)
        }
    };
    if let (Some(min), Some(max)) = (&spec.min_size, &spec.max_size) {
        if min.value > max.value {
            let message = format!(
                "`minSize` ({}) is greater than `maxSize` ({})",
                min.value, max.value
            );
            d.error(min.span, message).help = Some(format!(
                "lower `minSize` or raise `maxSize` (line {})",
                max.span.line
            ));
        }
    } else if let (None, Some(max)) = (&spec.min_size, &spec.max_size)
        && max.value < min_size
    {
        d.error(
            max.span,
            "`maxSize` is lower than the default `minSize` of 1",
        );
    }
    if let Some(desired) = &spec.desired_capacity
        && (desired.value < min_size || desired.value > max_size)
    {
        let message = format!(
            "`desiredCapacity` ({}) is outside [minSize, maxSize] = [{min_size}, {max_size}]",
            desired.value
        );
        d.error(desired.span, message).help =
            Some("or leave `desiredCapacity` out so that the cluster autoscaler owns it".into());
    }
    (min_size, max_size)
}

/// Subnets are required; an empty list stands in when they are missing
/// so that the other stages still run and report.
pub(super) fn resolve_subnets(
    d: &mut Decoder,
    spec: &GroupSpec,
    name: &Located<String>,
) -> Located<Subnets> {
    match spec.subnets.clone() {
        Some(subnets) => subnets,
        None if spec.reported.contains(&"subnets") => {
            Located::new(Subnets::List(Vec::new()), name.span)
        }
        None => {
            d.error(name.span, format!("node group `{}` has no `subnets`", name.value)).help =
                Some("add `subnets: [subnet-...]`, `subnets: {parameter: Subnets}`, or set them in `defaults`".into());
            Located::new(Subnets::List(Vec::new()), name.span)
        }
    }
}

/// Storage: the root volume, the extra volumes and the instance store,
/// each checked against what the image family can format and mount.
pub(super) fn resolve_storage(
    d: &mut Decoder,
    spec: &GroupSpec,
    ami_family: AmiFamily,
    name: &Located<String>,
) -> (Volume, Vec<DataVolume>) {
    let custom_image = spec
        .ami
        .as_ref()
        .is_some_and(|ami| ami.value != Ami::Recommended);
    let root_volume = check_root_volume(d, &spec.root_volume, ami_family, custom_image, name.span);
    let volumes = spec
        .volumes
        .as_ref()
        .map(|v| check_volumes(d, &v.value, ami_family))
        .unwrap_or_default();
    if let Some(store) = &spec.instance_store {
        check_instance_store(d, store, ami_family, spec.bootstrap_arguments.as_ref());
    }
    (root_volume, volumes)
}

/// The rolling update CloudFormation performs: it keeps fewer instances
/// in service than `maxSize`, so that replacements have room to launch,
/// and replaces no more than `maxSize` at once.
pub(super) fn resolve_rolling_update(
    d: &mut Decoder,
    spec: &GroupSpec,
    min_size: u32,
    max_size: u32,
    weights: &[u32],
) -> (String, RollingUpdate) {
    let signal_timeout = spec
        .signal_timeout
        .as_ref()
        .map_or("PT15M".to_string(), |t| t.value.clone());
    // With weights, sizes count capacity units; the rolling update counts
    // instances, of which there are at least the units over the largest
    // weight.
    let initial = instance_count(
        spec.desired_capacity.as_ref().map_or(min_size, |v| v.value),
        weights,
    );
    let min_in_service = match &spec.update.min_instances_in_service {
        Some(value) => {
            if value.value >= max_size {
                let message = format!(
                    "`updatePolicy.minInstancesInService` ({}) must be lower than `maxSize` ({max_size})",
                    value.value
                );
                d.error(value.span, message).help = Some(
                    "CloudFormation needs room above it to launch replacement instances".into(),
                );
            }
            value.value
        }
        None => initial.min(max_size.saturating_sub(1)),
    };
    if let Some(batch) = &spec.update.max_batch_size
        && batch.value > max_size
    {
        let message = format!(
            "`updatePolicy.maxBatchSize` ({}) is greater than `maxSize` ({max_size})",
            batch.value
        );
        d.error(batch.span, message);
    }
    let update = RollingUpdate {
        max_batch_size: spec.update.max_batch_size.as_ref().map_or(1, |v| v.value),
        min_instances_in_service: min_in_service,
        pause_time: spec
            .update
            .pause_time
            .as_ref()
            .map_or_else(|| signal_timeout.clone(), |p| p.value.clone()),
        pause_time_span: spec.update.pause_time.as_ref().map(|p| p.span),
    };
    (signal_timeout, update)
}

/// IAM: an existing role, named with its instance profile, or the role
/// the stack creates; the flags that shape a created role's policies
/// have no effect on an existing one.
pub(super) fn resolve_iam(
    d: &mut Decoder,
    spec: &GroupSpec,
    is_managed: bool,
) -> Option<ExistingIdentity> {
    let existing = match (&spec.iam.role_name, &spec.iam.instance_profile_arn) {
        (Some(role), profile) => Some(ExistingIdentity {
            role_name: role.value.clone(),
            // An existing role's own path, never the blueprint-wide
            // `iam.rolePath` of the roles the stack creates.
            path: spec
                .iam
                .role_path
                .as_ref()
                .map_or_else(|| "/".to_string(), |p| p.value.clone()),
            instance_profile_arn: profile.clone(),
        }),
        (None, Some(profile)) => {
            d.error(profile.span, "`iam.instanceProfileArn` needs `iam.roleName` too").help =
                Some("name the profile's role so that the stack can grant it the permission to signal CloudFormation".into());
            None
        }
        (None, None) => None,
    };
    if existing.is_some() {
        for (flag, field) in [
            (&spec.iam.cni_uses_irsa, "cniUsesIrsa"),
            (&spec.iam.ssm_managed_instance, "ssmManagedInstance"),
        ] {
            if let Some(flag) = flag {
                d.error(
                    flag.span,
                    format!("`iam.{field}` has no effect on an existing role"),
                )
                .help = Some(
                    "the managed policies of an existing role are managed where the role is".into(),
                );
            }
        }
    }
    super::iam::check_created_role(d, &spec.iam, existing.is_some(), is_managed);
    existing
}

/// The instance metadata service: tokens required and a hop limit of 1
/// unless the blueprint says otherwise.
pub(super) fn resolve_imds(d: &mut Decoder, spec: &GroupSpec, is_managed: bool) -> Imds {
    Imds {
        tokens_required: spec.imds.tokens_required.as_ref().is_none_or(|t| t.value),
        hop_limit: spec.imds.hop_limit.as_ref().map_or(1, |h| h.value),
        ipv6: spec.imds.ipv6.as_ref().is_some_and(|b| b.value),
        block_pods: spec.imds.block_pods.as_ref().is_some_and(|b| b.value),
        instance_tags: super::networking::check_instance_tags(
            d,
            &spec.imds.instance_tags,
            &spec.tags,
            is_managed,
        ),
        tokens_span: spec.imds.tokens_required.as_ref().map(|t| t.span),
        hop_limit_span: spec.imds.hop_limit.as_ref().map(|h| h.span),
    }
}

/// `maxPods` stays within what the instance types' network interfaces
/// can address, with prefix delegation when the cluster turns it on.
pub(super) fn check_max_pods(
    d: &mut Decoder,
    spec: &GroupSpec,
    cluster: &Cluster,
    instance_types: &[Located<String>],
) {
    if let Some(max_pods) = &spec.max_pods {
        max_pods::check(d, max_pods, instance_types, cluster.prefix_delegation);
    }
}

/// Bootstrap: FIPS, the limits of the image's bootstrap, the node
/// configuration, the signal client and the escape hatches, which all
/// depend on the image family the nodes boot.
pub(super) fn check_bootstrap(
    d: &mut Decoder,
    spec: &GroupSpec,
    ami_family: AmiFamily,
    family_at: Span,
    accelerator: Accelerator,
    version: KubernetesVersion,
    is_managed: bool,
) -> (bool, Option<serde_json::Value>) {
    let fips = ami::check_fips(d, &spec.fips, &spec.ami, ami_family, accelerator, version);
    if is_managed
        && ami_family.is_ubuntu()
        && !spec.ami.as_ref().is_some_and(|a| a.value.is_custom())
    {
        d.error(
            family_at,
            format!("a managed node group cannot run `{}`", ami_family.name()),
        )
        .help = Some(
            "EKS has no Ubuntu AMI type; move the group under `nodeGroups` (self-managed), or pin Canonical's image as a custom `ami`".into(),
        );
    }
    check_bootstrap_limits(d, spec, ami_family, family_at, is_managed);
    let node_config = check_node_config(d, spec, ami_family, is_managed);
    check_signal_client(d, spec, ami_family);
    spec.hatches.check(d, ami_family, is_managed);
    if ami_family == AmiFamily::Bottlerocket {
        spec.hatches
            .check_kubelet_settings(d, &kubelet_bottlerocket_keys(spec));
    }
    (fips, node_config)
}

/// What only a managed group has (its AMI type, name and update
/// settings).
pub(super) fn resolve_managed(
    d: &mut Decoder,
    spec: &GroupSpec,
    name: &Located<String>,
    capacity_type: CapacityType,
    is_managed: bool,
) -> Option<Managed> {
    if is_managed {
        ami::check_ami_type(d, &spec.ami_type, &spec.ami, &spec.fips);
        if let Some(profile) = &spec.iam.instance_profile_arn {
            d.error(
                profile.span,
                "managed node groups make their own instance profile",
            )
            .help = Some("give `iam.roleName` only".into());
        }
        Some(Managed {
            nodegroup_name: spec.nodegroup_name.clone().unwrap_or_else(|| name.clone()),
            capacity_type,
            max_unavailable: spec.max_unavailable.as_ref().map(|m| m.value),
            update_strategy: spec.update_strategy.as_ref().map(|s| s.value),
            node_repair: spec.node_repair.as_ref().map(|r| r.value.clone()),
            force_update_enabled: spec.force_update_enabled.as_ref().is_some_and(|f| f.value),
            release_version: spec.release_version.as_ref().map(|r| r.value.clone()),
            ami_type: spec.ami_type.as_ref().map(|a| a.value.clone()),
            launch_template: super::existing_launch_template::check_existing_launch_template(
                d,
                &spec.launch_template,
                &spec.written,
                &spec.ami,
                is_managed,
            ),
        })
    } else {
        None
    }
}

/// The node labels, with `node-lifecycle: spot` added to a group that runs
/// on spot only, unless the blueprint labels it itself.
pub(super) fn resolve_labels(
    spec: &GroupSpec,
    distribution: Option<&InstancesDistribution>,
) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> = spec
        .labels
        .iter()
        .map(|(k, v)| (k.value.clone(), v.value.clone()))
        .collect();
    let all_spot = distribution
        .as_ref()
        .is_some_and(|d| d.on_demand_base_capacity == 0 && d.on_demand_percentage_above_base == 0);
    if all_spot && !labels.iter().any(|(k, _)| k == "node-lifecycle") {
        labels.push(("node-lifecycle".to_string(), "spot".to_string()));
    }
    labels
}

/// Tags: the written tags and the ones the compiler adds stay within the
/// counts AWS accepts, a self-managed group's tags do not collide with
/// the generated ones, and the tags of a role the stack creates are ones
/// IAM takes.
pub(super) fn check_tags(
    d: &mut Decoder,
    spec: &GroupSpec,
    cluster: &Cluster,
    name: &Located<String>,
    labels: &[(String, String)],
    autoscaler: bool,
    is_managed: bool,
) {
    let generated = tags::Generated {
        cluster_name: &cluster.name.value,
        autoscaler,
        labels,
        taints: spec.taints.as_ref().map_or(&[], |t| t.value.as_slice()),
    };
    tags::check_count(d, name, &spec.tags, &generated);
    if !is_managed {
        tags::check_self_managed(d, &spec.tags, &generated);
    }
    // The group's tags reach the role the stack creates for it.
    if spec.iam.role_name.is_none() {
        let role = format!("the node role the stack creates for group `{}`", name.value);
        tags::check_iam_text(d, &spec.tags, &role);
        tags::check_role_count(d, name, &spec.tags, &spec.iam.role_tags);
    }
}

/// `perAz` makes one group per subnet, so it needs the subnets listed.
pub(super) fn check_per_az(d: &mut Decoder, spec: &GroupSpec, subnets: &Located<Subnets>) {
    if let Some(per_az) = &spec.per_az
        && per_az.value
        && !matches!(subnets.value, Subnets::List(_))
    {
        d.error(per_az.span, "`perAz` needs `subnets` written as a list").help =
            Some("one group is made per listed subnet; a parameter or import does not say how many there are".into());
    }
}

/// The spot and on-demand mix of a self-managed group, when it has one:
/// it is written, or the group is a spot group.
pub(super) fn resolve_distribution(
    d: &mut Decoder,
    spec: &GroupSpec,
    spot: bool,
) -> Option<InstancesDistribution> {
    let written = spec.distribution.as_ref().map(|d| d.value.clone());
    if written.is_none() && !spot {
        return None;
    }
    let written = written.unwrap_or_default();
    let by_attributes = spec.instance_requirements.is_some();
    if let Some(strategy) = &written.on_demand_allocation_strategy
        && by_attributes
        && strategy.value == "prioritized"
    {
        d.error(
            strategy.span,
            "`prioritized` needs instance types in an order, and `instanceRequirements` gives none",
        )
        .help = Some("use `lowest-price`, the default with `instanceRequirements`".into());
    }
    let spot_strategy = written
        .spot_allocation_strategy
        .as_ref()
        .map_or("price-capacity-optimized", |s| s.value.as_str());
    if let Some(pools) = &written.spot_instance_pools
        && spot_strategy != "lowest-price"
    {
        let message = format!(
            "`spotInstancePools` applies to the `lowest-price` spot strategy, not `{spot_strategy}`"
        );
        d.error(pools.span, message).help = Some(
            "set `spotAllocationStrategy: lowest-price`, or remove `spotInstancePools`".into(),
        );
    }
    let percentage = written
        .on_demand_percentage_above_base
        .unwrap_or(if spot { 0 } else { 100 });
    Some(InstancesDistribution {
        on_demand_base_capacity: written.on_demand_base_capacity.unwrap_or(0),
        on_demand_percentage_above_base: percentage,
        on_demand_allocation_strategy: written.on_demand_allocation_strategy.map_or_else(
            || default_on_demand_strategy(by_attributes).to_string(),
            |s| s.value,
        ),
        spot_allocation_strategy: spot_strategy.to_string(),
        spot_instance_pools: written.spot_instance_pools.map(|p| p.value),
        spot_max_price: written.spot_max_price,
        capacity_rebalance: written.capacity_rebalance.unwrap_or(percentage < 100),
    })
}

/// A group on a capacity block launches into one reservation with one
/// instance type. A managed group's is in the launch template, where EKS
/// takes it from
/// (<https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html>);
/// a self-managed group launches from a launch template that names the
/// reservation and the instance type
/// (<https://docs.aws.amazon.com/autoscaling/ec2/userguide/launch-template-capacity-blocks.html>),
/// with no mixed instances policy to choose among types or markets.
/// Returns the reservation of a capacity-block group.
pub(super) fn resolve_capacity_block(
    d: &mut Decoder,
    spec: &GroupSpec,
    instance_types: &[Located<String>],
    is_managed: bool,
) -> Option<String> {
    let capacity_block = spec
        .capacity_type
        .as_ref()
        .filter(|c| c.value == CapacityType::CapacityBlock);
    match (capacity_block, &spec.capacity_reservation_id) {
        (Some(capacity), None) => {
            if !spec.reported.contains(&"capacityReservationId") {
                d.error(capacity.span, "`CAPACITY_BLOCK` needs `capacityReservationId`")
                    .help = Some(
                    "add the capacity block's reservation ID, e.g. `capacityReservationId: cr-0123456789abcdef0`"
                        .into(),
                );
            }
            None
        }
        (Some(_), Some(id)) => {
            if !is_managed {
                check_self_managed_block(d, spec);
            }
            if instance_types.len() > 1 {
                d.error(
                    instance_types[1].span,
                    "a capacity block group has exactly one instance type",
                )
                .help = Some(
                    "a capacity block reserves one instance type; use `instanceType` with it"
                        .into(),
                );
            }
            Some(id.value.clone())
        }
        (None, Some(id)) => {
            d.error(
                id.span,
                "`capacityReservationId` is only for `capacityType: CAPACITY_BLOCK`",
            )
            .help = Some("set `capacityType: CAPACITY_BLOCK`, or remove it".into());
            None
        }
        (None, None) => None,
    }
}

/// A self-managed capacity block group launches its one instance type from
/// its launch template: a mixed instances policy (a spot mix, weights, or
/// types chosen by attributes) has no capacity-block market to launch
/// into.
fn check_self_managed_block(d: &mut Decoder, spec: &GroupSpec) {
    let help = "a capacity block reserves one instance type, launched from the launch template; name it with `instanceType`";
    if let Some(distribution) = &spec.distribution {
        d.error(
            distribution.span,
            "`instancesDistribution` is set for a capacity block group",
        )
        .help = Some(format!("{help}, and remove `instancesDistribution`"));
    }
    if let Some(requirements) = &spec.instance_requirements {
        d.error(
            requirements.span,
            "`instanceRequirements` is set for a capacity block group",
        )
        .help = Some(help.into());
    }
    let weight = spec
        .instance_types
        .iter()
        .flat_map(|t| &t.value)
        .find_map(|t| t.weight.as_ref());
    if let Some(weight) = weight {
        d.error(
            weight.span,
            "a capacity block group takes no instance type weight",
        )
        .help = Some(help.into());
    }
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64",
        Arch::Arm64 => "arm64",
    }
}

/// The `[settings.kubernetes]` keys a Bottlerocket group's `kubelet`
/// fields beyond the typed ones become, each with the field it comes from
/// (the typed ones are in the hatches' own reserved list).
fn kubelet_bottlerocket_keys(spec: &GroupSpec) -> Vec<(String, String)> {
    spec.kubelet
        .iter()
        .filter(|(key, _)| !declares(KUBELET_FIELDS, key.value.as_str()))
        .filter_map(|(key, value)| {
            let settings = kubelet_config::bottlerocket_settings(&key.value, value).ok()?;
            Some(
                settings
                    .into_iter()
                    .map(|(setting, _)| (setting.key().to_string(), setting.field.clone()))
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect()
}

/// A managed group's Auto Scaling group is EKS's, tagged for the cluster
/// autoscaler by EKS itself, so only its priority is the blueprint's; and
/// a priority means nothing for a group the autoscaler does not discover.
pub(super) fn check_autoscaler(d: &mut Decoder, spec: &GroupSpec, is_managed: bool) {
    if let Some(enabled) = &spec.cluster_autoscaler {
        if is_managed {
            d.error(
                enabled.span,
                "`clusterAutoscaler.enabled` does not apply to managed node groups",
            )
            .help = Some(
                "EKS tags a managed group's Auto Scaling group for the cluster autoscaler itself; only `clusterAutoscaler.priority` applies".into(),
            );
        } else if !enabled.value
            && let Some(priority) = &spec.autoscaler_priority
        {
            d.error(
                priority.span,
                "`clusterAutoscaler.priority` is set for a group the cluster autoscaler does not discover",
            )
            .help = Some("remove the priority, or enable the autoscaler's tags".into());
        }
    }
}

/// The group's Kubernetes version: its own `kubernetesVersion` (a staged
/// upgrade), which may lag the cluster's by the skew kubelets are allowed
/// and never be newer, or the cluster's.
fn check_version_skew(d: &mut Decoder, spec: &GroupSpec, cluster: &Cluster) -> KubernetesVersion {
    let control_plane = cluster.kubernetes_version.value;
    let Some(version) = &spec.kubernetes_version else {
        return control_plane;
    };
    let group = version.value;
    if group > control_plane {
        d.error(
            version.span,
            format!("`kubernetesVersion` {group} is newer than the cluster's {control_plane}"),
        )
        .help = Some(
            "a kubelet must not be newer than the API server: upgrade `cluster.kubernetesVersion` first".into(),
        );
        return control_plane;
    }
    if group.major != control_plane.major || control_plane.minor - group.minor > KUBELET_SKEW {
        d.error(
            version.span,
            format!(
                "`kubernetesVersion` {group} lags the cluster's {control_plane} by more than {KUBELET_SKEW} minor versions"
            ),
        )
        .help = Some(format!(
            "Kubernetes' version-skew policy lets a kubelet be at most {KUBELET_SKEW} minor versions older than the API server; upgrade the group first"
        ));
    }
    group
}

/// The most minor versions a kubelet may lag the API server: the
/// Kubernetes version-skew policy (<https://kubernetes.io/releases/version-skew-policy/>,
/// "kubelet": "must not be newer than kube-apiserver, and may be up to three
/// minor versions older").
const KUBELET_SKEW: u32 = 3;
