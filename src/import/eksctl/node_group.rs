//! One eksctl node group (`nodeGroups[]`, self-managed, or
//! `managedNodeGroups[]`) as a blueprint group: sizes, instance types, the
//! image, labels, taints, tags, subnets and the bootstrap settings. IAM,
//! SSH, storage and instance choice are in `group_fields`.

use super::Ctx;
use super::cluster::{Input, field, subnets_parameter};
use super::group_fields;
use super::values::{boolean, copy, copy_text, group_name, int, strings, text};
use crate::import::out::{Out, OutValue};
use crate::syntax::{Key, Node};

/// eksctl's default instance type (`DefaultNodeType`).
pub(super) const DEFAULT_INSTANCE_TYPE: &str = "m5.large";
/// eksctl's default node count (`DefaultNodeCount`).
const DEFAULT_NODE_COUNT: i64 = 2;
/// eksctl's default root volume size in GiB (`DefaultNodeVolumeSize`).
pub const DEFAULT_VOLUME_SIZE: i64 = 80;

/// The keys of eksctl's `NodeGroupBase`, then those of `NodeGroup` and of
/// `ManagedNodeGroup`, and the scaling keys both embed.
const BASE_FIELDS: &[&str] = &[
    "name",
    "amiFamily",
    "instanceType",
    "availabilityZones",
    "subnets",
    "instancePrefix",
    "instanceName",
    "volumeSize",
    "ssh",
    "labels",
    "privateNetworking",
    "tags",
    "iam",
    "ami",
    "securityGroups",
    "maxPodsPerNode",
    "asgSuspendProcesses",
    "ebsOptimized",
    "volumeType",
    "volumeName",
    "volumeEncrypted",
    "volumeKmsKeyID",
    "volumeIOPS",
    "volumeThroughput",
    "additionalVolumes",
    "preBootstrapCommands",
    "overrideBootstrapCommand",
    "propagateASGTags",
    "disableIMDSv1",
    "disablePodIMDS",
    "placement",
    "efaEnabled",
    "instanceSelector",
    "bottlerocket",
    "enableDetailedMonitoring",
    "capacityReservation",
    "instanceMarketOptions",
    "outpostARN",
    "desiredCapacity",
    "minSize",
    "maxSize",
    "taints",
    "updateConfig",
];
const SELF_MANAGED_FIELDS: &[&str] = &[
    "instancesDistribution",
    "asgMetricsCollection",
    "cpuCredits",
    "classicLoadBalancerNames",
    "targetGroupARNs",
    "clusterDNS",
    "kubeletExtraConfig",
    "containerRuntime",
    "maxInstanceLifetime",
    "localZones",
    "enclaveEnabled",
];
const MANAGED_FIELDS: &[&str] = &[
    "instanceTypes",
    "spot",
    "launchTemplate",
    "releaseVersion",
    "nodeRepairConfig",
];

/// The group being imported: where it is, and the blueprint group so far.
pub(super) struct Group<'c> {
    pub ctx: &'c mut Ctx,
    pub index: usize,
    pub path: String,
    pub managed: bool,
    pub out: Out,
}

impl Group<'_> {
    pub fn origin(&mut self, key: &Key) -> usize {
        let path = format!("{}.{}", self.path, key.name);
        self.ctx.origin(key, &path, Some(self.index))
    }

    /// An origin for `sub` below `key` (`iam.attachPolicyARNs`).
    pub fn origin_below(&mut self, parent: &str, key: &Key) -> usize {
        let path = format!("{}.{parent}.{}", self.path, key.name);
        self.ctx.origin(key, &path, Some(self.index))
    }

    /// Sets `field` of the group from `key`.
    pub fn set(&mut self, key: &Key, field: &str, value: Out) {
        let origin = self.origin(key);
        self.out.set(field, value.from(origin));
    }

    /// Sets `section.field` of the group, from `origin`.
    pub fn set_in(&mut self, section: &str, field: &str, value: Out, origin: usize) {
        self.out.entry(section, None).set(field, value.from(origin));
    }

    pub fn unmapped(&mut self, key: &Key, help: &str) {
        let path = format!("{}.{}", self.path, key.name);
        self.ctx.unmapped(Some(self.index), key, &path, help);
    }

    pub fn unmapped_below(&mut self, parent: &str, key: &Key, help: &str) {
        let path = format!("{}.{parent}.{}", self.path, key.name);
        self.ctx.unmapped(Some(self.index), key, &path, help);
    }

    pub fn unknown_below(&mut self, parent: &str, key: &Key, known: &[&str]) {
        let path = format!("{}.{parent}.{}", self.path, key.name);
        self.ctx.unknown(Some(self.index), key, &path, known);
    }
}

