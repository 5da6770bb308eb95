//! A node group made whole: defaults applied, the rules that span several
//! fields checked by the stages of `group_stages`, called in order, and
//! `perAz` groups expanded into one group per subnet.

use super::families::check_family;
use super::group_instances::check_instances;
use super::group_stages::*;
use super::node_group::{GroupSpec, check_asg_name, check_group_name, check_nodegroup_name};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::*;
use crate::source::Span;

/// What the stages of [`resolve_group`] found, ready to be put together
/// into a [`NodeGroup`] once they reported no error.
struct Checked {
    ami_family: AmiFamily,
    version: KubernetesVersion,
    arch: Arch,
    accelerator: Accelerator,
    instance_types: Vec<Located<String>>,
    min_size: u32,
    max_size: u32,
    subnets: Located<Subnets>,
    instances: super::group_instances::Resolved,
    placement: Placement,
    root_volume: Volume,
    volumes: Vec<DataVolume>,
    signal_timeout: String,
    update: RollingUpdate,
    existing: Option<ExistingIdentity>,
    launch_options: LaunchOptions,
    associate_public_ip: bool,
    ssh: Option<Ssh>,
    node_security_group: NodeSecurityGroup,
    imds: Imds,
    autoscaler: bool,
    fips: bool,
    node_config: Option<serde_json::Value>,
    managed: Option<Managed>,
    capacity_block: Option<String>,
    distribution: Option<InstancesDistribution>,
    labels: Vec<(String, String)>,
}

/// Applies defaults and checks the rules that span several fields, one
/// stage after the other; the order of the stages is the order in which
/// their findings are reported. A group with an error is not made.
pub(super) fn resolve_group(
    d: &mut Decoder,
    cluster: &Cluster,
    span: Span,
    spec: GroupSpec,
    logical_id: String,
    is_managed: bool,
    top_iam: &super::iam::TopIam,
) -> Option<NodeGroup> {
    let name = spec.name.clone()?;
    let errors_before = d.diagnostics.iter().filter(|x| x.is_error()).count();
    check_kind_of_group(d, &spec, is_managed);
    let (ami_family, version) = resolve_image_family(d, &spec, cluster, &name);
    let requirements = spec.instance_requirements.as_ref();
    let instance_types = resolve_instance_types(d, &spec, &name, is_managed);
    let (arch, accelerator) = resolve_hardware(d, &instance_types, requirements);
    let family_at = spec.ami_family.as_ref().map_or(name.span, |f| f.span);
    check_family(
        d,
        &spec,
        ami_family,
        family_at,
        arch,
        accelerator,
        &instance_types,
    );
    let (min_size, max_size) = resolve_sizes(d, &spec, &name);
    let subnets = resolve_subnets(d, &spec, &name);
    let instances = check_instances(d, &spec, is_managed, ami_family, family_at, &subnets);
    let placement = super::placement::check_placement(
        d,
        &spec.placement,
        instances.placement_group.as_ref(),
        &instance_types,
    );
    let (root_volume, volumes) = resolve_storage(d, &spec, ami_family, &name);
    let (signal_timeout, update) =
        resolve_rolling_update(d, &spec, min_size, max_size, &instances.weights);
    if let Some(lifecycle) = spec.lifecycle.as_ref().filter(|_| !is_managed) {
        let has_load_balancer =
            spec.target_group_arns.is_some() || spec.classic_load_balancer_names.is_some();
        super::asg_settings::check_lifecycle(
            d,
            &lifecycle.value,
            has_load_balancer,
            &signal_timeout,
            &update.pause_time,
        );
    }
    let existing = resolve_iam(d, &spec, is_managed);
    check_autoscaler(d, &spec, is_managed);
    let associate_public_ip =
        super::networking::check_public_ip(d, &spec.associate_public_ip, instances.efa_cards);
    let launch_options = super::launch_options::check_launch_options(
        d,
        &spec.launch_options,
        &instance_types,
        requirements.map(|r| &r.value),
    );
    let ssh = super::networking::check_ssh(d, &spec.ssh, &spec.key_name, ami_family);
    super::networking::check_ip_family(d, cluster, ami_family, family_at);
    check_cluster_dns(d, &spec, cluster, ami_family, is_managed);
    let node_security_group =
        super::networking::check_node_security_group(d, &spec.node_security_group, cluster);
    let imds = resolve_imds(d, &spec, is_managed);
    let autoscaler = spec.cluster_autoscaler.as_ref().is_none_or(|v| v.value);
    check_max_pods(d, &spec, cluster, &instance_types);
    super::kubelet::check_kubelet_together(d, &spec.kubelet, &spec.kubelet_nodes);
    let (fips, node_config) = check_bootstrap(
        d,
        &spec,
        ami_family,
        family_at,
        accelerator,
        version,
        is_managed,
    );
    let capacity_type = spec
        .capacity_type
        .as_ref()
        .map_or(CapacityType::OnDemand, |c| c.value);
    let capacity_block = resolve_capacity_block(d, &spec, &instance_types, is_managed);
    let managed = resolve_managed(d, &spec, &name, capacity_type, is_managed);
    super::warm_pool::check_warm_pool(
        d,
        spec.lifecycle
            .as_ref()
            .and_then(|l| l.value.warm_pool.as_ref()),
        &super::warm_pool::Around {
            ami_family,
            is_managed,
            ami: &spec.ami,
            root_encrypted: &spec.root_volume.settings.encrypted,
            instance_store: &spec.instance_store,
        },
    );
    let distribution = if is_managed {
        None
    } else {
        resolve_distribution(d, &spec, capacity_type == CapacityType::Spot)
    };
    let labels = resolve_labels(&spec, distribution.as_ref());
    check_tags(d, &spec, cluster, &name, &labels, autoscaler, is_managed);
    check_per_az(d, &spec, &subnets);

    let errors_after = d.diagnostics.iter().filter(|x| x.is_error()).count();
    if errors_after > errors_before {
        return None;
    }
    let checked = Checked {
        ami_family,
        version,
        arch,
        accelerator,
        instance_types,
        min_size,
        max_size,
        subnets,
        instances,
        placement,
        root_volume,
        volumes,
        signal_timeout,
        update,
        existing,
        launch_options,
        associate_public_ip,
        ssh,
        node_security_group,
        imds,
        autoscaler,
        fips,
        node_config,
        managed,
        capacity_block,
        distribution,
        labels,
    };
    Some(assemble(spec, checked, span, logical_id, name, top_iam))
}

