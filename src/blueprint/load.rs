//! Loading a blueprint: the syntax tree is decoded field by field, defaults
//! are merged into each node group, and every rule is checked. All errors of
//! a file are collected in one run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::decode::{Decoder, Located};
use super::instances::instance_info;
use super::limits;
use super::max_pods;
use super::rules;
use super::*;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::syntax::{Node, Value};

/// A loaded blueprint and the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub blueprint: Blueprint,
    pub warnings: Vec<Diagnostic>,
    /// Every file read, indexed by `Span::file`.
    pub files: Vec<Arc<SourceFile>>,
}

/// Loads and checks a blueprint. On failure, every diagnostic found is
/// returned (errors and warnings).
pub fn load(file: &Arc<SourceFile>) -> Result<Loaded, Vec<Diagnostic>> {
    load_with(file, &[])
}

/// Loads a blueprint with its bases (`extends`) and `--set` overrides.
pub fn load_with(
    file: &Arc<SourceFile>,
    overrides: &[(String, String)],
) -> Result<Loaded, Vec<Diagnostic>> {
    let composed = super::compose::compose(file, overrides)?;
    let mut decoder = Decoder::new(composed.files);
    let blueprint = decode_blueprint(&mut decoder, &composed.root);
    let mut diagnostics = decoder.diagnostics;
    // Every group is checked with `defaults` merged in, so a mistake in
    // `defaults` is found once per group; it is one mistake, reported once.
    let mut seen = HashSet::new();
    diagnostics.retain(|d| seen.insert((d.span, d.message.clone())));
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.file, s.line, s.column)));
    match blueprint {
        Some(blueprint) if !diagnostics.iter().any(Diagnostic::is_error) => Ok(Loaded {
            blueprint,
            warnings: diagnostics,
            files: decoder.files,
        }),
        _ => Err(diagnostics),
    }
}

pub(super) const TOP_FIELDS: &[&str] = &[
    "extends",
    "apiVersion",
    "kind",
    "description",
    "cluster",
    "defaults",
    "nodeGroups",
    "managedNodeGroups",
    "suppressions",
    "overrides",
    "stack",
    "stacks",
];
pub(super) const SUPPRESSION_FIELDS: &[&str] = &["id", "reason"];
pub(super) const PROVIDER_FIELDS: &[&str] = &[
    "serviceToken",
    "subnets",
    "securityGroups",
    "reservedConcurrency",
    "logRetentionDays",
];
pub(super) const CLUSTER_FIELDS: &[&str] = &[
    "nodeAccess",
    "awsAuthProvider",
    "name",
    "kubernetesVersion",
    "endpoint",
    "certificateAuthority",
    "serviceIpv4Cidr",
    "controlPlaneSecurityGroup",
    "vpc",
    "authenticationMode",
    "prefixDelegation",
];
pub(super) const GROUP_FIELDS: &[&str] = &[
    "name",
    "amiFamily",
    "ami",
    "instanceType",
    "instanceTypes",
    "minSize",
    "maxSize",
    "desiredCapacity",
    "subnets",
    "labels",
    "taints",
    "maxPods",
    "kubelet",
    "rootVolume",
    "imds",
    "preBootstrapCommands",
    "efsMounts",
    "tags",
    "iam",
    "securityGroups",
    "keyName",
    "detailedMonitoring",
    "clusterAutoscaler",
    "updatePolicy",
    "signalTimeout",
    "signalClient",
    "perAz",
    "capacityType",
    "instancesDistribution",
    "bootstrapArguments",
    "lifecycle",
    "updateConfig",
    "forceUpdateEnabled",
    "releaseVersion",
    "amiType",
    "nodegroupName",
    "capacityReservationId",
];
/// Fields only a managed node group has, and only a self-managed one has.
pub(super) const MANAGED_ONLY: &[&str] = &[
    "nodegroupName",
    "capacityReservationId",
    "updateConfig",
    "forceUpdateEnabled",
    "releaseVersion",
    "amiType",
];
pub(super) const SELF_MANAGED_ONLY: &[&str] = &[
    "instancesDistribution",
    "updatePolicy",
    "signalTimeout",
    "signalClient",
    "lifecycle",
    "clusterAutoscaler",
];
pub(super) const DISTRIBUTION_FIELDS: &[&str] = &[
    "onDemandBaseCapacity",
    "onDemandPercentageAboveBaseCapacity",
    "spotAllocationStrategy",
    "capacityRebalance",
];
pub(super) const LIFECYCLE_FIELDS: &[&str] = &[
    "terminationHookTimeout",
    "warmPool",
    "maxInstanceLifetime",
    "metricsCollection",
    "healthCheckGracePeriod",
    "placementGroup",
    "capacityReservation",
];
pub(super) const UPDATE_CONFIG_FIELDS: &[&str] = &["maxUnavailable", "maxUnavailablePercentage"];
pub(super) const KUBELET_FIELDS: &[&str] = &[
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "evictionHard",
    "kubeReserved",
    "systemReserved",
    "podPidsLimit",
    "cpuManagerPolicy",
    "containerLogMaxSize",
    "containerLogMaxFiles",
    "serializeImagePulls",
];
pub(super) const VOLUME_FIELDS: &[&str] = &[
    "size",
    "type",
    "iops",
    "throughput",
    "encrypted",
    "kmsKeyId",
];
pub(super) const IMDS_FIELDS: &[&str] = &["httpTokens", "hopLimit", "blockPods"];
pub(super) const IAM_FIELDS: &[&str] = &[
    "cniUsesIrsa",
    "ssmManagedInstance",
    "extraManagedPolicies",
    "roleName",
    "instanceProfileArn",
];
pub(super) const UPDATE_FIELDS: &[&str] = &["maxBatchSize", "minInstancesInService", "pauseTime"];
pub(super) const TAINT_FIELDS: &[&str] = &["key", "value", "effect"];
pub(super) const EFS_FIELDS: &[&str] = &["fileSystemId", "mountPoint"];
pub(super) const SOURCE_FIELDS: &[&str] = &["parameter", "default", "import"];

/// The values a field may take, shared by the loader and the JSON Schema.
pub(super) const AUTHENTICATION_MODES: &[(&str, AuthenticationMode)] = &[
    ("API", AuthenticationMode::Api),
    ("API_AND_CONFIG_MAP", AuthenticationMode::ApiAndConfigMap),
    ("CONFIG_MAP", AuthenticationMode::ConfigMap),
];
/// `nodeAccess`: whether nodes are mapped through aws-auth.
pub(super) const NODE_ACCESS: &[(&str, bool)] = &[("accessEntries", false), ("awsAuth", true)];
/// `signalClient`: what sends an AL2023 or AL2 node's signal.
pub(super) const SIGNAL_CLIENTS: &[(&str, SignalClient)] = &[
    ("image", SignalClient::Image),
    ("embedded", SignalClient::Embedded),
];
pub(super) const CAPACITY_TYPES: &[(&str, CapacityType)] = &[
    ("ON_DEMAND", CapacityType::OnDemand),
    ("SPOT", CapacityType::Spot),
    ("CAPACITY_BLOCK", CapacityType::CapacityBlock),
];
pub(super) const SPOT_ALLOCATION_STRATEGIES: &[&str] = &[
    "price-capacity-optimized",
    "capacity-optimized",
    "capacity-optimized-prioritized",
    "lowest-price",
];
/// Taint effects in Kubernetes' spelling and in the EKS API's.
pub(super) const TAINT_EFFECTS: &[(&str, TaintEffect)] = &[
    ("NoSchedule", TaintEffect::NoSchedule),
    ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
    ("NoExecute", TaintEffect::NoExecute),
    ("NO_SCHEDULE", TaintEffect::NoSchedule),
    ("PREFER_NO_SCHEDULE", TaintEffect::PreferNoSchedule),
    ("NO_EXECUTE", TaintEffect::NoExecute),
];
pub(super) const CPU_MANAGER_POLICIES: &[&str] = &["none", "static"];
pub(super) const VOLUME_TYPES: &[&str] = &["gp3", "gp2", "io1", "io2", "st1", "sc1", "standard"];
/// `imds.httpTokens`: whether tokens are required.
pub(super) const HTTP_TOKENS: &[(&str, bool)] = &[("required", true), ("optional", false)];

type Opt<T> = Option<Located<T>>;