fn entry<'n>(entries: &'n [(Key, Node)], name: &str) -> Option<(&'n Key, &'n Node)> {
    entries
        .iter()
        .find(|(k, _)| k.name == name)
        .map(|(k, v)| (k, v))
}

/// Imports one node group; `None` when it has no name.
pub(super) fn import(
    ctx: &mut Ctx,
    input: &Input<'_>,
    node: &Node,
    path: &str,
    index: usize,
    managed: bool,
) -> Option<(String, Out)> {
    let entries = node.as_map()?;
    let name = entry(entries, "name").and_then(|(_, v)| text(v))?;
    let mut group = Group {
        ctx,
        index,
        path: path.to_string(),
        managed,
        out: Out::map(),
    };
    let blueprint_name = group_name(&name);
    group.out.set("name", Out::str(&blueprint_name));
    if managed && blueprint_name != name {
        group.out.set("nodegroupName", Out::str(&name));
    }

    for (key, value) in entries {
        field_of(&mut group, entries, key, value);
    }
    instance_types(&mut group, entries);
    sizes(&mut group, entries);
    subnets(&mut group, input, entries);
    group_fields::ssh(&mut group, entries);
    group_fields::iam_defaults(&mut group, entries);
    labels_and_tags(&mut group, input, entries, &name);
    if (!managed || entry(entries, "launchTemplate").is_none())
        && group
            .out
            .get("rootVolume")
            .and_then(|v| v.get("size"))
            .is_none()
    {
        group
            .out
            .entry("rootVolume", None)
            .set("size", Out::int(DEFAULT_VOLUME_SIZE));
    }
    Some((name, reorder(group.out)))
}

/// The group's fields in the order the blueprint reference lists them.
fn reorder(out: Out) -> Out {
    const ORDER: &[&str] = &[
        "name",
        "nodegroupName",
        "amiFamily",
        "ami",
        "instanceType",
        "instanceTypes",
        "instanceRequirements",
        "capacityType",
        "instancesDistribution",
        "minSize",
        "maxSize",
        "desiredCapacity",
        "subnets",
        "labels",
        "taints",
    ];
    let crate::import::out::OutValue::Map(mut entries) = out.value else {
        return out;
    };
    entries.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    Out {
        value: crate::import::out::OutValue::Map(entries),
        origin: out.origin,
    }
}

