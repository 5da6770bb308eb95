//! The nested sections of an eksctl node group: `iam`, `ssh`,
//! `additionalVolumes`, `securityGroups`, `placement`, `launchTemplate`,
//! `capacityReservation`, `instanceMarketOptions`, `bottlerocket`,
//! `nodeRepairConfig`, `instancesDistribution` and `instanceSelector`.

use super::addon_policies;
use super::cluster::field;
use super::node_group::{DEFAULT_VOLUME_SIZE, Group};
use super::values::{boolean, copy, copy_text, partition_free, partition_free_tree, strings, text};
use crate::import::out::Out;
use crate::syntax::{Key, Node, Value};

const IAM_FIELDS: &[&str] = &[
    "attachPolicy",
    "attachPolicyARNs",
    "instanceProfileARN",
    "instanceRoleARN",
    "instanceRoleName",
    "instanceRolePermissionsBoundary",
    "withAddonPolicies",
];
const SSH_FIELDS: &[&str] = &[
    "allow",
    "publicKeyPath",
    "publicKey",
    "publicKeyName",
    "sourceSecurityGroupIds",
    "enableSsm",
];

/// The managed policies eksynth attaches to every node role itself.
const STANDARD_POLICIES: &[&str] = &[
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonEC2ContainerRegistryPullOnly",
];

fn entries(node: &Node) -> &[(Key, Node)] {
    node.as_map().unwrap_or_default()
}

pub(super) fn iam(group: &mut Group<'_>, node: &Node) {
    for (key, value) in entries(node) {
        match key.name.as_str() {
            "attachPolicyARNs" => {
                let origin = group.origin_below("iam", key);
                let arns = strings(value);
                let names: Vec<&str> = arns
                    .iter()
                    .map(|a| a.rsplit('/').next().unwrap_or(a))
                    .collect();
                if !names.contains(&"AmazonEKS_CNI_Policy") {
                    group.set_in("iam", "cniUsesIrsa", Out::bool(true), origin);
                }
                if names.contains(&"AmazonSSMManagedInstanceCore") {
                    group.set_in("iam", "ssmManagedInstance", Out::bool(true), origin);
                }
                let extra: Vec<String> = arns
                    .iter()
                    .filter(|arn| {
                        let name = arn.rsplit('/').next().unwrap_or(arn);
                        !STANDARD_POLICIES.contains(&name)
                            && name != "AmazonEKS_CNI_Policy"
                            && name != "AmazonSSMManagedInstanceCore"
                    })
                    .map(|arn| partition_free(arn))
                    .collect();
                if !extra.is_empty() {
                    addon_policies::add_managed_policies(group, extra, origin);
                }
            }
            "attachPolicy" => {
                let origin = group.origin_below("iam", key);
                let statements = field(value, "Statement").map(copy).map(|mut s| {
                    partition_free_tree(&mut s);
                    match s.value {
                        crate::import::out::OutValue::Seq(items) => items,
                        _ => vec![s],
                    }
                });
                match statements {
                    Some(statements) => addon_policies::add_statements(group, statements, origin),
                    None => {
                        group.unmapped_below("iam", key, "an inline policy needs a `Statement`")
                    }
                }
            }
            "instanceRoleARN" => {
                let origin = group.origin_below("iam", key);
                let name = text(value).map(|arn| arn.rsplit('/').next().unwrap_or("").to_string());
                if let Some(name) = name {
                    group.set_in("iam", "roleName", Out::str(&name), origin);
                }
            }
            "instanceProfileARN" => {
                let origin = group.origin_below("iam", key);
                let arn = text(value).map(|a| partition_free(&a)).unwrap_or_default();
                group.set_in("iam", "instanceProfileArn", Out::str(&arn), origin);
            }
            "instanceRoleName" => {
                let origin = group.origin_below("iam", key);
                group.set_in("iam", "createdRoleName", copy(value), origin);
            }
            "instanceRolePermissionsBoundary" => {
                let origin = group.origin_below("iam", key);
                let arn = text(value).map(|a| partition_free(&a)).unwrap_or_default();
                group.set_in("iam", "permissionsBoundary", Out::str(&arn), origin);
            }
            "withAddonPolicies" => addon_policies::addon_policies(group, value),
            _ => group.unknown_below("iam", key, IAM_FIELDS),
        }
    }
}