/// Node group settings as written, before defaults are merged in.
#[derive(Clone, Default)]
struct GroupSpec {
    name: Opt<String>,
    ami_family: Opt<AmiFamily>,
    ami: Opt<Ami>,
    instance_type: Opt<String>,
    instance_types: Opt<Vec<Located<String>>>,
    min_size: Opt<u32>,
    max_size: Opt<u32>,
    desired_capacity: Opt<u32>,
    subnets: Opt<Subnets>,
    labels: Vec<(Located<String>, Located<String>)>,
    taints: Opt<Vec<Located<Taint>>>,
    max_pods: Opt<u32>,
    kubelet: Vec<(Located<String>, serde_json::Value)>,
    root_volume: VolumeSpec,
    imds: ImdsSpec,
    pre_bootstrap_commands: Opt<Vec<String>>,
    efs_mounts: Opt<Vec<EfsMount>>,
    tags: Vec<(Located<String>, Located<String>)>,
    iam: IamSpec,
    security_groups: Opt<Vec<String>>,
    key_name: Opt<String>,
    detailed_monitoring: Opt<bool>,
    cluster_autoscaler: Opt<bool>,
    update: UpdateSpec,
    signal_timeout: Opt<String>,
    signal_client: Opt<SignalClient>,
    per_az: Opt<bool>,
    capacity_type: Opt<CapacityType>,
    distribution: Opt<DistributionSpec>,
    bootstrap_arguments: Opt<String>,
    lifecycle: Opt<Lifecycle>,
    max_unavailable: Opt<MaxUnavailable>,
    force_update_enabled: Opt<bool>,
    release_version: Opt<String>,
    ami_type: Opt<String>,
    nodegroup_name: Opt<String>,
    capacity_reservation_id: Opt<String>,
    /// Every field written, with where: kind-specific fields are checked
    /// once the kind of group is known.
    written: Vec<(&'static str, Span)>,
    /// Fields already reported where they are written: given a value that
    /// did not decode, or suggested for a misspelt key. Such a field is not
    /// reported again as missing: one mistake, one error.
    reported: Vec<&'static str>,
}

#[derive(Clone, Default)]
struct DistributionSpec {
    on_demand_base_capacity: Option<u32>,
    on_demand_percentage_above_base: Option<u32>,
    spot_allocation_strategy: Option<String>,
    capacity_rebalance: Option<bool>,
}

#[derive(Clone, Default)]
struct VolumeSpec {
    size: Opt<u32>,
    volume_type: Opt<String>,
    iops: Opt<u32>,
    throughput: Opt<u32>,
    encrypted: Opt<bool>,
    kms_key_id: Opt<String>,
}

#[derive(Clone, Default)]
struct ImdsSpec {
    tokens_required: Opt<bool>,
    hop_limit: Opt<u32>,
    block_pods: Opt<bool>,
}

#[derive(Clone, Default)]
struct IamSpec {
    cni_uses_irsa: Opt<bool>,
    ssm_managed_instance: Opt<bool>,
    extra_managed_policies: Opt<Vec<String>>,
    role_name: Opt<String>,
    instance_profile_arn: Opt<String>,
}

#[derive(Clone, Default)]
struct UpdateSpec {
    max_batch_size: Opt<u32>,
    min_instances_in_service: Opt<u32>,
    pause_time: Opt<String>,
}

/// Merges two maps written as key/value lists: `over` wins per key, and
/// keys keep their first-written position.
fn merge_pairs<V: Clone>(
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
    fn over(self, defaults: &GroupSpec) -> GroupSpec {
        let d = defaults.clone();
        GroupSpec {
            name: self.name,
            ami_family: self.ami_family.or(d.ami_family),
            ami: self.ami.or(d.ami),
            instance_type: self.instance_type.or(d.instance_type),
            instance_types: self.instance_types.or(d.instance_types),
            min_size: self.min_size.or(d.min_size),
            max_size: self.max_size.or(d.max_size),
            desired_capacity: self.desired_capacity.or(d.desired_capacity),
            subnets: self.subnets.or(d.subnets),
            labels: merge_pairs(&d.labels, &self.labels),
            taints: self.taints.or(d.taints),
            max_pods: self.max_pods.or(d.max_pods),
            kubelet: merge_pairs(&d.kubelet, &self.kubelet),
            root_volume: VolumeSpec {
                size: self.root_volume.size.or(d.root_volume.size),
                volume_type: self.root_volume.volume_type.or(d.root_volume.volume_type),
                iops: self.root_volume.iops.or(d.root_volume.iops),
                throughput: self.root_volume.throughput.or(d.root_volume.throughput),
                encrypted: self.root_volume.encrypted.or(d.root_volume.encrypted),
                kms_key_id: self.root_volume.kms_key_id.or(d.root_volume.kms_key_id),
            },
            imds: ImdsSpec {
                tokens_required: self.imds.tokens_required.or(d.imds.tokens_required),
                hop_limit: self.imds.hop_limit.or(d.imds.hop_limit),
                block_pods: self.imds.block_pods.or(d.imds.block_pods),
            },
            pre_bootstrap_commands: self.pre_bootstrap_commands.or(d.pre_bootstrap_commands),
            efs_mounts: self.efs_mounts.or(d.efs_mounts),
            tags: merge_pairs(&d.tags, &self.tags),
            iam: IamSpec {
                cni_uses_irsa: self.iam.cni_uses_irsa.or(d.iam.cni_uses_irsa),
                ssm_managed_instance: self.iam.ssm_managed_instance.or(d.iam.ssm_managed_instance),
                extra_managed_policies: self
                    .iam
                    .extra_managed_policies
                    .or(d.iam.extra_managed_policies),
                role_name: self.iam.role_name.or(d.iam.role_name),
                instance_profile_arn: self.iam.instance_profile_arn.or(d.iam.instance_profile_arn),
            },
            security_groups: self.security_groups.or(d.security_groups),
            key_name: self.key_name.or(d.key_name),
            detailed_monitoring: self.detailed_monitoring.or(d.detailed_monitoring),
            cluster_autoscaler: self.cluster_autoscaler.or(d.cluster_autoscaler),
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
            bootstrap_arguments: self.bootstrap_arguments.or(d.bootstrap_arguments),
            lifecycle: self.lifecycle.or(d.lifecycle),
            max_unavailable: self.max_unavailable.or(d.max_unavailable),
            force_update_enabled: self.force_update_enabled.or(d.force_update_enabled),
            release_version: self.release_version.or(d.release_version),
            ami_type: self.ami_type.or(d.ami_type),
            // Names one EKS node group: never taken from `defaults`.
            nodegroup_name: self.nodegroup_name,
            capacity_reservation_id: self.capacity_reservation_id.or(d.capacity_reservation_id),
            written: [self.written, d.written].concat(),
            reported: [self.reported, d.reported].concat(),
        }
    }
}

fn decode_blueprint(d: &mut Decoder, root: &Node) -> Option<Blueprint> {
    let mut top = d.fields("blueprint", root, TOP_FIELDS)?;
    if !check_header(d, root, &mut top) {
        // Not a blueprint of this version: its other fields mean nothing here.
        return None;
    }
    let misspelt = top.finish(d, "the blueprint");
    let description = top
        .get("description")
        .and_then(|n| d.string("description", n))
        .map(|description| {
            limits::check_description(d, &description);
            description.value
        });
    let cluster = match top.get("cluster") {
        Some(node) => {
            let at = top.key_span("cluster").unwrap_or(node.span);
            decode_cluster(d, node, at)
        }
        None => {
            if !misspelt.contains(&"cluster") {
                missing(
                    d,
                    first_column(root.span),
                    "cluster",
                    "the blueprint",
                    "a `cluster` section with the cluster's name, version and endpoint",
                );
            }
            None
        }
    };
    let defaults = top
        .get("defaults")
        .map(|node| decode_group_spec(d, node, "defaults"))
        .unwrap_or_default();
    let self_managed = top.get("nodeGroups").map(|node| (node, false));
    let managed = top.get("managedNodeGroups").map(|node| (node, true));
    if self_managed.is_none() && managed.is_none() && !misspelt.contains(&"nodeGroups") {
        missing(
            d,
            first_column(root.span),
            "nodeGroups",
            "the blueprint",
            "a list of node groups (`nodeGroups` for self-managed, `managedNodeGroups` for managed ones)",
        );
    }
    let suppressions = top
        .get("suppressions")
        .map(|node| decode_suppressions(d, node))
        .unwrap_or_default();
    let overrides = top
        .get("overrides")
        .map(|node| super::overrides::decode(d, node))
        .unwrap_or_default();
    let groups_at = top
        .key_span("nodeGroups")
        .or_else(|| top.key_span("managedNodeGroups"))
        .unwrap_or_else(|| first_column(root.span));
    let main = decode_main_stack(d, top.get("stack"), groups_at);
    let placement = top
        .get("stacks")
        .map(|node| decode_placement(d, node))
        .unwrap_or(Placement::Single);
    let mut specs: Vec<(Span, GroupSpec, bool)> = Vec::new();
    for (node, is_managed) in self_managed.into_iter().chain(managed) {
        let field = if is_managed {
            "managedNodeGroups"
        } else {
            "nodeGroups"
        };
        let items = d.list(field, node);
        let context = if is_managed {
            "managed node group"
        } else {
            "node group"
        };
        specs.extend(
            items
                .iter()
                .map(|item| (item.span, decode_group_spec(d, item, context), is_managed)),
        );
    }
    if specs.is_empty()
        && let Some((node, _)) = self_managed.or(managed)
        && node.as_seq().is_some()
    {
        d.error(node.span, "the blueprint has no node group").help =
            Some("add at least one node group".into());
    }

    let cluster = cluster?;
    let entries: Vec<Located<String>> = specs
        .iter()
        .filter_map(|(_, spec, _)| spec.name.clone())
        .collect();
    let mut stacks = plan_stacks(d, main, &placement, &entries);
    let mut groups = Vec::new();
    let mut names: HashMap<String, Span> = HashMap::new();
    let mut ids: HashMap<String, (String, Span)> = HashMap::new();
    let mut nodegroup_names: HashMap<String, (String, Span)> = HashMap::new();
    for (span, spec, is_managed) in specs {
        let Some(name) = spec.name.clone() else {
            if spec.reported.contains(&"name") {
                continue;
            }
            d.error(span, "node group has no `name`").help =
                Some("every node group needs a `name`, e.g. `name: general`".into());
            continue;
        };
        let stack = stacks.index_of(&name.value);
        let Some(logical_id) = check_group_name(d, &name) else {
            continue;
        };
        let Some(group) = resolve_group(
            d,
            &cluster,
            span,
            spec.over(&defaults),
            logical_id,
            is_managed,
        ) else {
            continue;
        };
        for mut group in expand_per_az(d, group) {
            group.stack = stack;
            let name = &group.name;
            if let Some(first) = names.get(&name.value) {
                let message = format!("node group `{}` is defined twice", name.value);
                let help = format!(
                    "the first definition is at line {}; node group names must be unique",
                    first.line
                );
                d.error(name.span, message).help = Some(help);
                continue;
            }
            names.insert(name.value.clone(), name.span);
            if let Some((other, first)) = ids.get(&group.logical_id) {
                let message = format!(
                    "node groups `{}` and `{other}` make the same logical ID `{}`",
                    name.value, group.logical_id
                );
                let help = format!(
                    "`{other}` is at line {}; rename one so that the names differ in more than case or dashes",
                    first.line
                );
                d.error(name.span, message).help = Some(help);
                continue;
            }
            ids.insert(group.logical_id.clone(), (name.value.clone(), name.span));
            if let Some(managed) = &group.managed {
                let named = &managed.nodegroup_name;
                if let Some((other, first)) = nodegroup_names.get(&named.value) {
                    let message = format!(
                        "node groups `{}` and `{other}` are both named `{}` in EKS",
                        name.value, named.value
                    );
                    d.error(named.span, message).help = Some(format!(
                        "`{other}` is at line {}; EKS node group names are unique in a cluster",
                        first.line
                    ));
                    continue;
                }
                nodegroup_names.insert(named.value.clone(), (name.value.clone(), named.span));
            }
            groups.push(group);
        }
    }
    if let Some(first) = groups.first()
        && groups.iter().all(|g| g.ami_family.is_windows())
    {
        d.warning(first.name.span, "the blueprint has only Windows node groups").help = Some(
            "Windows nodes cannot run CoreDNS and other kube-system pods; the cluster needs at least one Linux node group".into(),
        );
    }
    check_parameters(d, &cluster, &groups);
    Some(Blueprint {
        description,
        cluster,
        node_groups: groups,
        suppressions,
        overrides,
        stacks: std::mem::take(&mut stacks.specs),
    })
}

/// The main stack: named by `stack`, or after the blueprint file.
fn decode_main_stack(d: &mut Decoder, node: Option<&Node>, groups_at: Span) -> StackSpec {
    if let Some(name) = node.and_then(|node| d.string("stack", node)) {
        check_stack_name(d, &name);
        return StackSpec {
            name: name.value,
            span: name.span,
            named: true,
        };
    }
    StackSpec {
        name: default_stack_name(&d.files[0].name),
        span: groups_at,
        named: false,
    }
}

fn check_stack_name(d: &mut Decoder, name: &Located<String>) -> bool {
    if is_valid_stack_name(&name.value) {
        return true;
    }
    let message = format!("`{}` is not a valid stack name", name.value);
    let diagnostic = d.error(name.span, message);
    diagnostic.label = Some("expected a stack name".into());
    diagnostic.help = Some(
        "a stack name starts with a letter and holds only letters, digits and dashes, at most 128 characters".into(),
    );
    false
}

/// How node groups are placed in stacks, as `stacks` says.
enum Placement {
    /// Everything in the main stack.
    Single,
    /// Each node group (each `perAz` group with all its subnets) in a stack
    /// of its own, named `{main}-{group}`.
    PerGroup,
    /// Named stacks, each with the node groups listed.
    Named(Vec<(Located<String>, Vec<Located<String>>)>),
}

fn decode_placement(d: &mut Decoder, node: &Node) -> Placement {
    const EXPECTED: &str = "`perGroup` or a mapping of stack names to lists of node group names";
    match &node.value {
        Value::String(_) => match d.choice("stacks", node, &[("perGroup", ())]) {
            Some(_) => Placement::PerGroup,
            None => Placement::Single,
        },
        Value::Map(entries) => Placement::Named(
            entries
                .iter()
                .map(|(key, value)| {
                    let field = format!("stacks.{}", key.name);
                    let groups = if value.as_seq().is_some() {
                        d.string_list(&field, value)
                    } else {
                        d.wrong_type(&field, value, "a list of node group names");
                        None
                    };
                    let empty = groups.as_ref().is_some_and(Vec::is_empty);
                    let groups = groups.unwrap_or_default();
                    if empty {
                        let message = format!("stack `{}` has no node group", key.name);
                        d.error(value.span, message).help =
                            Some("list the names of the node groups it holds, or remove it".into());
                    }
                    (Located::new(key.name.clone(), key.span), groups)
                })
                .collect(),
        ),
        _ => {
            d.wrong_type("stacks", node, EXPECTED);
            Placement::Single
        }
    }
}

/// The stacks of a blueprint and which stack each node group entry is in.
struct Stacks {
    specs: Vec<StackSpec>,
    /// Node group entry name → its stack's index and where it is placed;
    /// entries not here are in the main stack.
    placed: HashMap<String, (usize, Span)>,
}

impl Stacks {
    fn index_of(&self, entry: &str) -> usize {
        self.placed.get(entry).map_or(0, |(index, _)| *index)
    }
}

/// Checks `stacks` against the node group entries and names every stack.
fn plan_stacks(
    d: &mut Decoder,
    main: StackSpec,
    placement: &Placement,
    entries: &[Located<String>],
) -> Stacks {
    let mut stacks = Stacks {
        specs: vec![main],
        placed: HashMap::new(),
    };
    let add = |d: &mut Decoder, stacks: &mut Stacks, spec: StackSpec| -> Option<usize> {
        if let Some(first) = stacks.specs.iter().find(|s| s.name == spec.name) {
            let message = format!("two stacks are named `{}`", spec.name);
            let help = if first.named {
                format!(
                    "the other is declared at line {}; every stack needs its own name",
                    first.span.line
                )
            } else {
                "the main stack is named after the blueprint file; set `stack:` to another name, or rename this one".to_string()
            };
            d.error(spec.span, message).help = Some(help);
            return None;
        }
        stacks.specs.push(spec);
        Some(stacks.specs.len() - 1)
    };
    match placement {
        Placement::Single => {}
        Placement::PerGroup => {
            let main_name = stacks.specs[0].name.clone();
            for entry in entries {
                if stacks.placed.contains_key(&entry.value) {
                    continue; // a group defined twice, reported with the groups
                }
                let name = format!("{main_name}-{}", entry.value);
                if name.chars().count() > 128 {
                    let message = format!(
                        "the stack of node group `{}` would be named `{name}`, longer than 128 characters",
                        entry.value
                    );
                    d.error(entry.span, message).help =
                        Some("shorten `stack:` or the group's name".into());
                    continue;
                }
                let spec = StackSpec {
                    name,
                    span: entry.span,
                    named: false,
                };
                if let Some(index) = add(d, &mut stacks, spec) {
                    stacks
                        .placed
                        .insert(entry.value.clone(), (index, entry.span));
                }
            }
        }
        Placement::Named(named) => {
            let known: Vec<&str> = entries.iter().map(|e| e.value.as_str()).collect();
            for (stack, groups) in named {
                if !check_stack_name(d, stack) {
                    continue;
                }
                let spec = StackSpec {
                    name: stack.value.clone(),
                    span: stack.span,
                    named: true,
                };
                let Some(index) = add(d, &mut stacks, spec) else {
                    continue;
                };
                for group in groups {
                    if let Some((other, at)) = stacks.placed.get(&group.value) {
                        let other = &stacks.specs[*other].name;
                        let message = format!(
                            "node group `{}` is placed in two stacks, `{other}` and `{}`",
                            group.value, stack.value
                        );
                        let help = format!(
                            "it is listed for `{other}` at line {}; a node group lives in one stack",
                            at.line
                        );
                        d.error(group.span, message).help = Some(help);
                        continue;
                    }
                    if !known.contains(&group.value.as_str()) {
                        let message = format!(
                            "stack `{}` lists `{}`, which is not a node group",
                            stack.value, group.value
                        );
                        let diagnostic = d.error(group.span, message);
                        diagnostic.help = Some(crate::suggest::did_you_mean_or_list(
                            &group.value,
                            &known,
                            "the node groups are",
                        ));
                        continue;
                    }
                    stacks
                        .placed
                        .insert(group.value.clone(), (index, group.span));
                }
            }
        }
    }
    stacks
}

fn decode_suppressions(d: &mut Decoder, node: &Node) -> Vec<Suppression> {
    let mut out = Vec::new();
    for item in d.list("suppressions", node) {
        let Some(mut f) = d.fields("suppressions[]", item, SUPPRESSION_FIELDS) else {
            continue;
        };
        let id = f.get("id").and_then(|n| d.string("suppressions[].id", n));
        let reason = f
            .get("reason")
            .and_then(|n| d.string("suppressions[].reason", n));
        f.finish(d, "a suppression");
        // A field given a value that did not decode was reported there.
        let (id_given, reason_given) = (f.given("id"), f.given("reason"));
        match (id, reason) {
            (Some(_), None) if reason_given => {}
            (Some(id), Some(reason)) if !reason.value.trim().is_empty() => out.push(Suppression {
                id,
                reason: reason.value,
            }),
            (Some(id), _) => {
                let message = format!("suppression of `{}` has no reason", id.value);
                d.error(id.span, message).help =
                    Some("say why the finding is accepted: `reason: ...`".into());
            }
            (None, _) if id_given => {}
            (None, _) => missing(
                d,
                first_column(item.span),
                "id",
                "suppression",
                "the finding ID, e.g. `id: W5002`",
            ),
        }
    }
    out
}

/// One template parameter may serve several fields only when they need the
/// same parameter type.
fn check_parameters(d: &mut Decoder, cluster: &Cluster, groups: &[NodeGroup]) {
    let mut seen: HashMap<String, (&'static str, Span)> = HashMap::new();
    let mut uses: Vec<(String, &'static str, Span)> = Vec::new();
    let string = "String";
    for (source, kind) in [
        (&cluster.name, string),
        (&cluster.endpoint, string),
        (&cluster.certificate_authority, string),
        (&cluster.service_ipv4_cidr, string),
        (
            &cluster.control_plane_security_group,
            "AWS::EC2::SecurityGroup::Id",
        ),
        (&cluster.vpc, "AWS::EC2::VPC::Id"),
    ] {
        if let Source::Parameter { name, .. } = &source.value {
            uses.push((name.clone(), kind, source.span));
        }
    }
    for group in groups {
        if let Subnets::Parameter { name, .. } = &group.subnets.value {
            uses.push((
                name.clone(),
                "List<AWS::EC2::Subnet::Id>",
                group.subnets.span,
            ));
        }
    }
    for (name, kind, span) in uses {
        if name.starts_with(IMAGE_PARAMETER_PREFIX) {
            let message = format!("parameter name `{name}` is reserved for node images");
            d.error(span, message).help =
                Some("choose a name that does not start with `ImageId`".into());
            continue;
        }
        if name == SHARED_STACK_PARAMETER {
            let message = format!("parameter name `{name}` is reserved");
            d.error(span, message).help = Some(
                "a node group stack names its blueprint's main stack with it; choose another name"
                    .into(),
            );
            continue;
        }
        match seen.get(&name) {
            Some((other, first)) if *other != kind => {
                let message = format!(
                    "parameter `{name}` is used as {kind} here and as {other} at line {}",
                    first.line
                );
                d.error(span, message).help =
                    Some("a parameter has one type; give each use its own name".into());
            }
            Some(_) => {}
            None => {
                seen.insert(name, (kind, span));
            }
        }
    }
}

/// The first character of a span: a mapping's own span runs to its end.
fn first_column(span: Span) -> Span {
    Span { len: 1, ..span }
}

fn missing(d: &mut Decoder, span: Span, field: &str, context: &str, help: &str) {
    let message = format!("missing field `{field}` in {context}");
    let diagnostic = d.error(span, message);
    diagnostic.help = Some(format!("add {help}"));
}

/// Checks `apiVersion` and `kind`; false when the file is not a blueprint
/// this version reads.
fn check_header(d: &mut Decoder, root: &Node, top: &mut super::decode::Fields<'_>) -> bool {
    let mut ok = true;
    for (field, expected) in [("apiVersion", API_VERSION), ("kind", KIND)] {
        match top.get(field) {
            Some(node) => match d.string(field, node) {
                Some(value) if value.value != expected => {
                    let message = format!(
                        "`{field}` is `{}`; this version of eksynth reads `{expected}`",
                        value.value
                    );
                    d.error(value.span, message).help =
                        Some(format!("write `{field}: {expected}`"));
                    ok = false;
                }
                Some(_) => {}
                None => ok = false,
            },
            None => missing(
                d,
                first_column(root.span),
                field,
                "the blueprint",
                &format!("`{field}: {expected}` at the top"),
            ),
        }
    }
    ok
}

fn decode_source(d: &mut Decoder, field: &str, node: &Node) -> Option<Located<Source>> {
    if let Value::Map(_) = node.value {
        let mut fields = d.fields(field, node, SOURCE_FIELDS)?;
        let parameter = fields
            .get("parameter")
            .and_then(|n| d.string(&format!("{field}.parameter"), n));
        let default = fields
            .get("default")
            .and_then(|n| d.string_or_number(&format!("{field}.default"), n));
        let import = fields
            .get("import")
            .and_then(|n| d.string(&format!("{field}.import"), n));
        fields.finish(d, &format!("`{field}`"));
        return match (parameter, import) {
            (Some(name), None) => {
                if !name.value.chars().all(|c| c.is_ascii_alphanumeric())
                    || name.value.is_empty()
                    || name.value.len() > 255
                {
                    let message = format!(
                        "parameter name `{}` is not a valid CloudFormation logical ID",
                        name.value
                    );
                    d.error(name.span, message).help =
                        Some("use letters and digits only, e.g. `ClusterName`".into());
                    return None;
                }
                Some(Located::new(
                    Source::Parameter {
                        name: name.value,
                        default: default.map(|v| v.value),
                    },
                    node.span,
                ))
            }
            (None, Some(export)) => Some(Located::new(Source::Import(export.value), node.span)),
            (Some(_), Some(_)) => {
                d.error(
                    node.span,
                    format!("`{field}` has both `parameter` and `import`"),
                )
                .help = Some("a value comes from either a parameter or an import".into());
                None
            }
            (None, None) => {
                d.error(
                    node.span,
                    format!("`{field}` needs `parameter: Name` or `import: ExportName`"),
                )
                .help = Some("or write the value itself as a string".into());
                None
            }
        };
    }
    d.string_or_number(field, node)
        .map(|s| Located::new(Source::Literal(s.value), s.span))
}

fn decode_cluster(d: &mut Decoder, node: &Node, at: Span) -> Option<Cluster> {
    let mut fields = d.fields("cluster", node, CLUSTER_FIELDS)?;
    let mut required = |d: &mut Decoder, field: &str, help: &str| -> Option<Located<Source>> {
        match fields.get(field) {
            Some(value) => decode_source(d, &format!("cluster.{field}"), value),
            None => {
                missing(d, at, field, "`cluster`", help);
                None
            }
        }
    };
    let name = required(d, "name", "the cluster name, e.g. `name: prod`");
    let endpoint = required(
        d,
        "endpoint",
        "the API server endpoint (`aws eks describe-cluster --query cluster.endpoint`)",
    );
    let certificate_authority = required(
        d,
        "certificateAuthority",
        "the certificate authority data (`aws eks describe-cluster --query cluster.certificateAuthority.data`)",
    );
    let service_ipv4_cidr = required(
        d,
        "serviceIpv4Cidr",
        "the service CIDR, e.g. `serviceIpv4Cidr: 10.100.0.0/16`",
    );
    let control_plane_security_group = required(
        d,
        "controlPlaneSecurityGroup",
        "the control plane security group ID, e.g. `controlPlaneSecurityGroup: sg-0123456789abcdef0`",
    );
    let vpc = required(d, "vpc", "the VPC ID, e.g. `vpc: vpc-0123456789abcdef0`");
    let version = match fields.get("kubernetesVersion") {
        Some(value) => decode_version(d, value),
        None => {
            missing(
                d,
                at,
                "kubernetesVersion",
                "`cluster`",
                "the cluster's Kubernetes version, e.g. `kubernetesVersion: \"1.33\"`",
            );
            None
        }
    };
    let authentication_mode = match fields.get("authenticationMode") {
        Some(value) => d
            .choice("cluster.authenticationMode", value, AUTHENTICATION_MODES)
            .map(|m| m.value),
        None => Some(AuthenticationMode::ApiAndConfigMap),
    };
    let prefix_delegation =
        opt_bool(d, &mut fields, "cluster.", "prefixDelegation").is_some_and(|p| p.value);
    let node_access = decode_node_access(d, &mut fields, authentication_mode);
    let node_access_span = ["awsAuthProvider", "nodeAccess", "authenticationMode"]
        .iter()
        .find_map(|field| fields.key_span(field));
    fields.finish(d, "`cluster`");
    if let Some(endpoint) = &endpoint {
        check_literal(d, endpoint, "cluster.endpoint", |v| {
            (!v.starts_with("https://")).then(|| "must be an https:// URL".to_string())
        });
    }
    if let Some(cidr) = &service_ipv4_cidr {
        check_literal(d, cidr, "cluster.serviceIpv4Cidr", |v| {
            rules::service_cidr_dns_ip(v).err()
        });
    }
    let name = name?;
    let endpoint = endpoint?;
    let certificate_authority = certificate_authority?;
    let service_ipv4_cidr = service_ipv4_cidr?;
    check_literal(d, &name, "cluster.name", |v| {
        let ok = !v.is_empty()
            && v.len() <= 100
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        (!ok).then(|| {
            "must be 1 to 100 letters, digits, `-` or `_`, starting with a letter or digit"
                .to_string()
        })
    });
    check_literal(
        d,
        &certificate_authority,
        "cluster.certificateAuthority",
        |v| {
            let ok = !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='));
            (!ok).then(|| "must be base64 data".to_string())
        },
    );
    Some(Cluster {
        node_access_span: node_access_span.unwrap_or(name.span),
        name,
        kubernetes_version: version?,
        endpoint,
        certificate_authority,
        service_ipv4_cidr,
        control_plane_security_group: control_plane_security_group?,
        vpc: vpc?,
        authentication_mode: authentication_mode?,
        node_access: node_access?,
        prefix_delegation,
    })
}

/// Access entries in the API modes, aws-auth in `CONFIG_MAP` mode or when
/// asked for; the provider is inline unless a service token is given.
fn decode_node_access(
    d: &mut Decoder,
    fields: &mut super::decode::Fields<'_>,
    mode: Option<AuthenticationMode>,
) -> Option<NodeAccess> {
    let asked = fields
        .get("nodeAccess")
        .and_then(|n| d.choice("cluster.nodeAccess", n, NODE_ACCESS));
    let provider_node = fields.get("awsAuthProvider");
    let mode = mode?;
    let aws_auth = match (&asked, mode) {
        (Some(choice), AuthenticationMode::ConfigMap) if !choice.value => {
            d.error(
                choice.span,
                "access entries need the `API` or `API_AND_CONFIG_MAP` authentication mode",
            )
            .help = Some("use `nodeAccess: awsAuth` for a `CONFIG_MAP` cluster".into());
            return None;
        }
        (Some(choice), AuthenticationMode::Api) if choice.value => {
            d.error(
                choice.span,
                "a cluster in `API` mode does not read the aws-auth ConfigMap",
            )
            .help = Some(
                "use `nodeAccess: accessEntries`, or switch the cluster to `API_AND_CONFIG_MAP`"
                    .into(),
            );
            return None;
        }
        (Some(choice), _) => choice.value,
        (None, mode) => mode == AuthenticationMode::ConfigMap,
    };
    if !aws_auth {
        if let Some(node) = provider_node {
            d.error(
                node.span,
                "`awsAuthProvider` is set but nodes are authorized with access entries",
            )
            .help = Some("remove it, or set `nodeAccess: awsAuth`".into());
        }
        return Some(NodeAccess::AccessEntries);
    }
    let Some(node) = provider_node else {
        return Some(NodeAccess::AwsAuth(AwsAuthProvider::Inline {
            subnets: Vec::new(),
            security_groups: Vec::new(),
            reserved_concurrency: None,
            log_retention_days: 30,
        }));
    };
    let mut f = d.fields("cluster.awsAuthProvider", node, PROVIDER_FIELDS)?;
    let token = f
        .get("serviceToken")
        .and_then(|n| decode_source(d, "cluster.awsAuthProvider.serviceToken", n));
    let p = "cluster.awsAuthProvider.";
    let subnets = opt_strings(d, &mut f, p, "subnets");
    let security_groups = opt_strings(d, &mut f, p, "securityGroups");
    let reserved = opt_u32(d, &mut f, p, "reservedConcurrency", 1, 1000);
    let retention = f.get("logRetentionDays").and_then(|n| {
        let days = d.integer("cluster.awsAuthProvider.logRetentionDays", n, 1, 3653)?;
        const ALLOWED: &[i64] = &[1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];
        if !ALLOWED.contains(&days.value) {
            d.error(days.span, format!("CloudWatch Logs cannot keep logs for {} days", days.value)).help =
                Some("use 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653".into());
            return None;
        }
        Some(days.value as u32)
    });
    f.finish(d, "`cluster.awsAuthProvider`");
    if let Some(token) = token {
        for (field, set) in [
            ("subnets", subnets.is_some()),
            ("securityGroups", security_groups.is_some()),
            ("reservedConcurrency", reserved.is_some()),
        ] {
            if set {
                d.error(token.span, format!("`serviceToken` names an existing provider; `{field}` configures one made here")).help =
                    Some("keep one of them".into());
            }
        }
        return Some(NodeAccess::AwsAuth(AwsAuthProvider::Existing(token.value)));
    }
    let subnets = subnets.map(|s| s.value).unwrap_or_default();
    let security_groups = security_groups.map(|s| s.value).unwrap_or_default();
    if subnets.is_empty() != security_groups.is_empty() {
        d.error(
            node.span,
            "the provider's VPC settings need both `subnets` and `securityGroups`",
        );
    }
    Some(NodeAccess::AwsAuth(AwsAuthProvider::Inline {
        subnets,
        security_groups,
        reserved_concurrency: reserved.map(|r| r.value),
        log_retention_days: retention.unwrap_or(30),
    }))
}

fn check_literal(
    d: &mut Decoder,
    value: &Located<Source>,
    field: &str,
    problem: impl Fn(&str) -> Option<String>,
) {
    if let Source::Literal(text) = &value.value
        && let Some(problem) = problem(text)
    {
        d.error(value.span, format!("`{field}` `{text}` {problem}"));
    }
}

fn decode_version(d: &mut Decoder, node: &Node) -> Option<Located<KubernetesVersion>> {
    let text = d.string_or_number("cluster.kubernetesVersion", node)?;
    let parsed = text
        .value
        .split_once('.')
        .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)));
    match parsed {
        Some((1, minor)) if (23..=99).contains(&minor) => Some(Located::new(
            KubernetesVersion { major: 1, minor },
            text.span,
        )),
        _ => {
            let message = format!(
                "`cluster.kubernetesVersion` `{}` is not a Kubernetes version EKS runs",
                text.value
            );
            d.error(text.span, message).help =
                Some("write it quoted as `major.minor`, e.g. `\"1.33\"`".into());
            None
        }
    }
}

