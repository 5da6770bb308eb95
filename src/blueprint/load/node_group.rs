//! A node group entry (or `defaults`) as written: its fields decoded into a
//! `GroupSpec`, `defaults` merged under it, and the rules for its names.

use super::ami::decode_ami;
use super::group_fields::{
    CAPACITY_TYPES, CLUSTER_AUTOSCALER_FIELDS, GROUP_FIELDS, SIGNAL_CLIENTS,
};
use super::group_sections::{
    ImdsSpec, check_label, decode_efs, decode_imds, decode_subnets, decode_taint,
};
use super::iam::{IamSpec, decode_iam};
use super::instances::{
    TypeSpec, check_placement_group_name, decode_capacity_reservation, decode_efa,
    decode_instance_types, decode_requirements, is_reservation_id,
};
use super::kubelet::{decode_kubelet, kubelet_nodes};
use super::launch_options::{LaunchOptionsSpec, decode_launch_options};
use super::load_balancers::{decode_classic_load_balancers, decode_target_groups};
use super::networking::{NODE_SECURITY_GROUPS, decode_security_groups};
use super::node_repair::decode_node_repair;
use super::placement::{PlacementSpec, decode_placement};
use super::read::{Opt, duration, opt_bool, opt_string, opt_strings, opt_u32};
use super::scaling::{
    DistributionSpec, UpdateSpec, decode_distribution, decode_lifecycle, decode_update,
    decode_update_config, self_managed_lifecycle_keys,
};
use super::storage::{
    DataVolumeSpec, INSTANCE_STORE_POLICIES, RootVolumeSpec, decode_volume, decode_volumes,
};
use crate::blueprint::compose;
use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::hatches::HatchSpec;
use crate::blueprint::limits;
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// Node group settings as written, before defaults are merged in.
#[derive(Clone, Default)]
pub(super) struct GroupSpec {
    pub(super) name: Opt<String>,
    pub(super) ami_family: Opt<AmiFamily>,
    pub(super) ami: Opt<Ami>,
    pub(super) kubernetes_version: Opt<KubernetesVersion>,
    pub(super) fips: Opt<bool>,
    pub(super) instance_type: Opt<String>,
    pub(super) instance_types: Opt<Vec<TypeSpec>>,
    pub(super) instance_requirements: Opt<InstanceRequirements>,
    pub(super) placement_group: Opt<String>,
    pub(super) placement: PlacementSpec,
    pub(super) capacity_reservation: Opt<CapacityReservation>,
    /// The older spellings under `lifecycle`, taken with it.
    pub(super) lifecycle_placement_group: Opt<String>,
    pub(super) lifecycle_capacity_reservation: Opt<CapacityReservation>,
    pub(super) efa: Opt<bool>,
    /// `efa.interfaces: efa-only`.
    pub(super) efa_only: Opt<bool>,
    pub(super) min_size: Opt<u32>,
    pub(super) max_size: Opt<u32>,
    pub(super) desired_capacity: Opt<u32>,
    pub(super) subnets: Opt<Subnets>,
    pub(super) labels: Vec<(Located<String>, Located<String>)>,
    pub(super) taints: Opt<Vec<Located<Taint>>>,
    pub(super) max_pods: Opt<u32>,
    /// `clusterDNS`: the nameservers kubelet gives pods, each where written.
    pub(super) cluster_dns: Opt<Vec<Located<String>>>,
    pub(super) kubelet: Vec<(Located<String>, serde_json::Value)>,
    /// The `kubelet` settings as written, for the rules between them.
    pub(super) kubelet_nodes: Vec<(Located<String>, Node)>,
    /// `nodeConfig` as written, checked once the family is known.
    pub(super) node_config: Option<Node>,
    pub(super) root_volume: RootVolumeSpec,
    pub(super) volumes: Opt<Vec<DataVolumeSpec>>,
    pub(super) instance_store: Opt<InstanceStore>,
    pub(super) imds: ImdsSpec,
    pub(super) pre_bootstrap_commands: Opt<Vec<String>>,
    pub(super) hatches: HatchSpec,
    pub(super) efs_mounts: Opt<Vec<EfsMount>>,
    pub(super) tags: Vec<(Located<String>, Located<String>)>,
    pub(super) iam: IamSpec,
    pub(super) security_groups: Opt<Vec<Located<Source>>>,
    pub(super) key_name: Opt<String>,
    pub(super) detailed_monitoring: Opt<bool>,
    pub(super) launch_options: LaunchOptionsSpec,
    pub(super) associate_public_ip: Opt<bool>,
    pub(super) node_security_group: Opt<NodeSecurityGroup>,
    pub(super) ssh: Opt<super::networking::SshSpec>,
    pub(super) security_group_rules: Opt<Vec<SecurityGroupRule>>,
    pub(super) cluster_autoscaler: Opt<bool>,
    /// `clusterAutoscaler.priority`: the group's priority for the
    /// autoscaler's priority expander.
    pub(super) autoscaler_priority: Opt<u32>,
    pub(super) auto_scaling_group_name: Opt<String>,
    pub(super) update: UpdateSpec,
    pub(super) signal_timeout: Opt<String>,
    pub(super) signal_client: Opt<SignalClient>,
    pub(super) per_az: Opt<bool>,
    pub(super) capacity_type: Opt<CapacityType>,
    pub(super) distribution: Opt<DistributionSpec>,
    pub(super) target_group_arns: Opt<Vec<Located<Source>>>,
    pub(super) classic_load_balancer_names: Opt<Vec<Located<Source>>>,
    pub(super) bootstrap_arguments: Opt<String>,
    pub(super) lifecycle: Opt<Lifecycle>,
    /// The group's own `lifecycle` keys that only a self-managed group
    /// understands, with where they are written.
    pub(super) lifecycle_self_managed: Vec<(&'static str, Span)>,
    pub(super) max_unavailable: Opt<Amount>,
    pub(super) update_strategy: Opt<UpdateStrategy>,
    pub(super) node_repair: Opt<NodeRepair>,
    pub(super) force_update_enabled: Opt<bool>,
    pub(super) release_version: Opt<String>,
    pub(super) ami_type: Opt<String>,
    pub(super) launch_template: Opt<ExistingLaunchTemplate>,
    pub(super) nodegroup_name: Opt<String>,
    pub(super) capacity_reservation_id: Opt<String>,
    /// Every field written, with where: kind-specific fields are checked
    /// once the kind of group is known.
    pub(super) written: Vec<(&'static str, Span)>,
    /// Fields already reported where they are written: given a value that
    /// did not decode, or suggested for a misspelt key. Such a field is not
    /// reported again as missing: one mistake, one error.
    pub(super) reported: Vec<&'static str>,
}

/// Merges two maps written as key/value lists: `over` wins per key, and
/// keys keep their first-written position.
pub(super) fn merge_pairs<V: Clone>(
    base: &[(Located<String>, V)],
    over: &[(Located<String>, V)],
) -> Vec<(Located<String>, V)> {
    let mut merged: Vec<(Located<String>, V)> = base.to_vec();
    for (key, value) in over {
        match merged.iter_mut().find(|(k, _)| k.value == key.value) {
            Some(slot) => *slot = (key.clone(), value.clone()),
            None => merged.push((key.clone(), value.clone())),
        }
    }
    merged
}

impl GroupSpec {
    /// The group's own settings over the blueprint defaults. Scalars and
    /// lists are replaced; maps (labels, tags, kubelet settings) merge key by
    /// key; nested sections merge field by field.
    pub(super) fn over(self, defaults: &GroupSpec) -> GroupSpec {
        let d = defaults.clone();
        let undiscovered = self.cluster_autoscaler.as_ref().is_some_and(|e| !e.value);
        // `instanceType`, `instanceTypes` and `instanceRequirements` are one
        // choice: a group that makes it takes none of them from `defaults`.
        let chooses_types = self.instance_type.is_some()
            || self.instance_types.is_some()
            || self.instance_requirements.is_some();
        let (d_type, d_types, d_requirements) = if chooses_types {
            (None, None, None)
        } else {
            (d.instance_type, d.instance_types, d.instance_requirements)
        };
        let (lifecycle_placement_group, lifecycle_capacity_reservation) =
            if self.lifecycle.is_some() {
                (
                    self.lifecycle_placement_group,
                    self.lifecycle_capacity_reservation,
                )
            } else {
                (
                    d.lifecycle_placement_group,
                    d.lifecycle_capacity_reservation,
                )
            };
        GroupSpec {
            name: self.name,
            ami_family: self.ami_family.or(d.ami_family),
            ami: self.ami.or(d.ami),
            kubernetes_version: self.kubernetes_version.or(d.kubernetes_version),
            fips: self.fips.or(d.fips),
            instance_type: self.instance_type.or(d_type),
            instance_types: self.instance_types.or(d_types),
            instance_requirements: self.instance_requirements.or(d_requirements),
            placement_group: self.placement_group.or(d.placement_group),
            placement: self.placement.over(d.placement),
            capacity_reservation: self.capacity_reservation.or(d.capacity_reservation),
            lifecycle_placement_group,
            lifecycle_capacity_reservation,
            efa: self.efa.or(d.efa),
            efa_only: self.efa_only.or(d.efa_only),
            min_size: self.min_size.or(d.min_size),
            max_size: self.max_size.or(d.max_size),
            desired_capacity: self.desired_capacity.or(d.desired_capacity),
            subnets: self.subnets.or(d.subnets),
            labels: merge_pairs(&d.labels, &self.labels),
            taints: self.taints.or(d.taints),
            max_pods: self.max_pods.or(d.max_pods),
            cluster_dns: self.cluster_dns.or(d.cluster_dns),
            kubelet: merge_pairs(&d.kubelet, &self.kubelet),
            kubelet_nodes: merge_pairs(&d.kubelet_nodes, &self.kubelet_nodes),
            // A fragment of nodeadm's spec: mappings merge key by key at
            // every depth, as `extends` merges.
            node_config: match (d.node_config, self.node_config) {
                (Some(base), Some(over)) => Some(compose::merge(base, over)),
                (base, over) => over.or(base),
            },
            root_volume: self.root_volume.over(d.root_volume),
            volumes: self.volumes.or(d.volumes),
            instance_store: self.instance_store.or(d.instance_store),
            imds: ImdsSpec {
                tokens_required: self.imds.tokens_required.or(d.imds.tokens_required),
                hop_limit: self.imds.hop_limit.or(d.imds.hop_limit),
                ipv6: self.imds.ipv6.or(d.imds.ipv6),
                block_pods: self.imds.block_pods.or(d.imds.block_pods),
                instance_tags: self.imds.instance_tags.or(d.imds.instance_tags),
            },
            pre_bootstrap_commands: self.pre_bootstrap_commands.or(d.pre_bootstrap_commands),
            hatches: self.hatches.over(&d.hatches),
            efs_mounts: self.efs_mounts.or(d.efs_mounts),
            tags: merge_pairs(&d.tags, &self.tags),
            iam: self.iam.over(d.iam),
            security_groups: self.security_groups.or(d.security_groups),
            key_name: self.key_name.or(d.key_name),
            detailed_monitoring: self.detailed_monitoring.or(d.detailed_monitoring),
            launch_options: self.launch_options.over(d.launch_options),
            associate_public_ip: self.associate_public_ip.or(d.associate_public_ip),
            node_security_group: self.node_security_group.or(d.node_security_group),
            ssh: self.ssh.or(d.ssh),
            security_group_rules: self.security_group_rules.or(d.security_group_rules),
            cluster_autoscaler: self.cluster_autoscaler.or(d.cluster_autoscaler),
            // A group the autoscaler does not discover takes no priority
            // from `defaults`.
            autoscaler_priority: if undiscovered {
                self.autoscaler_priority
            } else {
                self.autoscaler_priority.or(d.autoscaler_priority)
            },
            // Names one Auto Scaling group: never taken from `defaults`.
            auto_scaling_group_name: self.auto_scaling_group_name,
            update: UpdateSpec {
                max_batch_size: self.update.max_batch_size.or(d.update.max_batch_size),
                min_instances_in_service: self
                    .update
                    .min_instances_in_service
                    .or(d.update.min_instances_in_service),
                pause_time: self.update.pause_time.or(d.update.pause_time),
            },
            signal_timeout: self.signal_timeout.or(d.signal_timeout),
            signal_client: self.signal_client.or(d.signal_client),
            per_az: self.per_az.or(d.per_az),
            capacity_type: self.capacity_type.or(d.capacity_type),
            distribution: self.distribution.or(d.distribution),
            target_group_arns: self.target_group_arns.or(d.target_group_arns),
            classic_load_balancer_names: self
                .classic_load_balancer_names
                .or(d.classic_load_balancer_names),
            bootstrap_arguments: self.bootstrap_arguments.or(d.bootstrap_arguments),
            lifecycle_self_managed: if self.lifecycle.is_some() {
                self.lifecycle_self_managed
            } else {
                d.lifecycle_self_managed
            },
            lifecycle: self.lifecycle.or(d.lifecycle),
            max_unavailable: self.max_unavailable.or(d.max_unavailable),
            update_strategy: self.update_strategy.or(d.update_strategy),
            node_repair: self.node_repair.or(d.node_repair),
            force_update_enabled: self.force_update_enabled.or(d.force_update_enabled),
            release_version: self.release_version.or(d.release_version),
            ami_type: self.ami_type.or(d.ami_type),
            launch_template: self.launch_template.or(d.launch_template),
            // Names one EKS node group: never taken from `defaults`.
            nodegroup_name: self.nodegroup_name,
            capacity_reservation_id: self.capacity_reservation_id.or(d.capacity_reservation_id),
            written: [self.written, d.written].concat(),
            reported: [self.reported, d.reported].concat(),
        }
    }
}

/// A node group (or `defaults`) as written, section by section in the
/// order of its fields: its name, then the image and instances, the nodes,
/// their access, the self-managed and the managed settings.
pub(super) fn decode_group_spec(d: &mut Decoder, node: &Node, context: &str) -> GroupSpec {
    let Some(mut f) = d.fields(context, node, GROUP_FIELDS) else {
        return GroupSpec::default();
    };
    let mut spec = GroupSpec::default();
    if let Some(name_node) = f.get("name") {
        if context == "defaults" {
            d.error(name_node.span, "`defaults` cannot set `name`").help =
                Some("names belong to each node group".into());
        } else {
            spec.name = d.string("name", name_node);
        }
    }
    let context_name = match &spec.name {
        Some(name) => format!("node group `{}`", name.value),
        None => context.to_string(),
    };
    decode_instances(d, &mut f, &mut spec);
    decode_nodes(d, &mut f, &mut spec);
    decode_access(d, &mut f, &mut spec, context);
    decode_self_managed(d, &mut f, &mut spec, context);
    decode_managed(d, &mut f, &mut spec, context);
    spec.written = GROUP_FIELDS
        .iter()
        .map(|field| field.name)
        .filter_map(|field| f.key_span(field).map(|span| (field, span)))
        // A name `defaults` cannot set is reported once, as such.
        .filter(|(field, _)| {
            context != "defaults" || !matches!(*field, "nodegroupName" | "autoScalingGroupName")
        })
        .collect();
    spec.reported = f.finish(d, &context_name);
    spec.reported.extend(
        GROUP_FIELDS
            .iter()
            .map(|field| field.name)
            .filter(|field| f.given(field)),
    );
    spec
}

/// The image and the instances: the AMI family or image, FIPS, the
/// instance types or requirements, where they are placed and reserved,
/// EFA and the sizes.
fn decode_instances(d: &mut Decoder, f: &mut Fields<'_>, spec: &mut GroupSpec) {
    spec.ami_family = f
        .get("amiFamily")
        .and_then(|n| d.choice("amiFamily", n, &AmiFamily::ALL));
    spec.ami = f.get("ami").and_then(|n| decode_ami(d, n));
    spec.fips = opt_bool(d, f, "", "fips");
    spec.instance_type = f
        .get("instanceType")
        .and_then(|n| d.string("instanceType", n));
    spec.instance_types = f
        .get("instanceTypes")
        .and_then(|n| decode_instance_types(d, n));
    spec.instance_requirements = f.get("instanceRequirements").and_then(|n| {
        let at = f.key_span("instanceRequirements").unwrap_or(n.span);
        decode_requirements(d, n, at)
    });
    spec.placement_group =
        opt_string(d, f, "", "placementGroup").filter(|name| check_placement_group_name(d, name));
    if let Some(n) = f.get("placement") {
        spec.placement = decode_placement(d, n);
    }
    spec.capacity_reservation = f
        .get("capacityReservation")
        .and_then(|n| decode_capacity_reservation(d, "capacityReservation", n));
    if let Some(n) = f.get("efa") {
        (spec.efa, spec.efa_only) = decode_efa(d, n);
    }
    spec.min_size = opt_u32(d, f, "", "minSize");
    spec.max_size = opt_u32(d, f, "", "maxSize");
    spec.desired_capacity = opt_u32(d, f, "", "desiredCapacity");
}

/// What the nodes are as Kubernetes nodes and as machines: subnets,
/// labels, taints, `maxPods`, kubelet and NodeConfig settings, storage,
/// instance metadata, commands run before bootstrap and escape hatches.
fn decode_nodes(d: &mut Decoder, f: &mut Fields<'_>, spec: &mut GroupSpec) {
    spec.subnets = f.get("subnets").and_then(|n| decode_subnets(d, n));
    if let Some(n) = f.get("labels") {
        spec.labels = d.string_map("labels", n);
        for (key, value) in &spec.labels {
            check_label(d, key, value);
        }
    }
    spec.taints = f.get("taints").and_then(|n| {
        if let Value::Map(_) = n.value {
            d.wrong_type("taints", n, "a list").help = Some(
                "write each taint as `- {key: dedicated, value: gpu, effect: NoSchedule}`".into(),
            );
            return None;
        }
        let taints = d
            .list("taints", n)
            .iter()
            .filter_map(|t| decode_taint(d, t))
            .collect();
        Some(Located::new(taints, n.span))
    });
    spec.max_pods = opt_u32(d, f, "", "maxPods");
    spec.cluster_dns = f
        .get("clusterDNS")
        .and_then(|n| super::cluster_dns::decode_cluster_dns(d, n));
    if let Some(n) = f.get("kubelet") {
        spec.kubelet = decode_kubelet(d, n);
        spec.kubelet_nodes = kubelet_nodes(n);
    }
    if let Some(n) = f.get("nodeConfig") {
        match n.value {
            Value::Map(_) => spec.node_config = Some(n.clone()),
            _ => {
                d.wrong_type("nodeConfig", n, "a mapping (a NodeConfig `spec` fragment)");
            }
        }
    }
    if let Some(n) = f.get("rootVolume") {
        spec.root_volume = decode_volume(d, n);
    }
    spec.volumes = f.get("volumes").and_then(|n| decode_volumes(d, n));
    spec.instance_store = f
        .get("instanceStore")
        .and_then(|n| d.choice("instanceStore", n, INSTANCE_STORE_POLICIES));
    if let Some(n) = f.get("imds") {
        spec.imds = decode_imds(d, n);
    }
    spec.pre_bootstrap_commands = opt_strings(d, f, "", "preBootstrapCommands");
    spec.hatches = HatchSpec::decode(d, f);
}

/// What the nodes reach and who reaches them: EFS mounts, tags, IAM,
/// security groups, SSH, monitoring, CPU settings, public addresses, the
/// node security group and the cluster autoscaler.
fn decode_access(d: &mut Decoder, f: &mut Fields<'_>, spec: &mut GroupSpec, context: &str) {
    spec.efs_mounts = f.get("efsMounts").map(|n| {
        let mounts = d
            .list("efsMounts", n)
            .iter()
            .filter_map(|m| decode_efs(d, m))
            .collect();
        Located::new(mounts, n.span)
    });
    if let Some(n) = f.get("tags") {
        spec.tags = d.string_map("tags", n);
        for (key, value) in &spec.tags {
            limits::check_tag(d, key, value);
        }
    }
    if let Some(n) = f.get("iam") {
        spec.iam = decode_iam(d, n);
        if context == "defaults"
            && let Some(name) = &spec.iam.created_role_name
        {
            d.error(name.span, "`defaults` cannot set `iam.createdRoleName`")
                .help = Some("it names one IAM role; set it on the group".into());
            spec.iam.created_role_name = None;
        }
    }
    spec.security_groups = f
        .get("securityGroups")
        .and_then(|n| decode_security_groups(d, n));
    spec.key_name = opt_string(d, f, "", "keyName");
    spec.ssh = f
        .get("ssh")
        .and_then(|n| super::networking::decode_ssh(d, n));
    spec.security_group_rules = f
        .get("securityGroupRules")
        .and_then(|n| super::security_group_rules::decode_security_group_rules(d, n));
    spec.detailed_monitoring = opt_bool(d, f, "", "detailedMonitoring");
    spec.launch_options = decode_launch_options(d, f);
    spec.associate_public_ip = opt_bool(d, f, "", "associatePublicIpAddress");
    spec.node_security_group = f
        .get("nodeSecurityGroup")
        .and_then(|n| d.choice("nodeSecurityGroup", n, NODE_SECURITY_GROUPS));
    if let Some(n) = f.get("clusterAutoscaler") {
        (spec.cluster_autoscaler, spec.autoscaler_priority) = decode_cluster_autoscaler(d, n);
    }
}

/// The Auto Scaling group of a self-managed group: its name, update
/// policy, CloudFormation signal, `perAz`, capacity type and spot mix,
/// bootstrap arguments and lifecycle.
fn decode_self_managed(d: &mut Decoder, f: &mut Fields<'_>, spec: &mut GroupSpec, context: &str) {
    if let Some(node) = f.get("autoScalingGroupName") {
        if context == "defaults" {
            d.error(node.span, "`defaults` cannot set `autoScalingGroupName`")
                .help = Some("it names one Auto Scaling group; set it on the group".into());
        } else if let Some(name) = d.string("autoScalingGroupName", node) {
            spec.auto_scaling_group_name = check_asg_name(d, name);
        }
    }
    if let Some(n) = f.get("updatePolicy") {
        spec.update = decode_update(d, n);
    }
    spec.signal_timeout = f
        .get("signalTimeout")
        .and_then(|n| duration(d, "signalTimeout", n, 60, 43_200));
    spec.signal_client = f
        .get("signalClient")
        .and_then(|n| d.choice("signalClient", n, SIGNAL_CLIENTS));
    spec.per_az = opt_bool(d, f, "", "perAz");
    spec.capacity_type = f
        .get("capacityType")
        .and_then(|n| d.choice("capacityType", n, CAPACITY_TYPES));
    spec.distribution = f
        .get("instancesDistribution")
        .and_then(|n| decode_distribution(d, n));
    spec.target_group_arns = f
        .get("targetGroupArns")
        .and_then(|n| decode_target_groups(d, n));
    spec.classic_load_balancer_names = f
        .get("classicLoadBalancerNames")
        .and_then(|n| decode_classic_load_balancers(d, n));
    spec.bootstrap_arguments = opt_string(d, f, "", "bootstrapArguments").and_then(|arguments| {
        // They continue bootstrap.sh's command line in the user data: a
        // line break would end it there and run the rest as commands.
        if !arguments.value.contains(['\n', '\r']) {
            return Some(arguments);
        }
        d.error(
            arguments.span,
            "`bootstrapArguments` holds a line break: it is one line of bootstrap.sh arguments",
        )
        .help = Some(
            "write the arguments on one line (a folded `>-` block joins its lines with spaces)"
                .into(),
        );
        None
    });
    if let Some(node) = f.get("lifecycle") {
        spec.lifecycle_self_managed = self_managed_lifecycle_keys(node);
    }
    if let Some((lifecycle, placement_group, capacity_reservation)) =
        f.get("lifecycle").and_then(|n| decode_lifecycle(d, n))
    {
        spec.lifecycle = Some(lifecycle);
        spec.lifecycle_placement_group = placement_group;
        spec.lifecycle_capacity_reservation = capacity_reservation;
    }
}

/// What EKS manages for a managed group: update settings, node repair,
/// release and Kubernetes versions, AMI type, capacity reservation and
/// the EKS node group name.
fn decode_managed(d: &mut Decoder, f: &mut Fields<'_>, spec: &mut GroupSpec, context: &str) {
    if let Some(n) = f.get("updateConfig") {
        (spec.max_unavailable, spec.update_strategy) = decode_update_config(d, n);
    }
    spec.node_repair = f.get("nodeRepair").and_then(|n| decode_node_repair(d, n));
    spec.force_update_enabled = opt_bool(d, f, "", "forceUpdateEnabled");
    spec.release_version = opt_string(d, f, "", "releaseVersion");
    spec.kubernetes_version = f
        .get("kubernetesVersion")
        .and_then(|n| super::cluster::decode_version(d, "kubernetesVersion", n));
    spec.ami_type = opt_string(d, f, "", "amiType");
    spec.launch_template = f.get("launchTemplate").and_then(|n| {
        let at = f.key_span("launchTemplate").unwrap_or(n.span);
        super::existing_launch_template::decode_launch_template(d, n, at)
    });
    spec.capacity_reservation_id = opt_string(d, f, "", "capacityReservationId").and_then(|id| {
        let ok = is_reservation_id(&id.value);
        if !ok {
            let message = format!("`{}` is not a capacity reservation ID", id.value);
            d.error(id.span, message).help =
                Some("capacity reservation IDs look like `cr-0123456789abcdef0`".into());
        }
        ok.then_some(id)
    });
    if let Some(node) = f.get("nodegroupName") {
        if context == "defaults" {
            d.error(node.span, "`defaults` cannot set `nodegroupName`")
                .help = Some("it names one EKS node group; set it on the group".into());
        } else if let Some(name) = d.string("nodegroupName", node) {
            spec.nodegroup_name = check_nodegroup_name(d, name);
        }
    }
}

/// Node group names become logical IDs (`staging-1` → `Staging1`) and tag
/// values, so they are restricted to what both accept.
pub(super) fn check_group_name(d: &mut Decoder, name: &Located<String>) -> Option<String> {
    let text = &name.value;
    let valid = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !text.ends_with('-')
        && !text.contains("--");
    if !valid {
        let message = format!("node group name `{text}` cannot make a CloudFormation logical ID");
        d.error(name.span, message).help =
            Some("use letters, digits and single dashes, starting with a letter, e.g. `staging-workers-1`".into());
        return None;
    }
    if text.len() > 63 {
        let message = format!(
            "node group name `{text}` is {} characters long; the limit is 63",
            text.len()
        );
        d.error(name.span, message).help =
            Some("AWS limits node group names to 63 characters".into());
        return None;
    }
    Some(text.split('-').map(capitalize).collect())
}

/// `clusterAutoscaler: true|false`, or `{enabled, priority}`.
fn decode_cluster_autoscaler(d: &mut Decoder, node: &Node) -> (Opt<bool>, Opt<u32>) {
    match &node.value {
        Value::Bool(_) => (d.boolean("clusterAutoscaler", node), None),
        Value::Map(_) => {
            let Some(mut f) = d.fields("clusterAutoscaler", node, CLUSTER_AUTOSCALER_FIELDS) else {
                return (None, None);
            };
            let enabled = opt_bool(d, &mut f, "clusterAutoscaler.", "enabled");
            let priority = opt_u32(d, &mut f, "clusterAutoscaler.", "priority");
            f.finish(d, "`clusterAutoscaler`");
            (enabled, priority)
        }
        _ => {
            d.wrong_type(
                "clusterAutoscaler",
                node,
                "`true`, `false` or a mapping `{enabled, priority}`",
            );
            (None, None)
        }
    }
}

/// Auto Scaling group names: 1 to 255 characters (`CreateAutoScalingGroup`);
/// eksynth keeps to letters, digits, `-`, `_` and `.`, which every tool
/// that matches them (the autoscaler's regexes, shell scripts) reads
/// plainly, and a `perAz` group adds `-` and its subnet ID's 17 characters.
pub(super) fn check_asg_name(d: &mut Decoder, name: Located<String>) -> Opt<String> {
    let text = &name.value;
    let valid = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        let message = format!("`{text}` is not a valid Auto Scaling group name");
        d.error(name.span, message).help = Some("use letters, digits, `-`, `_` and `.`".into());
        return None;
    }
    if text.len() > 255 {
        let message = format!(
            "Auto Scaling group name `{text}` is {} characters long; the limit is 255",
            text.len()
        );
        d.error(name.span, message);
        return None;
    }
    Some(name)
}

/// EKS node group names: 1 to 63 letters, digits, `-` and `_`, starting
/// with a letter or digit (`CreateNodegroup`'s rule).
pub(super) fn check_nodegroup_name(d: &mut Decoder, name: Located<String>) -> Opt<String> {
    let text = &name.value;
    let valid = text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        let message = format!("`{text}` is not a valid EKS node group name");
        d.error(name.span, message).help =
            Some("use letters, digits, `-` and `_`, starting with a letter or digit".into());
        return None;
    }
    if text.len() > 63 {
        let message = format!(
            "EKS node group name `{text}` is {} characters long; the limit is 63",
            text.len()
        );
        d.error(name.span, message).help =
            Some("shorten it; a `perAz` group adds `-` and its subnet ID's 17 characters".into());
        return None;
    }
    Some(name)
}

fn capitalize(part: &str) -> String {
    let mut chars = part.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use crate::suggest::closest;

    #[test]
    fn group_names_become_pascal_case_logical_ids() {
        let file = SourceFile::new("t.yaml", "x");
        let mut d = Decoder::new(vec![file]);
        let name = |s: &str| Located::new(s.to_string(), Span::new(1, 1, 1));
        assert_eq!(
            check_group_name(&mut d, &name("staging-1")).as_deref(),
            Some("Staging1")
        );
        assert_eq!(
            check_group_name(&mut d, &name("gpu")).as_deref(),
            Some("Gpu")
        );
        assert_eq!(check_group_name(&mut d, &name("a_b")), None);
        assert_eq!(check_group_name(&mut d, &name("1abc")), None);
        assert_eq!(check_group_name(&mut d, &name(&"a".repeat(64))), None);
    }

    #[test]
    fn the_closest_field_is_suggested() {
        let names = crate::blueprint::field::names(GROUP_FIELDS);
        assert_eq!(closest("instanceTyp", &names), Some("instanceType"));
    }
}