/// eksctl attaches `AmazonSSMManagedInstanceCore` to every node role it
/// creates unless `attachPolicyARNs` replaces its list.
pub(super) fn iam_defaults(group: &mut Group<'_>, entries: &[(Key, Node)]) {
    let iam = entries
        .iter()
        .find(|(k, _)| k.name == "iam")
        .map(|(_, v)| v);
    let replaced = iam.and_then(|i| field(i, "attachPolicyARNs")).is_some();
    let existing = iam.and_then(|i| field(i, "instanceRoleARN")).is_some();
    if !replaced && !existing {
        group
            .out
            .entry("iam", None)
            .set("ssmManagedInstance", Out::bool(true));
    }
}

/// `ssh`: a key pair by name, source security groups, SSM. eksctl opens
/// port 22 to every address when SSH is allowed without sources, and
/// imports key files; eksynth does neither.
pub(super) fn ssh(group: &mut Group<'_>, entries: &[(Key, Node)]) {
    let Some((ssh_key, node)) = entries.iter().find(|(k, _)| k.name == "ssh") else {
        return;
    };
    let fields = self::entries(node);
    let get = |name: &str| fields.iter().find(|(k, _)| k.name == name);
    let key_given = ["publicKeyPath", "publicKey", "publicKeyName"]
        .iter()
        .any(|name| get(name).is_some());
    let allow = get("allow")
        .and_then(|(_, v)| boolean(v))
        .unwrap_or(key_given);
    let sources = get("sourceSecurityGroupIds")
        .map(|(_, v)| strings(v))
        .unwrap_or_default();
    for (key, value) in fields {
        match key.name.as_str() {
            "publicKeyName" => {
                let origin = group.origin_below("ssh", key);
                group.out.set("keyName", copy(value).from(origin));
            }
            "publicKeyPath" | "publicKey" => {
                if allow {
                    group.unmapped_below(
                        "ssh",
                        key,
                        "eksynth names an existing EC2 key pair: import the key with `aws ec2 import-key-pair` and set `keyName`",
                    );
                }
            }
            "sourceSecurityGroupIds" => {
                let origin = group.origin_below("ssh", key);
                group
                    .out
                    .entry("ssh", None)
                    .set("sourceSecurityGroups", copy(value).from(origin));
            }
            "enableSsm" => {
                let origin = group.origin_below("ssh", key);
                group.set_in("iam", "ssmManagedInstance", copy(value), origin);
            }
            "allow" => {
                if allow && sources.is_empty() {
                    group.unmapped_below(
                        "ssh",
                        key,
                        "eksctl opens port 22 to every address (or the VPC) when no source is listed; eksynth opens it only to `ssh.sourceSecurityGroups` or `ssh.sourceCidrs`",
                    );
                }
            }
            _ => group.unknown_below("ssh", key, SSH_FIELDS),
        }
    }
    if allow && sources.is_empty() && get("allow").is_none() {
        group.unmapped(
            ssh_key,
            "eksctl allows SSH from every address when a key is given; eksynth opens port 22 only to `ssh.sourceSecurityGroups` or `ssh.sourceCidrs`",
        );
    }
    // SSH explicitly off: no source groups either.
    if !allow && let crate::import::out::OutValue::Map(entries) = &mut group.out.value {
        entries.retain(|(k, _)| k != "ssh");
    }
}