/// One key of the group, mapped now or (when it depends on others) later.
fn field_of(group: &mut Group<'_>, entries: &[(Key, Node)], key: &Key, value: &Node) {
    let managed = group.managed;
    match key.name.as_str() {
        // Read with the fields they depend on, below.
        "name" | "instanceType" | "instanceTypes" | "instancesDistribution" | "instanceSelector"
        | "desiredCapacity" | "minSize" | "maxSize" | "subnets" | "availabilityZones"
        | "localZones" | "privateNetworking" | "ssh" | "labels" | "tags" | "instanceName" => {}
        "iam" => group_fields::iam(group, value),
        "amiFamily" => match text(value).as_deref().map(ami_family) {
            // EKS has no Ubuntu AMI type: a managed group runs Canonical's
            // image only pinned as its custom `ami`.
            Some(Some(family))
                if managed && family.starts_with("Ubuntu") && !pins_an_ami(entries) =>
            {
                group.unmapped(
                    key,
                    "EKS has no Ubuntu AMI type, so eksynth runs Canonical's images in self-managed groups (or pinned as a managed group's `ami`); the group gets AmazonLinux2023",
                )
            }
            Some(Some(family)) => group.set(key, "amiFamily", Out::str(family)),
            _ => group.unmapped(
                key,
                "eksynth builds AmazonLinux2023, AmazonLinux2, Bottlerocket, Windows Server and Ubuntu 22.04 and 24.04 nodes; the group gets AmazonLinux2023",
            ),
        },
        "ami" => match text(value).as_deref() {
            Some("" | "auto" | "auto-ssm") => {
                let origin = group.origin(key);
                group.out.set("ami", Out::str("recommended").from(origin));
            }
            Some(id) if id.starts_with("ami-") => group.set(key, "ami", Out::str(id)),
            _ => group.unmapped(
                key,
                "eksynth takes `recommended`, an image ID (`ami-…`) or an SSM parameter (`{ssmParameter: /path}`)",
            ),
        },
        "volumeSize" => root_volume(group, key, value, "size"),
        "volumeType" => root_volume(group, key, value, "type"),
        "volumeIOPS" => root_volume(group, key, value, "iops"),
        "volumeThroughput" => root_volume(group, key, value, "throughput"),
        "volumeEncrypted" => root_volume(group, key, value, "encrypted"),
        "volumeKmsKeyID" => root_volume(group, key, value, "kmsKeyId"),
        "volumeName" => root_volume(group, key, value, "deviceName"),
        "additionalVolumes" => group_fields::volumes(group, key, value),
        "maxPodsPerNode" => group.set(key, "maxPods", copy(value)),
        "preBootstrapCommands" => group.set(key, "preBootstrapCommands", copy(value)),
        "overrideBootstrapCommand" => group.unmapped(
            key,
            "eksynth writes the bootstrap itself (and the signal after it); put steps in `preBootstrapCommands`, kubelet settings in `kubelet` or `nodeConfig`",
        ),
        "disableIMDSv1" => match boolean(value) {
            Some(true) => {
                let origin = group.origin(key);
                group.set_in("imds", "httpTokens", Out::str("required"), origin);
            }
            // IMDSv1 allowed: the loader says whether eksynth takes it.
            _ => {
                let origin = group.origin(key);
                group.set_in("imds", "httpTokens", Out::str("optional"), origin);
            }
        },
        "disablePodIMDS" => {
            let origin = group.origin(key);
            group.set_in("imds", "blockPods", copy(value), origin);
        }
        "efaEnabled" => group.set(key, "efa", copy(value)),
        "enableDetailedMonitoring" => group.set(key, "detailedMonitoring", copy(value)),
        "placement" => group_fields::placement(group, key, value),
        "capacityReservation" => group_fields::capacity_reservation(group, key, value),
        "instanceMarketOptions" => group_fields::market_options(group, key, value, entries),
        "securityGroups" => group_fields::security_groups(group, key, value),
        "bottlerocket" => group_fields::bottlerocket(group, key, value, entries),
        "taints" => taints(group, key, value),
        "updateConfig" => update_config(group, value),
        "kubeletExtraConfig" if !managed => {
            for (kubelet_key, kubelet_value) in value.as_map().unwrap_or_default() {
                let origin = group.origin_below("kubeletExtraConfig", kubelet_key);
                group.set_in("kubelet", &kubelet_key.name, copy(kubelet_value), origin);
            }
        }
        "containerRuntime" if !managed => {
            if text(value).as_deref() != Some("containerd") {
                group.unmapped(key, "eksynth's nodes run containerd, the only runtime of current EKS images");
            }
        }
        "asgMetricsCollection" if !managed => {
            let origin = group.origin(key);
            group.set_in("lifecycle", "metricsCollection", Out::bool(true), origin);
        }
        "maxInstanceLifetime" if !managed => {
            let origin = group.origin(key);
            group.set_in("lifecycle", "maxInstanceLifetime", copy(value), origin);
        }
        "targetGroupARNs" if !managed => load_balancers(group, key, value, "targetGroupArns"),
        "classicLoadBalancerNames" if !managed => {
            load_balancers(group, key, value, "classicLoadBalancerNames");
        }
        "spot" if managed => {
            if boolean(value) == Some(true) {
                group.set(key, "capacityType", Out::str("SPOT"));
            }
        }
        "releaseVersion" if managed => {
            if text(value).is_some_and(|v| !v.is_empty()) {
                group.set(key, "releaseVersion", copy(value));
            }
        }
        "nodeRepairConfig" if managed => group_fields::node_repair(group, key, value),
        "launchTemplate" if managed => group_fields::launch_template(group, value),
        "asgSuspendProcesses" => group.unmapped(
            key,
            "eksynth suspends processes only during its rolling updates; suspend others outside the template",
        ),
        "ebsOptimized" => group.unmapped(key, "current instance types are EBS-optimized by default"),
        "propagateASGTags" => group.unmapped(
            key,
            "self-managed groups get the cluster autoscaler's tags from `clusterAutoscaler`; a managed group's Auto Scaling group cannot be tagged from CloudFormation",
        ),
        "instancePrefix" => group.unmapped(key, "name the instances with a `Name` tag in `tags`"),
        "cpuCredits" if !managed => group.unmapped(key, "set `CreditSpecification` with `overrides:` on the launch template"),
        // eksctl takes one address; eksynth's field is a list of them.
        "clusterDNS" if !managed => group.set(key, "clusterDNS", Out::seq(vec![copy_text(value)])),
        "enclaveEnabled" if !managed => group.unmapped(key, "set `EnclaveOptions` with `overrides:` on the launch template"),
        "outpostARN" => group.unmapped(key, "eksynth does not place node groups on Outposts"),
        _ => {
            let mut known: Vec<&str> = BASE_FIELDS.to_vec();
            known.extend(if managed { MANAGED_FIELDS } else { SELF_MANAGED_FIELDS });
            let other = if managed { SELF_MANAGED_FIELDS } else { MANAGED_FIELDS };
            if other.contains(&key.name.as_str()) {
                let kind = if managed { "managed" } else { "self-managed" };
                group.unmapped(key, &format!("eksctl does not read it on a {kind} node group either"));
            } else {
                let path = format!("{}.{}", group.path, key.name);
                group.ctx.unknown(Some(group.index), key, &path, &known);
            }
        }
    }
}