/// `clusterDNS` against the cluster's IP family and the group's family and
/// kind (`cluster_dns.rs`), given what those rules read of the group.
fn check_cluster_dns(
    d: &mut Decoder,
    spec: &GroupSpec,
    cluster: &Cluster,
    ami_family: AmiFamily,
    is_managed: bool,
) {
    if let Some(addresses) = &spec.cluster_dns {
        let group = super::cluster_dns::GroupDns {
            addresses,
            key_at: spec
                .written
                .iter()
                .find(|(f, _)| *f == "clusterDNS")
                .map(|(_, s)| *s),
            eks_managed_ami: is_managed && !spec.ami.as_ref().is_some_and(|a| a.value.is_custom()),
        };
        super::cluster_dns::check_cluster_dns(d, &group, cluster, ami_family);
    }
}

/// The group itself, made of the spec and what the stages found.
fn assemble(
    spec: GroupSpec,
    checked: Checked,
    span: Span,
    logical_id: String,
    name: Located<String>,
    top_iam: &super::iam::TopIam,
) -> NodeGroup {
    let hatches = spec.hatches.resolve(checked.ami_family);
    // The blueprint's `iam` fills in what the group's own does not say.
    let role_path = spec
        .iam
        .role_path
        .clone()
        .or_else(|| top_iam.role_path.clone());
    NodeGroup {
        stack: 0,
        identity: logical_id.clone(),
        logical_id,
        managed: checked.managed,
        ami_family: checked.ami_family,
        ami: spec.ami.map_or(Ami::Recommended, |a| a.value),
        kubernetes_version: checked.version,
        fips: checked.fips,
        arch: checked.arch,
        accelerator: checked.accelerator,
        distribution: checked.distribution,
        target_group_arns: spec.target_group_arns.map(|t| t.value).unwrap_or_default(),
        classic_load_balancer_names: spec
            .classic_load_balancer_names
            .map(|c| c.value)
            .unwrap_or_default(),
        lifecycle: spec.lifecycle.map(|l| l.value).unwrap_or_default(),
        weights: checked.instances.weights,
        instance_requirements: spec.instance_requirements.map(|r| r.value),
        placement_group: checked.instances.placement_group,
        placement: checked.placement,
        capacity_reservation: checked.instances.capacity_reservation,
        capacity_block: checked.capacity_block,
        efa: checked.instances.efa,
        efa_cards: checked.instances.efa_cards,
        efa_only: checked.instances.efa_only,
        bootstrap_arguments: spec.bootstrap_arguments.map(|b| b.value),
        per_az: spec.per_az.is_some_and(|p| p.value),
        instance_types: checked.instance_types,
        min_size: checked.min_size,
        max_size: checked.max_size,
        desired_capacity: spec.desired_capacity.map(|v| v.value),
        subnets: checked.subnets,
        labels: checked.labels,
        taints: spec
            .taints
            .map(|t| t.value.into_iter().map(|t| t.value).collect())
            .unwrap_or_default(),
        max_pods: spec.max_pods.map(|v| v.value),
        cluster_dns: spec
            .cluster_dns
            .map(|list| list.value.into_iter().map(|a| a.value).collect())
            .unwrap_or_default(),
        kubelet_config: spec
            .kubelet
            .into_iter()
            .map(|(k, v)| (k.value, v))
            .collect(),
        node_config: checked.node_config,
        root_volume: checked.root_volume,
        volumes: checked.volumes,
        instance_store: spec.instance_store.as_ref().map(|s| s.value),
        imds: checked.imds,
        pre_bootstrap_commands: spec
            .pre_bootstrap_commands
            .map(|c| c.value)
            .unwrap_or_default(),
        post_bootstrap_commands: hatches.post_bootstrap_commands,
        user_data_parts: hatches.user_data_parts,
        bottlerocket_settings: hatches.bottlerocket_settings,
        efs_mounts: spec.efs_mounts.map(|m| m.value).unwrap_or_default(),
        tags: spec
            .tags
            .into_iter()
            .map(|(k, v)| (k.value, v.value))
            .collect(),
        iam: Iam {
            cni_uses_irsa: spec.iam.cni_uses_irsa.is_some_and(|v| v.value),
            ssm_managed_instance: spec.iam.ssm_managed_instance.is_some_and(|v| v.value),
            extra_managed_policies: spec
                .iam
                .extra_managed_policies
                .map(|p| p.value)
                .unwrap_or_default(),
            existing: checked.existing,
            role_name: spec.iam.created_role_name,
            instance_profile_path: spec
                .iam
                .instance_profile_path
                .or_else(|| role_path.clone())
                .map_or_else(|| "/".to_string(), |p| p.value),
            role_path: role_path.map_or_else(|| "/".to_string(), |p| p.value),
            permissions_boundary: spec
                .iam
                .permissions_boundary
                .or_else(|| top_iam.permissions_boundary.clone()),
            policy_statements: spec
                .iam
                .policy_statements
                .map(|s| s.value)
                .unwrap_or_default(),
            role_tags: spec
                .iam
                .role_tags
                .into_iter()
                .map(|(k, v)| (k.value, v.value))
                .collect(),
            role_description: spec.iam.role_description.map(|d| d.value),
        },
        security_groups: spec.security_groups.map(|s| s.value).unwrap_or_default(),
        key_name: spec.key_name.map(|k| k.value),
        detailed_monitoring: spec.detailed_monitoring.is_some_and(|v| v.value),
        launch_options: checked.launch_options,
        associate_public_ip: checked.associate_public_ip,
        node_security_group: checked.node_security_group,
        ssh: checked.ssh,
        security_group_rules: spec
            .security_group_rules
            .clone()
            .map(|r| r.value)
            .unwrap_or_default(),
        cluster_autoscaler: checked.autoscaler,
        autoscaler_priority: spec.autoscaler_priority.map(|p| p.value),
        auto_scaling_group_name: spec.auto_scaling_group_name,
        update: checked.update,
        signal_timeout: checked.signal_timeout,
        signal_client: spec
            .signal_client
            .as_ref()
            .map_or(default_signal_client(checked.ami_family), |c| c.value),
        field_spans: spec.written.clone(),
        span,
        name,
    }
}