/// `additionalVolumes`: eksynth's `volumes`, eksctl's default size when
/// none is written.
pub(super) fn volumes(group: &mut Group<'_>, key: &Key, node: &Node) {
    let parent = key.name.clone();
    let mut items = Vec::new();
    for (index, item) in node.as_seq().unwrap_or_default().iter().enumerate() {
        let path = format!("{}.{parent}[{index}]", group.path);
        let origin = group.ctx.origin_at(item.span, &path, Some(group.index));
        let mut volume = Out::map();
        for (k, v) in self::entries(item) {
            let name = match k.name.as_str() {
                "volumeName" => "deviceName",
                "volumeSize" => "size",
                "volumeType" => "type",
                "volumeIOPS" => "iops",
                "volumeThroughput" => "throughput",
                "volumeEncrypted" => "encrypted",
                "volumeKmsKeyID" => "kmsKeyId",
                "snapshotID" => "snapshotId",
                _ => {
                    group.unknown_below(
                        &format!("{parent}[{index}]"),
                        k,
                        &[
                            "volumeName",
                            "volumeSize",
                            "volumeType",
                            "volumeIOPS",
                            "volumeThroughput",
                            "volumeEncrypted",
                            "volumeKmsKeyID",
                            "snapshotID",
                        ],
                    );
                    continue;
                }
            };
            volume.set(name, copy(v));
        }
        if volume.get("size").is_none() && volume.get("snapshotId").is_none() {
            volume.set("size", Out::int(DEFAULT_VOLUME_SIZE));
        }
        items.push(volume.from(origin));
    }
    if !items.is_empty() {
        group.out.set("volumes", Out::seq(items));
    }
}

pub(super) fn placement(group: &mut Group<'_>, _key: &Key, node: &Node) {
    for (key, value) in self::entries(node) {
        match key.name.as_str() {
            "groupName" => {
                let origin = group.origin_below("placement", key);
                group.out.set("placementGroup", copy(value).from(origin));
            }
            "spreadLevel" => group.unmapped_below(
                "placement",
                key,
                "eksynth names an existing placement group, whose strategy is its own",
            ),
            _ => group.unknown_below("placement", key, &["groupName", "spreadLevel"]),
        }
    }
}

/// A managed group's `launchTemplate`: eksynth's own `{id, version}`.
pub(super) fn launch_template(group: &mut Group<'_>, node: &Node) {
    for (key, value) in self::entries(node) {
        let origin = group.origin_below("launchTemplate", key);
        match key.name.as_str() {
            "id" => group.set_in("launchTemplate", "id", copy_text(value), origin),
            "version" => group.set_in("launchTemplate", "version", copy_text(value), origin),
            _ => group.unknown_below("launchTemplate", key, &["id", "version"]),
        }
    }
}

pub(super) fn capacity_reservation(group: &mut Group<'_>, _key: &Key, node: &Node) {
    for (key, value) in self::entries(node) {
        let origin = group.origin_below("capacityReservation", key);
        match key.name.as_str() {
            "capacityReservationPreference" => match text(value).as_deref() {
                Some(p @ ("open" | "none")) => {
                    group.out.set("capacityReservation", Out::str(p).from(origin));
                }
                _ => group.unmapped_below(
                    "capacityReservation",
                    key,
                    "eksynth's `capacityReservation` is `open`, `none`, a reservation ID or a resource group",
                ),
            },
            "capacityReservationTarget" => {
                for (target_key, target) in self::entries(value) {
                    let origin = group.origin_below("capacityReservation.capacityReservationTarget", target_key);
                    match target_key.name.as_str() {
                        "capacityReservationID" => {
                            // Compared by text: the value carries its origin.
                            let is_block = group.out.get("capacityType").and_then(Out::as_str) == Some("CAPACITY_BLOCK");
                            let field = if is_block { "capacityReservationId" } else { "capacityReservation" };
                            group.out.set(field, copy_text(target).from(origin));
                        }
                        "capacityReservationResourceGroupARN" => {
                            let mut map = Out::map();
                            map.set(
                                "resourceGroupArn",
                                Out::str(&partition_free(&text(target).unwrap_or_default())),
                            );
                            group.out.set("capacityReservation", map.from(origin));
                        }
                        _ => group.unknown_below(
                            "capacityReservation.capacityReservationTarget",
                            target_key,
                            &["capacityReservationID", "capacityReservationResourceGroupARN"],
                        ),
                    }
                }
            }
            _ => group.unknown_below(
                "capacityReservation",
                key,
                &["capacityReservationPreference", "capacityReservationTarget"],
            ),
        }
    }
}