/// Whether the group names an image of its own (not eksctl's `auto`).
fn pins_an_ami(entries: &[(Key, Node)]) -> bool {
    entry(entries, "ami")
        .and_then(|(_, value)| text(value))
        .is_some_and(|ami| !matches!(ami.as_str(), "" | "auto" | "auto-ssm"))
}

/// eksctl's AMI family names as eksynth's.
fn ami_family(name: &str) -> Option<&'static str> {
    Some(match name {
        "AmazonLinux2023" => "AmazonLinux2023",
        "AmazonLinux2" => "AmazonLinux2",
        "Bottlerocket" => "Bottlerocket",
        "WindowsServer2019CoreContainer" => "WindowsServer2019Core",
        "WindowsServer2019FullContainer" => "WindowsServer2019Full",
        "WindowsServer2022CoreContainer" => "WindowsServer2022Core",
        "WindowsServer2022FullContainer" => "WindowsServer2022Full",
        "WindowsServer2025CoreContainer" => "WindowsServer2025Core",
        "WindowsServer2025FullContainer" => "WindowsServer2025Full",
        "Ubuntu2204" => "Ubuntu2204",
        "Ubuntu2404" => "Ubuntu2404",
        _ => return None,
    })
}

fn root_volume(group: &mut Group<'_>, key: &Key, value: &Node, field: &str) {
    let origin = group.origin(key);
    group.set_in("rootVolume", field, copy(value), origin);
}

/// `targetGroupARNs` and `classicLoadBalancerNames` as the blueprint's
/// fields of the same meaning; a literal partition in an ARN becomes
/// `${AWS::Partition}`.
fn load_balancers(group: &mut Group<'_>, key: &Key, value: &Node, field: &str) {
    let items = strings(value)
        .iter()
        .map(|item| Out::str(&super::values::partition_free(item)))
        .collect();
    group.set(key, field, Out::seq(items));
}

/// `taints`: a list of `{key, value, effect}`, or (self-managed, the older
/// form) a map of `key: value:Effect`.
fn taints(group: &mut Group<'_>, key: &Key, value: &Node) {
    let origin = group.origin(key);
    let items = match &value.value {
        crate::syntax::Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| {
                let written = text(v).unwrap_or_default();
                let (taint_value, effect) = written.rsplit_once(':').unwrap_or(("", &written));
                let mut taint = Out::map();
                taint.set("key", Out::str(&k.name));
                if !taint_value.is_empty() {
                    taint.set("value", Out::str(taint_value));
                }
                taint.set("effect", Out::str(effect));
                taint
            })
            .collect(),
        _ => value
            .as_seq()
            .unwrap_or_default()
            .iter()
            .map(copy)
            .collect(),
    };
    group.out.set("taints", Out::seq(items).from(origin));
}