fn opt_u32(
    d: &mut Decoder,
    fields: &mut super::decode::Fields<'_>,
    prefix: &str,
    field: &str,
    min: i64,
    max: i64,
) -> Opt<u32> {
    let node = fields.get(field)?;
    d.integer(&format!("{prefix}{field}"), node, min, max)
        .map(|v| Located::new(v.value as u32, v.span))
}

fn opt_bool(
    d: &mut Decoder,
    fields: &mut super::decode::Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<bool> {
    let node = fields.get(field)?;
    d.boolean(&format!("{prefix}{field}"), node)
}

fn opt_string(
    d: &mut Decoder,
    fields: &mut super::decode::Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<String> {
    let node = fields.get(field)?;
    d.string(&format!("{prefix}{field}"), node)
}

fn opt_strings(
    d: &mut Decoder,
    fields: &mut super::decode::Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<Vec<String>> {
    let node = fields.get(field)?;
    let items = d.string_list(&format!("{prefix}{field}"), node)?;
    Some(Located::new(
        items.into_iter().map(|s| s.value).collect(),
        node.span,
    ))
}

fn decode_group_spec(d: &mut Decoder, node: &Node, context: &str) -> GroupSpec {
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
    spec.ami_family = f
        .get("amiFamily")
        .and_then(|n| d.choice("amiFamily", n, &AmiFamily::ALL));
    spec.ami = f.get("ami").and_then(|n| {
        let text = d.string("ami", n)?;
        if text.value == "recommended" {
            return Some(Located::new(Ami::Recommended, text.span));
        }
        let ok = text.value.strip_prefix("ami-").is_some_and(|hex| {
            (hex.len() == 8 || hex.len() == 17) && hex.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        });
        if !ok {
            let message = format!("`ami` `{}` is neither `recommended` nor an AMI ID", text.value);
            d.error(text.span, message).help =
                Some("write `recommended` for the EKS-optimized image, or a pinned ID like `ami-0123456789abcdef0`".into());
            return None;
        }
        Some(Located::new(Ami::Pinned(text.value), text.span))
    });
    spec.instance_type = f
        .get("instanceType")
        .and_then(|n| d.string("instanceType", n));
    spec.instance_types = f.get("instanceTypes").and_then(|n| {
        d.string_list("instanceTypes", n)
            .map(|types| Located::new(types, n.span))
    });
    spec.min_size = opt_u32(d, &mut f, "", "minSize", 0, 10_000);
    spec.max_size = opt_u32(d, &mut f, "", "maxSize", 1, 10_000);
    spec.desired_capacity = opt_u32(d, &mut f, "", "desiredCapacity", 0, 10_000);
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
    spec.max_pods = opt_u32(d, &mut f, "", "maxPods", 1, 737);
    if let Some(n) = f.get("kubelet") {
        spec.kubelet = decode_kubelet(d, n);
    }
    if let Some(n) = f.get("rootVolume") {
        spec.root_volume = decode_volume(d, n);
    }
    if let Some(n) = f.get("imds") {
        spec.imds = decode_imds(d, n);
    }
    spec.pre_bootstrap_commands = opt_strings(d, &mut f, "", "preBootstrapCommands");
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
    }
    spec.security_groups = opt_strings(d, &mut f, "", "securityGroups");
    spec.key_name = opt_string(d, &mut f, "", "keyName");
    spec.detailed_monitoring = opt_bool(d, &mut f, "", "detailedMonitoring");
    spec.cluster_autoscaler = opt_bool(d, &mut f, "", "clusterAutoscaler");
    if let Some(n) = f.get("updatePolicy") {
        spec.update = decode_update(d, n);
    }
    spec.signal_timeout = f
        .get("signalTimeout")
        .and_then(|n| duration(d, "signalTimeout", n, 60, 43_200));
    spec.signal_client = f
        .get("signalClient")
        .and_then(|n| d.choice("signalClient", n, SIGNAL_CLIENTS));
    spec.per_az = opt_bool(d, &mut f, "", "perAz");
    spec.capacity_type = f
        .get("capacityType")
        .and_then(|n| d.choice("capacityType", n, CAPACITY_TYPES));
    spec.distribution = f
        .get("instancesDistribution")
        .and_then(|n| decode_distribution(d, n));
    spec.bootstrap_arguments = opt_string(d, &mut f, "", "bootstrapArguments");
    spec.lifecycle = f.get("lifecycle").and_then(|n| decode_lifecycle(d, n));
    spec.max_unavailable = f
        .get("updateConfig")
        .and_then(|n| decode_update_config(d, n));
    spec.force_update_enabled = opt_bool(d, &mut f, "", "forceUpdateEnabled");
    spec.release_version = opt_string(d, &mut f, "", "releaseVersion");
    spec.ami_type = opt_string(d, &mut f, "", "amiType");
    spec.capacity_reservation_id =
        opt_string(d, &mut f, "", "capacityReservationId").and_then(|id| {
            let ok = id.value.strip_prefix("cr-").is_some_and(|hex| {
                hex.len() == 17
                    && hex
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            });
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
    spec.written = GROUP_FIELDS
        .iter()
        .filter_map(|field| f.key_span(field).map(|span| (*field, span)))
        .collect();
    spec.reported = f.finish(d, &context_name);
    spec.reported
        .extend(GROUP_FIELDS.iter().filter(|field| f.given(field)));
    spec
}

fn decode_distribution(d: &mut Decoder, node: &Node) -> Opt<DistributionSpec> {
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
            .map(|c| c.value.to_string()),
        capacity_rebalance: opt_bool(d, &mut f, p, "capacityRebalance").map(|v| v.value),
    };
    f.finish(d, "`instancesDistribution`");
    Some(Located::new(spec, node.span))
}

fn decode_lifecycle(d: &mut Decoder, node: &Node) -> Opt<Lifecycle> {
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
        termination_hook: opt_u32(d, &mut f, p, "terminationHookTimeout", 30, 7_200).map(|v| v.value),
        max_instance_lifetime: opt_u32(d, &mut f, p, "maxInstanceLifetime", 86_400, 31_536_000).map(|v| v.value),
        metrics_collection: opt_bool(d, &mut f, p, "metricsCollection").is_some_and(|v| v.value),
        health_check_grace_period: opt_u32(d, &mut f, p, "healthCheckGracePeriod", 0, 7_200).map(|v| v.value),
        placement_group: opt_string(d, &mut f, p, "placementGroup").map(|v| v.value),
        capacity_reservation: opt_string(d, &mut f, p, "capacityReservation").and_then(|v| {
            let ok = v.value == "open" || v.value == "none" || v.value.starts_with("cr-");
            if !ok {
                d.error(v.span, format!("`lifecycle.capacityReservation` cannot be `{}`", v.value)).help =
                    Some("write `open`, `none`, or a capacity reservation ID like `cr-0123456789abcdef0`".into());
            }
            ok.then_some(v.value)
        }),
    };
    f.finish(d, "`lifecycle`");
    Some(Located::new(lifecycle, node.span))
}

fn decode_update_config(d: &mut Decoder, node: &Node) -> Opt<MaxUnavailable> {
    let mut f = d.fields("updateConfig", node, UPDATE_CONFIG_FIELDS)?;
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
    match (count, percentage) {
        (Some(count), None) => Some(Located::new(MaxUnavailable::Count(count.value), count.span)),
        (None, Some(pct)) => Some(Located::new(
            MaxUnavailable::Percentage(pct.value),
            pct.span,
        )),
        (Some(count), Some(_)) => {
            d.error(
                count.span,
                "`updateConfig` sets both `maxUnavailable` and `maxUnavailablePercentage`",
            )
            .help = Some("keep one of them".into());
            None
        }
        (None, None) => None,
    }
}

fn duration(d: &mut Decoder, field: &str, node: &Node, min: u64, max: u64) -> Opt<String> {
    let text = d.string(field, node)?;
    match rules::iso_duration_seconds(&text.value) {
        Some(seconds) if (min..=max).contains(&seconds) => Some(text),
        Some(seconds) => {
            let message =
                format!("`{field}` is {seconds} seconds; it must be between {min} and {max}");
            d.error(text.span, message);
            None
        }
        None => {
            let message = format!("`{field}` `{}` is not an ISO 8601 duration", text.value);
            d.error(text.span, message).help = Some("write it like `PT15M` or `PT1H30M`".into());
            None
        }
    }
}

fn decode_subnets(d: &mut Decoder, node: &Node) -> Opt<Subnets> {
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

fn check_label(d: &mut Decoder, key: &Located<String>, value: &Located<String>) {
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

fn decode_taint(d: &mut Decoder, node: &Node) -> Option<Located<Taint>> {
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

fn decode_kubelet(d: &mut Decoder, node: &Node) -> Vec<(Located<String>, serde_json::Value)> {
    let Some(mut f) = d.fields("kubelet", node, KUBELET_FIELDS) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for field in KUBELET_FIELDS {
        let Some(value) = f.get(field) else { continue };
        let path = format!("kubelet.{field}");
        let json = match *field {
            "imageGCHighThresholdPercent" | "imageGCLowThresholdPercent" => {
                d.integer(&path, value, 0, 100).map(|v| v.value.into())
            }
            "podPidsLimit" => d
                .integer(&path, value, -1, 4_194_304)
                .map(|v| v.value.into()),
            "containerLogMaxFiles" => d.integer(&path, value, 2, 1000).map(|v| v.value.into()),
            "serializeImagePulls" => d.boolean(&path, value).map(|v| v.value.into()),
            "cpuManagerPolicy" => d
                .name_choice(&path, value, CPU_MANAGER_POLICIES)
                .map(|v| v.value.into()),
            "containerLogMaxSize" => d.string(&path, value).map(|v| v.value.into()),
            _ => {
                let pairs = d.string_map(&path, value);
                Some(serde_json::Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.value, v.value.into()))
                        .collect(),
                ))
            }
        };
        if let Some(json) = json {
            out.push((Located::new(field.to_string(), value.span), json));
        }
    }
    f.finish(d, "`kubelet`");
    let percent = |name: &str| {
        out.iter()
            .find(|(k, _)| k.value == name)
            .and_then(|(k, v)| Some((k.span, v.as_i64()?)))
    };
    if let (Some((_, high)), Some((span, low))) = (
        percent("imageGCHighThresholdPercent"),
        percent("imageGCLowThresholdPercent"),
    ) && low >= high
    {
        let message = format!(
            "`kubelet.imageGCLowThresholdPercent` ({low}) must be lower than `imageGCHighThresholdPercent` ({high})"
        );
        d.error(span, message);
    }
    out
}

fn decode_volume(d: &mut Decoder, node: &Node) -> VolumeSpec {
    let Some(mut f) = d.fields("rootVolume", node, VOLUME_FIELDS) else {
        return VolumeSpec::default();
    };
    let spec = VolumeSpec {
        size: opt_u32(d, &mut f, "rootVolume.", "size", 1, 65_536),
        volume_type: f.get("type").and_then(|n| {
            d.name_choice("rootVolume.type", n, VOLUME_TYPES)
                .map(|c| Located::new(c.value.to_string(), c.span))
        }),
        iops: opt_u32(d, &mut f, "rootVolume.", "iops", 100, 256_000),
        throughput: opt_u32(d, &mut f, "rootVolume.", "throughput", 125, 2_000),
        encrypted: opt_bool(d, &mut f, "rootVolume.", "encrypted"),
        kms_key_id: opt_string(d, &mut f, "rootVolume.", "kmsKeyId"),
    };
    f.finish(d, "`rootVolume`");
    spec
}

fn decode_imds(d: &mut Decoder, node: &Node) -> ImdsSpec {
    let Some(mut f) = d.fields("imds", node, IMDS_FIELDS) else {
        return ImdsSpec::default();
    };
    let tokens = f
        .get("httpTokens")
        .and_then(|n| d.choice("imds.httpTokens", n, HTTP_TOKENS));
    if let Some(tokens) = &tokens
        && !tokens.value
    {
        d.warning(tokens.span, "`imds.httpTokens: optional` allows IMDSv1, which SSRF bugs can exploit to steal node credentials")
                .help = Some("keep the default `required` unless an agent on the node cannot use IMDSv2".into());
    }
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
    };
    f.finish(d, "`imds`");
    spec
}

fn decode_efs(d: &mut Decoder, node: &Node) -> Option<EfsMount> {
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

fn decode_iam(d: &mut Decoder, node: &Node) -> IamSpec {
    let Some(mut f) = d.fields("iam", node, IAM_FIELDS) else {
        return IamSpec::default();
    };
    let spec = IamSpec {
        cni_uses_irsa: opt_bool(d, &mut f, "iam.", "cniUsesIrsa"),
        ssm_managed_instance: opt_bool(d, &mut f, "iam.", "ssmManagedInstance"),
        extra_managed_policies: opt_strings(d, &mut f, "iam.", "extraManagedPolicies"),
        role_name: opt_string(d, &mut f, "iam.", "roleName"),
        instance_profile_arn: opt_string(d, &mut f, "iam.", "instanceProfileArn"),
    };
    f.finish(d, "`iam`");
    if let Some(policies) = &spec.extra_managed_policies {
        for policy in &policies.value {
            if !policy.starts_with("arn:") {
                d.error(policies.span, format!("`{policy}` is not a policy ARN"))
                    .help = Some(
                    "write the full ARN; `arn:${AWS::Partition}:` is accepted for portability"
                        .into(),
                );
            }
        }
    }
    spec
}

fn decode_update(d: &mut Decoder, node: &Node) -> UpdateSpec {
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

/// Node group names become logical IDs (`staging-1` → `Staging1`) and tag
/// values, so they are restricted to what both accept.
fn check_group_name(d: &mut Decoder, name: &Located<String>) -> Option<String> {
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

/// EKS node group names: 1 to 63 letters, digits, `-` and `_`, starting
/// with a letter or digit (`CreateNodegroup`'s rule).
fn check_nodegroup_name(d: &mut Decoder, name: Located<String>) -> Opt<String> {
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

/// Applies defaults and checks the rules that span several fields.
fn resolve_group(
    d: &mut Decoder,
    cluster: &Cluster,
    span: Span,
    spec: GroupSpec,
    logical_id: String,
    is_managed: bool,
) -> Option<NodeGroup> {
    let name = spec.name.clone()?;
    let errors_before = d.diagnostics.iter().filter(|x| x.is_error()).count();
    let (wrong, kind, other) = if is_managed {
        (SELF_MANAGED_ONLY, "managed node groups", "`nodeGroups`")
    } else {
        (
            MANAGED_ONLY,
            "self-managed node groups",
            "`managedNodeGroups`",
        )
    };
    for (field, at) in spec
        .written
        .iter()
        .filter(|(field, _)| wrong.contains(field))
    {
        let message = format!("`{field}` does not apply to {kind}");
        d.error(*at, message).help = Some(format!("it belongs to groups in {other}"));
    }
    let ami_family = spec
        .ami_family
        .as_ref()
        .map_or(AmiFamily::AmazonLinux2023, |f| f.value);
    if ami_family == AmiFamily::AmazonLinux2
        && cluster.kubernetes_version.value
            >= (KubernetesVersion {
                major: 1,
                minor: 33,
            })
    {
        let at = spec.ami_family.as_ref().map_or(name.span, |f| f.span);
        let message = format!(
            "`AmazonLinux2` has no EKS-optimized AMI for Kubernetes {}",
            cluster.kubernetes_version.value
        );
        d.error(at, message).help =
            Some("AL2 images end with Kubernetes 1.32; use `amiFamily: AmazonLinux2023`".into());
    }

    let instance_types: Vec<Located<String>> = match (&spec.instance_type, &spec.instance_types) {
        (Some(single), None) => vec![single.clone()],
        (None, Some(list)) if !list.value.is_empty() => list.value.clone(),
        (None, Some(list)) => {
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
        (None, None) if spec.reported.iter().any(|f| f.starts_with("instanceType")) => Vec::new(),
        (None, None) => {
            d.error(
                name.span,
                format!("node group `{}` has no instance type", name.value),
            )
            .help = Some("add `instanceType: m6i.large` (or set it in `defaults`)".into());
            Vec::new()
        }
    };
    if instance_types.len() > 20 {
        d.error(instance_types[20].span, "more than 20 instance types")
            .help = Some("an Auto Scaling group accepts at most 20 overrides".into());
    }
    let mut arch = None;
    let mut accelerator = Accelerator::None;
    for instance_type in &instance_types {
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
    let arch = arch.map_or(Arch::X86_64, |(arch, _)| arch);
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

    let subnets = match spec.subnets.clone() {
        Some(subnets) => subnets,
        None if spec.reported.contains(&"subnets") => {
            Located::new(Subnets::List(Vec::new()), name.span)
        }
        None => {
            d.error(name.span, format!("node group `{}` has no `subnets`", name.value)).help =
                Some("add `subnets: [subnet-...]`, `subnets: {parameter: Subnets}`, or set them in `defaults`".into());
            Located::new(Subnets::List(Vec::new()), name.span)
        }
    };

    let root = &spec.root_volume;
    let volume_type = root
        .volume_type
        .as_ref()
        .map_or("gp3".to_string(), |t| t.value.clone());
    let volume_limits = crate::ebs::limits(&volume_type);
    let takes_iops = volume_limits.is_some_and(|l| l.iops.is_some());
    let takes_throughput = volume_limits.is_some_and(|l| l.throughput.is_some());
    if let Some(iops) = &root.iops
        && !takes_iops
    {
        d.error(
            iops.span,
            format!("`rootVolume.iops` cannot be set for {volume_type} volumes"),
        )
        .help = Some("IOPS are set only for gp3, io1 and io2".into());
    }
    if root.iops.is_none()
        && volume_limits.is_some_and(|l| l.iops.is_some_and(|i| i.default.is_none()))
    {
        let at = root.volume_type.as_ref().map_or(name.span, |t| t.span);
        d.error(at, format!("{volume_type} volumes need `rootVolume.iops`"));
    }
    if let Some(throughput) = &root.throughput
        && !takes_throughput
    {
        d.error(
            throughput.span,
            "`rootVolume.throughput` can only be set for gp3 volumes",
        );
    }
    // Sizes, IOPS and throughput against the type and each other, each
    // problem at the setting it is about (or the type, for a default).
    let size_gib = root.size.as_ref().map_or(20, |s| s.value);
    let volume = crate::ebs::Volume {
        volume_type: &volume_type,
        size: Some(u64::from(size_gib)),
        iops: root
            .iops
            .as_ref()
            .filter(|_| takes_iops)
            .map(|v| u64::from(v.value)),
        throughput: root
            .throughput
            .as_ref()
            .filter(|_| takes_throughput)
            .map(|v| u64::from(v.value)),
    };
    for (setting, problem) in crate::ebs::problems(&volume) {
        let (field, at) = match setting {
            crate::ebs::Setting::Size => ("size", root.size.as_ref().map(|v| v.span)),
            crate::ebs::Setting::Iops => ("iops", root.iops.as_ref().map(|v| v.span)),
            crate::ebs::Setting::Throughput => {
                ("throughput", root.throughput.as_ref().map(|v| v.span))
            }
        };
        let at = at
            .or_else(|| root.volume_type.as_ref().map(|t| t.span))
            .unwrap_or(name.span);
        d.error(at, format!("`rootVolume.{field}`: {problem}")).help =
            Some("EC2 limits each volume type's size, IOPS per GiB and throughput per IOPS".into());
    }
    let encrypted = root.encrypted.as_ref().is_none_or(|e| e.value);
    if let Some(flag) = &root.encrypted
        && !flag.value
    {
        d.warning(flag.span, "the root volume is not encrypted").help =
                Some("leave `encrypted` at its default `true`; the account's default EBS key is used when no `kmsKeyId` is given".into());
        if let Some(key) = &root.kms_key_id {
            d.error(key.span, "`kmsKeyId` is set but `encrypted` is false");
        }
    }
    let root_volume = Volume {
        size_gib,
        volume_type,
        iops: root.iops.as_ref().map(|v| v.value),
        throughput: root.throughput.as_ref().map(|v| v.value),
        encrypted,
        kms_key_id: root.kms_key_id.as_ref().map(|k| k.value.clone()),
    };

    let signal_timeout = spec
        .signal_timeout
        .as_ref()
        .map_or("PT15M".to_string(), |t| t.value.clone());
    let initial = spec.desired_capacity.as_ref().map_or(min_size, |v| v.value);
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
    };

    let existing = match (&spec.iam.role_name, &spec.iam.instance_profile_arn) {
        (Some(role), profile) => Some(ExistingIdentity {
            role_name: role.value.clone(),
            instance_profile_arn: profile.as_ref().map(|p| p.value.clone()),
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

    let imds = Imds {
        tokens_required: spec.imds.tokens_required.as_ref().is_none_or(|t| t.value),
        hop_limit: spec.imds.hop_limit.as_ref().map_or(1, |h| h.value),
        block_pods: spec.imds.block_pods.as_ref().is_some_and(|b| b.value),
    };

    // The Auto Scaling group carries the Name and cluster tags, the user's
    // tags and, for the cluster autoscaler, two discovery tags and one tag
    // per label and taint; AWS allows 50.
    let autoscaler = spec.cluster_autoscaler.as_ref().is_none_or(|v| v.value);
    // A user's `Name` tag replaces the generated one.
    let user_name = spec.tags.iter().any(|(k, _)| k.value == tags::NAME);
    let tag_count = 2 - usize::from(user_name)
        + spec.tags.len()
        + if autoscaler {
            2 + spec.labels.len() + spec.taints.as_ref().map_or(0, |t| t.value.len())
        } else {
            0
        };
    if tag_count > 50 {
        let message = format!(
            "node group `{}` needs {tag_count} Auto Scaling group tags; AWS allows 50",
            name.value
        );
        d.error(name.span, message).help =
            Some("remove tags or labels, or set `clusterAutoscaler: false` to drop the node-template tags".into());
    }

    if let Some(max_pods) = &spec.max_pods {
        max_pods::check(d, max_pods, &instance_types, cluster.prefix_delegation);
    }
    check_bootstrap_limits(d, &spec, ami_family, family_at, is_managed);
    check_signal_client(d, &spec, ami_family);
    let capacity_type = spec
        .capacity_type
        .as_ref()
        .map_or(CapacityType::OnDemand, |c| c.value);
    let managed = if is_managed {
        if let (Some(ami_type), Some(ami)) = (&spec.ami_type, &spec.ami)
            && matches!(ami.value, Ami::Pinned(_))
        {
            d.error(
                ami_type.span,
                "`amiType` is set for a group with a custom AMI",
            )
            .help =
                Some("EKS takes the AMI from the launch template then; remove `amiType`".into());
        }
        if let Some(profile) = &spec.iam.instance_profile_arn {
            d.error(
                profile.span,
                "managed node groups make their own instance profile",
            )
            .help = Some("give `iam.roleName` only".into());
        }
        let capacity_reservation_id = check_capacity_block(d, &spec, &instance_types);
        Some(Managed {
            capacity_reservation_id,
            nodegroup_name: spec.nodegroup_name.clone().unwrap_or_else(|| name.clone()),
            capacity_type,
            max_unavailable: spec.max_unavailable.as_ref().map(|m| m.value),
            force_update_enabled: spec.force_update_enabled.as_ref().is_some_and(|f| f.value),
            release_version: spec.release_version.as_ref().map(|r| r.value.clone()),
            ami_type: spec.ami_type.as_ref().map(|a| a.value.clone()),
        })
    } else {
        if let Some(capacity) = &spec.capacity_type
            && capacity.value == CapacityType::CapacityBlock
        {
            d.error(capacity.span, "`CAPACITY_BLOCK` is for managed node groups")
                .help = Some("use `lifecycle.capacityReservation` for a self-managed group".into());
        }
        None
    };
    let distribution = if is_managed {
        None
    } else {
        let written = spec.distribution.as_ref().map(|d| d.value.clone());
        let spot = capacity_type == CapacityType::Spot;
        match (written, spot) {
            (None, false) => None,
            (written, _) => {
                let written = written.unwrap_or_default();
                let percentage =
                    written
                        .on_demand_percentage_above_base
                        .unwrap_or(if spot { 0 } else { 100 });
                let base = written.on_demand_base_capacity.unwrap_or(0);
                Some(InstancesDistribution {
                    on_demand_base_capacity: base,
                    on_demand_percentage_above_base: percentage,
                    spot_allocation_strategy: written
                        .spot_allocation_strategy
                        .unwrap_or_else(|| "price-capacity-optimized".to_string()),
                    capacity_rebalance: written.capacity_rebalance.unwrap_or(percentage < 100),
                })
            }
        }
    };
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
    if !is_managed {
        tags::check_self_managed(
            d,
            &spec.tags,
            &tags::Generated {
                cluster_name: &cluster.name.value,
                autoscaler,
                labels: &labels,
                taints: spec.taints.as_ref().map_or(&[], |t| t.value.as_slice()),
            },
        );
    }
    if let Some(per_az) = &spec.per_az
        && per_az.value
        && !matches!(subnets.value, Subnets::List(_))
    {
        d.error(per_az.span, "`perAz` needs `subnets` written as a list").help =
            Some("one group is made per listed subnet; a parameter or import does not say how many there are".into());
    }

    let errors_after = d.diagnostics.iter().filter(|x| x.is_error()).count();
    if errors_after > errors_before {
        return None;
    }
    Some(NodeGroup {
        stack: 0,
        identity: logical_id.clone(),
        logical_id,
        managed,
        ami_family,
        ami: spec.ami.map_or(Ami::Recommended, |a| a.value),
        arch,
        accelerator,
        distribution,
        lifecycle: spec.lifecycle.map(|l| l.value).unwrap_or_default(),
        bootstrap_arguments: spec.bootstrap_arguments.map(|b| b.value),
        per_az: spec.per_az.is_some_and(|p| p.value),
        instance_types,
        min_size,
        max_size,
        desired_capacity: spec.desired_capacity.map(|v| v.value),
        subnets,
        labels,
        taints: spec
            .taints
            .map(|t| t.value.into_iter().map(|t| t.value).collect())
            .unwrap_or_default(),
        max_pods: spec.max_pods.map(|v| v.value),
        kubelet_config: spec
            .kubelet
            .into_iter()
            .map(|(k, v)| (k.value, v))
            .collect(),
        root_volume,
        imds,
        pre_bootstrap_commands: spec
            .pre_bootstrap_commands
            .map(|c| c.value)
            .unwrap_or_default(),
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
            existing,
        },
        security_groups: spec.security_groups.map(|s| s.value).unwrap_or_default(),
        key_name: spec.key_name.map(|k| k.value),
        detailed_monitoring: spec.detailed_monitoring.is_some_and(|v| v.value),
        cluster_autoscaler: spec.cluster_autoscaler.is_none_or(|v| v.value),
        update,
        signal_timeout,
        signal_client: spec
            .signal_client
            .as_ref()
            .map_or(SignalClient::Image, |c| c.value),
        field_spans: spec.written.clone(),
        span,
        name,
    })
}

/// What each AMI family supports: architectures, accelerators and
/// bootstrap features.
fn check_family(
    d: &mut Decoder,
    spec: &GroupSpec,
    family: AmiFamily,
    at: Span,
    arch: Arch,
    accelerator: Accelerator,
    instance_types: &[Located<String>],
) {
    let first_type = instance_types.first().map_or(at, |t| t.span);
    let name = family.name();
    let unsupported = |d: &mut Decoder, what: &str| {
        let message = format!("`{name}` nodes cannot use {what}");
        d.error(first_type, message).help =
            Some("choose another instance type or AMI family".into());
    };
    match (family, arch, accelerator) {
        (AmiFamily::Windows(_), Arch::Arm64, _) => unsupported(d, "arm64 instance types"),
        (AmiFamily::Windows(_), _, Accelerator::Nvidia | Accelerator::Neuron) => {
            unsupported(d, "GPU or Neuron instance types")
        }
        (AmiFamily::AmazonLinux2, Arch::Arm64, Accelerator::Nvidia) => {
            unsupported(d, "arm64 GPU instance types")
        }
        (AmiFamily::AmazonLinux2023, Arch::Arm64, Accelerator::Neuron) => {
            unsupported(d, "arm64 Neuron instance types")
        }
        (AmiFamily::Bottlerocket, _, Accelerator::Neuron) => {
            unsupported(d, "Neuron instance types")
        }
        _ => {}
    }
    let shell_features: [(&str, bool); 4] = [
        (
            "preBootstrapCommands",
            spec.pre_bootstrap_commands
                .as_ref()
                .is_some_and(|c| !c.value.is_empty()),
        ),
        (
            "efsMounts",
            spec.efs_mounts
                .as_ref()
                .is_some_and(|m| !m.value.is_empty()),
        ),
        (
            "imds.blockPods",
            spec.imds.block_pods.as_ref().is_some_and(|b| b.value),
        ),
        ("bootstrapArguments", spec.bootstrap_arguments.is_some()),
    ];
    for (field, set) in shell_features {
        if !set {
            continue;
        }
        let refused = match family {
            AmiFamily::Bottlerocket => Some(
                "Bottlerocket has no shell user data; use its TOML settings or a bootstrap container",
            ),
            AmiFamily::Windows(_) if field != "preBootstrapCommands" => {
                Some("Windows nodes bootstrap with Start-EKSBootstrap.ps1")
            }
            AmiFamily::AmazonLinux2023 if field == "bootstrapArguments" => Some(
                "AL2023 has no bootstrap.sh; nodeadm reads `kubelet` settings and labels instead",
            ),
            _ => None,
        };
        if let Some(help) = refused {
            let field_at = spec
                .written
                .iter()
                .find(|(f, _)| field.starts_with(f))
                .map_or(at, |(_, s)| *s);
            d.error(field_at, format!("`{field}` is not supported on `{name}`"))
                .help = Some(help.to_string());
        }
    }
}

/// `signalClient: embedded` is for Amazon Linux on a custom image: the
/// EKS-optimized images carry `cfn-signal`, and Bottlerocket and Windows
/// signal with their own tools.
fn check_signal_client(d: &mut Decoder, spec: &GroupSpec, family: AmiFamily) {
    let Some(client) = &spec.signal_client else {
        return;
    };
    if client.value != SignalClient::Embedded {
        return;
    }
    if !matches!(family, AmiFamily::AmazonLinux2023 | AmiFamily::AmazonLinux2) {
        d.error(
            client.span,
            format!(
                "`signalClient: embedded` is not supported on `{}`",
                family.name()
            ),
        )
        .help = Some("Bottlerocket and Windows nodes signal with their own tools".into());
    } else if !matches!(spec.ami.as_ref().map(|a| &a.value), Some(Ami::Pinned(_))) {
        d.error(
            client.span,
            "`signalClient: embedded` needs a custom image (`ami: ami-...`)",
        )
        .help =
            Some("the EKS-optimized images carry cfn-signal; leave `signalClient` unset".into());
    }
}

/// A managed group on a capacity block launches into one reservation with
/// one instance type, which EKS takes from the launch template
/// (<https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html>).
/// Returns the reservation of a capacity-block group.
fn check_capacity_block(
    d: &mut Decoder,
    spec: &GroupSpec,
    instance_types: &[Located<String>],
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

/// What the bootstrap of each family and kind of group can carry.
fn check_bootstrap_limits(
    d: &mut Decoder,
    spec: &GroupSpec,
    family: AmiFamily,
    at: Span,
    is_managed: bool,
) {
    let name = family.name();
    let eks_ami =
        is_managed && !matches!(spec.ami.as_ref().map(|a| &a.value), Some(Ami::Pinned(_)));
    let field_at = |field: &str| {
        spec.written
            .iter()
            .find(|(f, _)| *f == field)
            .map_or(at, |(_, s)| *s)
    };
    // On an EKS AMI, EKS writes the bootstrap of AL2 and Windows nodes
    // itself, with its own `--max-pods` and kubelet arguments.
    let eks_bootstrap =
        eks_ami && matches!(family, AmiFamily::AmazonLinux2 | AmiFamily::Windows(_));
    if eks_bootstrap {
        let mut refused = vec![
            ("maxPods", spec.max_pods.is_some()),
            ("bootstrapArguments", spec.bootstrap_arguments.is_some()),
        ];
        if family.is_windows() {
            refused.push(("kubelet", !spec.kubelet.is_empty()));
        }
        for (field, set) in refused {
            if set {
                d.error(
                    field_at(field),
                    format!("`{field}` cannot be set on a managed `{name}` group on the EKS AMI"),
                )
                .help = Some(
                    "EKS writes that bootstrap itself; pin a custom `ami` to control it".into(),
                );
            }
        }
    }
    if family == AmiFamily::Bottlerocket
        && let Some((key, _)) = spec
            .kubelet
            .iter()
            .find(|(k, _)| k.value == "serializeImagePulls")
    {
        d.error(
            key.span,
            "Bottlerocket has no `serializeImagePulls` setting",
        )
        .help = Some("remove it; Bottlerocket pulls images with its own settings".into());
    }
    if family.is_windows() {
        for (key, value) in &spec.kubelet {
            if value.to_string().contains(char::is_whitespace) {
                d.error(key.span, format!("`kubelet.{}` contains whitespace, which Windows kubelet arguments cannot carry", key.value));
            }
        }
        if let Some(commands) = &spec.pre_bootstrap_commands
            && commands
                .value
                .iter()
                .any(|c| c.to_ascii_lowercase().contains("</powershell"))
        {
            d.error(commands.span, "a pre-bootstrap command contains `</powershell`, which ends Windows user data early");
        }
    }
}

/// A group with `perAz` becomes one group per subnet, named after the
/// subnet so that adding or removing a subnet leaves the others' names and
/// logical IDs alone.
fn expand_per_az(d: &mut Decoder, group: NodeGroup) -> Vec<NodeGroup> {
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
        one.name = name;
        one.logical_id = logical_id;
        one.subnets = Located::new(Subnets::List(vec![subnet.clone()]), group.subnets.span);
        out.push(one);
    }
    out
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64",
        Arch::Arm64 => "arm64",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(closest("instanceTyp", GROUP_FIELDS), Some("instanceType"));
    }
}