/// `instanceMarketOptions.marketType: capacity-block` is a capacity
/// block, self-managed or managed, whose reservation
/// `capacityReservation` names.
pub(super) fn market_options(group: &mut Group<'_>, key: &Key, node: &Node, all: &[(Key, Node)]) {
    let block = field(node, "marketType").and_then(text).as_deref() == Some("capacity-block");
    if !block {
        group.unmapped(
            key,
            "eksynth takes a market type only for capacity blocks (`capacityType: CAPACITY_BLOCK`)",
        );
        return;
    }
    let origin = group.origin(key);
    group
        .out
        .set("capacityType", Out::str("CAPACITY_BLOCK").from(origin));
    if let Some(id) = all
        .iter()
        .find(|(k, _)| k.name == "capacityReservation")
        .and_then(|(_, v)| field(v, "capacityReservationTarget"))
        .and_then(|t| field(t, "capacityReservationID"))
        .and_then(text)
    {
        if let crate::import::out::OutValue::Map(entries) = &mut group.out.value {
            entries.retain(|(k, _)| k != "capacityReservation");
        }
        group
            .out
            .set("capacityReservationId", Out::str(&id).from(origin));
    }
}

pub(super) fn security_groups(group: &mut Group<'_>, _key: &Key, node: &Node) {
    for (key, value) in self::entries(node) {
        match (key.name.as_str(), boolean(value)) {
            ("attachIDs", _) => {
                let origin = group.origin_below("securityGroups", key);
                group.out.set("securityGroups", copy(value).from(origin));
            }
            // eksynth's node security group is eksctl's shared and local
            // groups in one: the node-to-node and control-plane rules.
            ("withShared" | "withLocal", Some(true)) => {}
            ("withShared" | "withLocal", _) => group.unmapped_below(
                "securityGroups",
                key,
                "eksynth always attaches its node security group (or the cluster's, with `nodeSecurityGroup: cluster`)",
            ),
            _ => group.unknown_below("securityGroups", key, &["attachIDs", "withShared", "withLocal"]),
        }
    }
}

/// `bottlerocket`: `settings` as eksynth's settings, and
/// `enableAdminContainer` (which eksctl also turns on for SSH) as
/// `host-containers.admin.enabled`.
pub(super) fn bottlerocket(group: &mut Group<'_>, _key: &Key, node: &Node, all: &[(Key, Node)]) {
    for (key, value) in self::entries(node) {
        match key.name.as_str() {
            "settings" => {
                for (setting, setting_value) in self::entries(value) {
                    let origin = group.origin_below("bottlerocket.settings", setting);
                    let settings = group
                        .out
                        .entry("bottlerocket", None)
                        .entry("settings", None);
                    settings.set(&setting.name, copy(setting_value).from(origin));
                }
            }
            "enableAdminContainer" => {
                let origin = group.origin_below("bottlerocket", key);
                admin_container(group, copy(value).from(origin));
            }
            _ => group.unknown_below("bottlerocket", key, &["enableAdminContainer", "settings"]),
        }
    }
    let ssh_allowed = all
        .iter()
        .find(|(k, _)| k.name == "ssh")
        .and_then(|(_, s)| s.as_map()?.iter().find(|(k, _)| k.name == "allow"))
        .filter(|(_, allow)| boolean(allow) == Some(true));
    if let Some((allow, _)) = ssh_allowed
        && field(node, "enableAdminContainer").is_none()
    {
        let origin = group.origin_below("ssh", allow);
        admin_container(group, Out::bool(true).from(origin));
    }
}