fn update_config(group: &mut Group<'_>, value: &Node) {
    for (sub, sub_value) in value.as_map().unwrap_or_default() {
        let origin = group.origin_below("updateConfig", sub);
        match (group.managed, sub.name.as_str()) {
            (true, "maxUnavailable" | "maxUnavailablePercentage") => {
                group.set_in("updateConfig", &sub.name, copy(sub_value), origin);
            }
            (false, "maxUnavailable") => {
                group.set_in("updatePolicy", "maxBatchSize", copy(sub_value), origin);
            }
            (false, "maxUnavailablePercentage") => group.unmapped_below(
                "updateConfig",
                sub,
                "eksynth's rolling update replaces `updatePolicy.maxBatchSize` instances at a time, a count",
            ),
            _ => group.unknown_below("updateConfig", sub, &["maxUnavailable", "maxUnavailablePercentage"]),
        }
    }
}

/// Instance types: `instanceType`, a managed group's `instanceTypes`, a
/// self-managed group's `instancesDistribution`, or `instanceSelector`;
/// eksctl's default otherwise.
fn instance_types(group: &mut Group<'_>, entries: &[(Key, Node)]) {
    let mut chosen = false;
    if let Some((key, value)) = entry(entries, "instancesDistribution")
        && !group.managed
    {
        chosen |= group_fields::distribution(group, key, value);
    }
    if let Some((key, value)) = entry(entries, "instanceTypes")
        && group.managed
        && !strings(value).is_empty()
    {
        group.set(key, "instanceTypes", copy(value));
        chosen = true;
    }
    if let Some((key, value)) = entry(entries, "instanceType")
        && let Some(t) = text(value)
    {
        if t == "mixed" || chosen {
            let _ = group.origin(key);
        } else {
            group.set(key, "instanceType", Out::str(&t));
            chosen = true;
        }
    }
    if let Some((key, value)) = entry(entries, "instanceSelector") {
        chosen |= group_fields::instance_selector(group, key, value, chosen);
    }
    if !chosen {
        group
            .out
            .set("instanceType", Out::str(DEFAULT_INSTANCE_TYPE));
    }
}

/// Sizes with eksctl's defaults: `minSize` is `desiredCapacity` (or 2),
/// `maxSize` is `desiredCapacity` (or `minSize`, at least 1).
fn sizes(group: &mut Group<'_>, entries: &[(Key, Node)]) {
    let read = |name: &str| entry(entries, name).map(|(k, v)| (k, v, int(v)));
    let desired = read("desiredCapacity");
    let min = read("minSize");
    let max = read("maxSize");
    let origin_of = |group: &mut Group<'_>, key: Option<&Key>| key.map(|k| group.origin(k));
    let min_value = min
        .and_then(|m| m.2)
        .or_else(|| desired.and_then(|d| d.2))
        .unwrap_or(DEFAULT_NODE_COUNT);
    let min_origin = origin_of(group, min.or(desired).map(|m| m.0));
    let max_value = max
        .and_then(|m| m.2)
        .or_else(|| desired.and_then(|d| d.2))
        .unwrap_or(min_value)
        .max(1);
    let max_origin = origin_of(group, max.or(desired).map(|m| m.0));
    let mut min_out = Out::int(min_value);
    min_out.origin = min_origin;
    let mut max_out = Out::int(max_value);
    max_out.origin = max_origin;
    group.out.set("minSize", min_out);
    group.out.set("maxSize", max_out);
    if let Some((key, value, _)) = desired {
        group.set(key, "desiredCapacity", copy(value));
    }
}