/// A group with `perAz` becomes one group per subnet, named after the
/// subnet so that adding or removing a subnet leaves the others' names and
/// logical IDs alone.
pub(super) fn expand_per_az(d: &mut Decoder, group: NodeGroup) -> Vec<NodeGroup> {
    let Subnets::List(subnets) = &group.subnets.value else {
        return vec![group];
    };
    if !group.per_az {
        return vec![group];
    }
    let mut out = Vec::new();
    for subnet in subnets {
        let suffix = subnet.trim_start_matches("subnet-");
        let name = Located::new(format!("{}-{suffix}", group.name.value), group.name.span);
        let Some(logical_id) = check_group_name(d, &name) else {
            continue;
        };
        let mut one = group.clone();
        if let Some(managed) = &mut one.managed {
            let base = &managed.nodegroup_name;
            let named = Located::new(format!("{}-{suffix}", base.value), base.span);
            let Some(named) = check_nodegroup_name(d, named) else {
                continue;
            };
            managed.nodegroup_name = named;
        }
        if let Some(base) = &group.auto_scaling_group_name {
            let named = Located::new(format!("{}-{suffix}", base.value), base.span);
            let Some(named) = check_asg_name(d, named) else {
                continue;
            };
            one.auto_scaling_group_name = Some(named);
        }
        one.name = name;
        one.logical_id = logical_id;
        one.subnets = Located::new(Subnets::List(vec![subnet.clone()]), group.subnets.span);
        out.push(one);
    }
    out
}

/// The signal client when the blueprint names none: the image's own
/// `cfn-signal`, except on Canonical's Ubuntu images, which carry none.
fn default_signal_client(family: AmiFamily) -> SignalClient {
    if family.is_ubuntu() {
        SignalClient::Embedded
    } else {
        SignalClient::Image
    }
}