fn admin_container(group: &mut Group<'_>, enabled: Out) {
    let settings = group
        .out
        .entry("bottlerocket", None)
        .entry("settings", None);
    let containers = settings.entry("host-containers", None);
    containers.entry("admin", None).set("enabled", enabled);
}

pub(super) fn node_repair(group: &mut Group<'_>, _key: &Key, node: &Node) {
    for (key, value) in self::entries(node) {
        let origin = group.origin_below("nodeRepairConfig", key);
        let name = match key.name.as_str() {
            "nodeRepairConfigOverrides" => "overrides",
            "enabled"
            | "maxUnhealthyNodeThresholdPercentage"
            | "maxUnhealthyNodeThresholdCount"
            | "maxParallelNodesRepairedPercentage"
            | "maxParallelNodesRepairedCount" => key.name.as_str(),
            _ => {
                group.unknown_below(
                    "nodeRepairConfig",
                    key,
                    &[
                        "enabled",
                        "maxUnhealthyNodeThresholdPercentage",
                        "maxUnhealthyNodeThresholdCount",
                        "maxParallelNodesRepairedPercentage",
                        "maxParallelNodesRepairedCount",
                        "nodeRepairConfigOverrides",
                    ],
                );
                continue;
            }
        };
        if name == "overrides" {
            // Each override is judged on its own.
            let mut items = Vec::new();
            for (index, item) in value.as_seq().unwrap_or_default().iter().enumerate() {
                let path = format!(
                    "{}.nodeRepairConfig.nodeRepairConfigOverrides[{index}]",
                    group.path
                );
                let item_origin = group.ctx.origin_at(item.span, &path, Some(group.index));
                items.push(repair_override(group, item, &path).from(item_origin));
            }
            group.set_in("nodeRepair", "overrides", Out::seq(items), origin);
        } else {
            group.set_in("nodeRepair", name, copy(value), origin);
        }
    }
}

/// eksctl's names for EKS's repair actions: eksctl documents `Terminate`
/// and `Restart` and passes them on unchanged, but EKS (and CloudFormation's
/// `AWS::EKS::Nodegroup`) takes `Replace` and `Reboot`.
const REPAIR_ACTION_NAMES: &[(&str, &str)] = &[("Terminate", "Replace"), ("Restart", "Reboot")];

/// A `nodeRepairConfigOverrides` item, its action under EKS's name.
fn repair_override(group: &mut Group<'_>, item: &Node, path: &str) -> Out {
    let mut out = copy(item);
    let action = field(item, "repairAction");
    let renamed = action
        .and_then(text)
        .and_then(|a| REPAIR_ACTION_NAMES.iter().find(|(eksctl, _)| *eksctl == a));
    if let (Some(action), Some((eksctl, eks))) = (action, renamed) {
        out.set("repairAction", Out::str(eks));
        group.ctx.note(
            action.span,
            format!("`{path}.repairAction` `{eksctl}` is imported as `{eks}`, EKS's name for that action"),
            "EKS's repair actions are `Replace`, `Reboot` and `NoAction`; eksctl passes its value on unchanged, which EKS refuses",
        );
    }
    out
}