/// Subnets: named in `subnets` (IDs, or names of the eksctl file's
/// `vpc.subnets`), else those of the group's kind (`privateNetworking`) in
/// its zones (`availabilityZones`, `localZones`); a parameter when the
/// eksctl file does not say which.
fn subnets(group: &mut Group<'_>, input: &Input<'_>, entries: &[(Key, Node)]) {
    let private = entry(entries, "privateNetworking").and_then(|(_, v)| boolean(v)) == Some(true);
    let origin = [
        "subnets",
        "localZones",
        "availabilityZones",
        "privateNetworking",
    ]
    .iter()
    .find_map(|name| entry(entries, name))
    .map(|(k, _)| k);
    let origin = origin.map(|k| group.origin(k));
    let named = entry(entries, "subnets").map(|(_, v)| strings(v));
    let zones = entry(entries, "localZones")
        .or_else(|| entry(entries, "availabilityZones"))
        .map(|(_, v)| strings(v))
        .unwrap_or_default();
    // eksctl's examples write IDs no subnet has (`subnet-1234`): the
    // blueprint takes a parameter for them, with a warning.
    let mut malformed: Vec<String> = Vec::new();
    let mut valid = |id: String| {
        if crate::blueprint::rules::is_ec2_id("subnet", &id) {
            Some(id)
        } else {
            malformed.push(id);
            None
        }
    };
    let ids: Option<Vec<String>> = match &named {
        Some(names) => names
            .iter()
            .map(|name| {
                if name.starts_with("subnet-") {
                    valid(name.clone())
                } else {
                    input
                        .subnets
                        .iter()
                        .find(|s| s.name == *name)
                        .and_then(|s| s.id.clone())
                        .and_then(&mut valid)
                }
            })
            .collect(),
        None => {
            let found: Vec<String> = input
                .subnets
                .iter()
                .filter(|s| s.private == private)
                .filter(|s| zones.is_empty() || s.zone.as_ref().is_some_and(|z| zones.contains(z)))
                .map(|s| s.id.clone().and_then(&mut valid))
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default();
            (!found.is_empty()).then_some(found)
        }
    };
    let at = ["subnets", "availabilityZones", "localZones"]
        .iter()
        .find_map(|name| entry(entries, name))
        .or_else(|| entries.first().map(|(k, v)| (k, v)))
        .map(|(k, _)| k.span);
    if let Some((span, first)) = at.zip(malformed.first()) {
        group.ctx.note(
            span,
            format!("`{first}` is not a subnet ID: the blueprint takes a parameter instead"),
            "a subnet ID is `subnet-` and 8 or 17 lower case hexadecimal digits",
        );
    }
    let mut out = match ids {
        Some(ids) if !ids.is_empty() => Out::strs(&ids),
        _ if named.is_some() => {
            let name = super::values::pascal(&group_name(&group.path_name()));
            Out::parameter(&format!("{name}Subnets"))
        }
        _ => Out::parameter(&subnets_parameter(private, &zones)),
    };
    out.origin = origin;
    one_subnet_for_efa(group, entries, &mut out, at);
    group.out.set("subnets", out);
}

/// eksctl places an EFA group in one zone, and eksynth launches one in one
/// subnet: of several subnets, the first; with none named (a parameter),
/// no `efa`, said at `efaEnabled`, so that the blueprint still compiles.
fn one_subnet_for_efa(
    group: &mut Group<'_>,
    entries: &[(Key, Node)],
    out: &mut Out,
    at: Option<crate::source::Span>,
) {
    let Some(efa_origin) = group.out.get("efa").and_then(|e| e.origin) else {
        return;
    };
    match &mut out.value {
        OutValue::Seq(items) if items.len() > 1 => {
            items.truncate(1);
            let first = items[0].as_str().unwrap_or_default().to_string();
            if let Some(span) = at {
                group.ctx.note(
                    span,
                    format!("an EFA group launches in one subnet: the blueprint takes the first, `{first}`"),
                    "eksctl places an EFA node group in one availability zone too; list the one you mean in `subnets`",
                );
            }
        }
        OutValue::Seq(_) => {}
        _ => {
            group.out.remove_origin(efa_origin);
            if let Some((key, _)) = entry(entries, "efaEnabled") {
                group.ctx.note(
                    key.span,
                    "`efaEnabled` is not imported: an EFA group launches in one named subnet, and the file names none".to_string(),
                    "set `subnets: [subnet-...]` (one subnet) and `efa: true` on the group",
                );
            }
        }
    }
}

impl Group<'_> {
    /// The group's blueprint name.
    fn path_name(&self) -> String {
        match self.out.get("name").and_then(Out::as_str) {
            Some(name) => name.to_string(),
            None => self.path.clone(),
        }
    }
}

/// Labels (with the two eksctl puts on every node), tags (with the
/// cluster's, which eksctl copies to every group) and `instanceName`, the
/// `Name` tag. On a self-managed group, the cluster autoscaler's tags that
/// eksctl writes or the file lists are eksynth's `clusterAutoscaler`.
fn labels_and_tags(group: &mut Group<'_>, input: &Input<'_>, entries: &[(Key, Node)], name: &str) {
    let cluster = input.cluster_name();
    let mut labels = Out::map();
    labels.set("alpha.eksctl.io/cluster-name", Out::str(&cluster));
    labels.set("alpha.eksctl.io/nodegroup-name", Out::str(name));
    let mut written_labels = Vec::new();
    if let Some((_, value)) = entry(entries, "labels") {
        for (key, label) in value.as_map().unwrap_or_default() {
            let origin = group.origin_below("labels", key);
            labels.set(&key.name, super::values::copy_text(label).from(origin));
            written_labels.push((key.name.clone(), text(label).unwrap_or_default()));
        }
    }
    group.out.set("labels", labels);

    let autoscaler_tags = [
        "k8s.io/cluster-autoscaler/enabled".to_string(),
        format!("k8s.io/cluster-autoscaler/{cluster}"),
    ];
    let mut autoscaler = entry(entries, "iam")
        .and_then(|(_, iam)| field(iam, "withAddonPolicies"))
        .and_then(|p| field(p, "autoScaler"))
        .and_then(boolean)
        == Some(true);
    let mut tags = Out::map();
    for (key, value) in input.cluster_tags() {
        let origin = group
            .ctx
            .origin(&key, &format!("metadata.tags.{}", key.name), None);
        tags.set(&key.name, super::values::copy_text(&value).from(origin));
    }
    if let Some((key, value)) = entry(entries, "instanceName") {
        let origin = group.origin(key);
        tags.set("Name", super::values::copy_text(value).from(origin));
    }
    let taints = group_taints(entries);
    if let Some((_, value)) = entry(entries, "tags") {
        for (key, tag) in value.as_map().unwrap_or_default() {
            let origin = group.origin_below("tags", key);
            let tag_value = text(tag).unwrap_or_default();
            if !group.managed {
                if autoscaler_tags.contains(&key.name) {
                    autoscaler = true;
                    continue;
                }
                let template = "k8s.io/cluster-autoscaler/node-template/";
                if let Some(label) = key.name.strip_prefix(&format!("{template}label/"))
                    && written_labels
                        .iter()
                        .any(|(k, v)| k == label && *v == tag_value)
                {
                    continue;
                }
                if let Some(taint) = key.name.strip_prefix(&format!("{template}taint/"))
                    && taints.iter().any(|(k, v)| k == taint && *v == tag_value)
                {
                    continue;
                }
            }
            tags.set(&key.name, super::values::copy_text(tag).from(origin));
        }
    }
    if !tags.is_empty() {
        group.out.set("tags", tags);
    }
    if !group.managed && !autoscaler {
        group.out.set("clusterAutoscaler", Out::bool(false));
    }
}

/// The taints as the autoscaler's node-template tags write them:
/// `(key, "value:Effect")`.
fn group_taints(entries: &[(Key, Node)]) -> Vec<(String, String)> {
    let Some((_, value)) = entry(entries, "taints") else {
        return Vec::new();
    };
    match &value.value {
        crate::syntax::Value::Map(items) => items
            .iter()
            .map(|(k, v)| (k.name.clone(), text(v).unwrap_or_default()))
            .collect(),
        _ => value
            .as_seq()
            .unwrap_or_default()
            .iter()
            .filter_map(|t| {
                let key = field(t, "key").and_then(text)?;
                let value = field(t, "value").and_then(text).unwrap_or_default();
                let effect = field(t, "effect").and_then(text).unwrap_or_default();
                Some((key, format!("{value}:{effect}")))
            })
            .collect(),
    }
}