/// `instancesDistribution` (self-managed): instance types and the spot
/// settings. Returns whether it named instance types.
pub(super) fn distribution(group: &mut Group<'_>, _key: &Key, node: &Node) -> bool {
    let mut named = false;
    let has_strategy = field(node, "spotAllocationStrategy").is_some();
    for (key, value) in self::entries(node) {
        let origin = group.origin_below("instancesDistribution", key);
        match key.name.as_str() {
            "instanceTypes" => {
                group.out.set("instanceTypes", copy(value).from(origin));
                named = !strings(value).is_empty();
            }
            "maxPrice" => group.set_in(
                "instancesDistribution",
                "spotMaxPrice",
                copy_text(value),
                origin,
            ),
            "spotInstancePools" => {
                group.set_in(
                    "instancesDistribution",
                    "spotInstancePools",
                    copy(value),
                    origin,
                );
                // Auto Scaling's default strategy, which pools belong to.
                if !has_strategy {
                    group.set_in(
                        "instancesDistribution",
                        "spotAllocationStrategy",
                        Out::str("lowest-price"),
                        origin,
                    );
                }
            }
            "onDemandBaseCapacity"
            | "onDemandPercentageAboveBaseCapacity"
            | "spotAllocationStrategy"
            | "capacityRebalance" => {
                group.set_in("instancesDistribution", &key.name, copy(value), origin);
            }
            _ => group.unknown_below(
                "instancesDistribution",
                key,
                &[
                    "instanceTypes",
                    "maxPrice",
                    "onDemandBaseCapacity",
                    "onDemandPercentageAboveBaseCapacity",
                    "spotInstancePools",
                    "spotAllocationStrategy",
                    "capacityRebalance",
                ],
            ),
        }
    }
    named
}

/// `instanceSelector`: on a self-managed group, eksynth's
/// `instanceRequirements` (vCPUs and memory, the architecture, types
/// excluded). Returns whether it chose the instances.
pub(super) fn instance_selector(
    group: &mut Group<'_>,
    key: &Key,
    node: &Node,
    chosen: bool,
) -> bool {
    let written = self::entries(node);
    if written.is_empty() {
        return false;
    }
    if chosen {
        group.unmapped(
            key,
            "eksynth chooses instances by attributes only when no type is named: the group keeps the types it names",
        );
        return false;
    }
    if group.managed {
        group.unmapped(
            key,
            &format!(
                "eksynth chooses instances by attributes on self-managed groups only: the blueprint says `instanceType: {}`, eksctl's default type, until `instanceTypes` names the ones the selector would choose",
                super::node_group::DEFAULT_INSTANCE_TYPE
            ),
        );
        return false;
    }
    let origin = group.origin(key);
    let mut requirements = Out::map();
    for (sub, value) in written {
        match sub.name.as_str() {
            "vCPUs" => {
                let mut range = Out::map();
                range.set("min", copy(value));
                range.set("max", copy(value));
                requirements.set("vCpuCount", range);
            }
            "memory" => match memory_mib(value) {
                Some(mib) => {
                    let mut range = Out::map();
                    range.set("min", Out::int(mib));
                    range.set("max", Out::int(mib));
                    requirements.set("memoryMiB", range);
                }
                None => group.unmapped_below(key.name.as_str(), sub, "write memory as GiB, e.g. `4` or `4GiB`"),
            },
            "cpuArchitecture" => requirements.set("architecture", copy(value)),
            "deny" => requirements.set("excludedInstanceTypes", copy(value)),
            "gpus" | "neuron_devices" | "allow" => group.unmapped_below(
                key.name.as_str(),
                sub,
                "Auto Scaling's instance requirements in eksynth choose by vCPUs, memory, generation and exclusions",
            ),
            _ => group.unknown_below(
                key.name.as_str(),
                sub,
                &["vCPUs", "memory", "gpus", "neuron_devices", "cpuArchitecture", "allow", "deny"],
            ),
        }
    }
    group
        .out
        .set("instanceRequirements", requirements.from(origin));
    true
}

/// eksctl's memory (`4`, `4GiB`, `512MiB`) in MiB.
fn memory_mib(node: &Node) -> Option<i64> {
    let written = match &node.value {
        Value::Int(i) => return Some(i * 1024),
        Value::Float(f) => return Some((f * 1024.0) as i64),
        _ => text(node)?,
    };
    let written = written.trim();
    if let Some(mib) = written.strip_suffix("MiB") {
        return mib.trim().parse().ok();
    }
    let gib = written.strip_suffix("GiB").unwrap_or(written).trim();
    gib.parse::<f64>().ok().map(|g| (g * 1024.0) as i64)
}
