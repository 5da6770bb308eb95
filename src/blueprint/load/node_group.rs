//! A node group entry (or `defaults`) as written: its fields decoded into a
//! `GroupSpec`, `defaults` merged under it, and the rules for its names.

use super::ami::decode_ami;
use super::group_sections::{
    ImdsSpec, check_label, decode_efs, decode_imds, decode_subnets, decode_taint,
};
use super::iam::{IamSpec, decode_iam};
use super::instances::{
    TypeSpec, check_placement_group_name, decode_capacity_reservation, decode_instance_types,
    decode_requirements, is_reservation_id,
};
use super::kubelet::decode_kubelet;
use super::launch_options::{CPU_CREDITS, LaunchOptionsSpec, decode_launch_options};
use super::networking::{NODE_SECURITY_GROUPS, decode_security_groups, security_groups_schema};
use super::node_repair::decode_node_repair;
use super::read::{Opt, duration, opt_bool, opt_string, opt_strings, opt_u32};
use super::scaling::{
    DistributionSpec, UpdateSpec, decode_distribution, decode_lifecycle, decode_update,
    decode_update_config,
};
use super::storage::{
    DataVolumeSpec, INSTANCE_STORE_POLICIES, VolumeSpec, decode_volume, decode_volumes,
};
use crate::blueprint::compose;
use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::field::{Field, Text, Ty, choices};
use crate::blueprint::hatches::HatchSpec;
use crate::blueprint::limits;
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// `nodeConfig` in the JSON Schema: nodeadm's own `spec` schema.
fn node_config_schema(doc: &str) -> serde_json::Value {
    let mut spec = crate::upstream::node_config::spec_schema().clone();
    if let serde_json::Value::Object(map) = &mut spec {
        map.insert("description".into(), serde_json::json!(doc));
    }
    spec
}

pub(in crate::blueprint) const GROUP_FIELDS: &[Field] = &[
    Field::new("name", Ty::pattern("^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$", Some(63)), "")
        .required_when("yes")
        .long("letters, digits and single dashes, starting with a letter, at most 63 characters")
        .per_group(),
    Field::new("amiFamily", Ty::OneOf(|| choices(&AmiFamily::ALL)), "")
        .default("`AmazonLinux2023`")
        .long("the image family; `AmazonLinux2` only up to Kubernetes 1.32. A public EKS SSM path in `ami` names the family, so it may be left out then"),
    Field::new("ami", Ty::Either(&[Ty::pattern("^(recommended|ami-[0-9a-f]{8}([0-9a-f]{9})?)$", None), Ty::Object("ami")]), "`recommended`, a pinned AMI ID, or a custom image from an SSM parameter or a template parameter")
        .default("`recommended`")
        .long("`recommended` (the EKS-optimized image, through its public SSM parameter), a pinned `ami-…` ID, or a custom image: `{ssmParameter: /path}` (a parameter `ImageIdCustom<Id>` of type `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>` defaulting to the path, resolved at each deploy) or `{parameter: Name, default: ami-…}` (a parameter of type `AWS::EC2::Image::Id`). A public EKS path names the family, so `amiFamily` may be left out: `/aws/service/eks/optimized-ami/<version>/amazon-linux-2023/…` is `AmazonLinux2023`, `…/amazon-linux-2[-arm64|-gpu]/…` `AmazonLinux2`, `/aws/service/bottlerocket/aws-k8s-…` `Bottlerocket`, `/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-<version>/image_id` `WindowsServer2022Core` (and so on); an `amiFamily` of another family is an error. Any custom image gets the full bootstrap, also on a managed group"),
    Field::new("kubernetesVersion", Ty::STRING_OR_NUMBER, "The group's Kubernetes version, quoted, while it lags the cluster's in a staged upgrade (at most 3 minor versions older, never newer)")
        .default("the cluster's")
        .long("the group's own Kubernetes version (quoted, `\"1.33\"`) while it lags the cluster in a staged upgrade: at most 3 minor versions older than `cluster.kubernetesVersion` and never newer (the [Kubernetes version-skew policy](https://kubernetes.io/releases/version-skew-policy/) for kubelets); its image, its managed `Version` and the family rules (AL2 ends with 1.32) follow it"),
    Field::new("fips", Ty::Boolean, "Bottlerocket's FIPS image (EKS-optimized only)")
        .default("false")
        .long("Bottlerocket on the EKS-optimized image: its FIPS variant, `aws-k8s-<version>[-nvidia]-fips` (Kubernetes 1.28 and later; NVIDIA 1.29 and later), and on a managed group `AmiType` `BOTTLEROCKET_x86_64_FIPS`, `BOTTLEROCKET_ARM_64_FIPS` or their `_NVIDIA_FIPS` forms. Refused on other families and with a custom `ami`"),
    Field::new("instanceType", Ty::STRING, "One instance type")
        .required_when("unless `instanceTypes` or `instanceRequirements`")
        .long("one instance type; see `instanceTypes`"),
    Field::new("instanceTypes", Ty::List { item: &Ty::Either(&[Ty::STRING, Ty::Object("weightedInstanceType")]), min: Some(1), max: Some(20) }, "Instance types, each a name or (self-managed) `{type, weight}`: with weights, sizes count capacity units")
        .required_when("unless `instanceType` or `instanceRequirements`")
        .long("one type, or up to 20 (same architecture); the architecture (x86_64, arm64) and accelerator (NVIDIA, Neuron) follow from them and pick the AMI. Self-managed, an item may be `{type, weight}` (`WeightedCapacity`, 1 to 999; every type then needs one): sizes then count capacity units, and the creation policy waits for the initial capacity over the largest weight, the fewest instances that make it"),
    Field::new("minSize", Ty::integer(0, 10_000), "Instances")
        .default("1"),
    Field::new("maxSize", Ty::integer(1, 10_000), "Instances")
        .required_when("yes"),
    Field::new("desiredCapacity", Ty::integer(0, 10_000), "Instances")
        .long("leave unset when the cluster autoscaler owns it"),
    Field::new("subnets", Ty::Either(&[Ty::STRINGS, Ty::Source]), "")
        .required_when("yes")
        .long("list of subnet IDs, `{parameter: …}` or `{import: …}`"),
    Field::new("labels", Ty::StringMap, "Kubernetes labels")
        .long("map; checked against Kubernetes syntax and kubelet's reserved prefixes"),
    Field::new("taints", Ty::list(&Ty::Object("taint")), "")
        .long("list of `{key, value, effect}`; effect `NoSchedule`, `PreferNoSchedule`, `NoExecute` (or `NO_SCHEDULE`…)"),
    Field::new("maxPods", Ty::integer(1, 737), "Pods per node")
        .default("AMI default")
        .long("at most what the smallest of the group's instance types can address: `interfaces × (addresses per interface − 1) + 2` (29 for `m7g.large`), or with `cluster.prefixDelegation`, `interfaces × (addresses per interface − 1) × 16 + 2`, from the table the EKS AMIs use (vendored in `data/eni-max-pods/`); an instance type the table does not know is not checked"),
    Field::new("kubelet", Ty::Object("kubelet"), "Kubelet settings: any KubeletConfiguration (kubelet.config.k8s.io/v1beta1) field")
        .long("any `KubeletConfiguration` (`kubelet.config.k8s.io/v1beta1`) field; see [Escape hatches](../README.md#escape-hatches)"),
    Field::new("nodeConfig", Ty::Custom {
            schema: node_config_schema,
            reads: "mapping: a nodeadm `NodeConfig` `spec` fragment",
        }, "AmazonLinux2023: a nodeadm NodeConfig `spec` fragment, merged into the generated one")
        .long("AL2023: a nodeadm `NodeConfig` `spec` fragment; see [Escape hatches](../README.md#escape-hatches)"),
    Field::new("rootVolume", Ty::Object("rootVolume"), "The root (Bottlerocket: data) volume")
        .default("20 GiB gp3, encrypted")
        .long("`size`, `type`, `iops`, `throughput`, `encrypted`, `kmsKeyId` (a key ID, ARN or alias, `{parameter: …}` or `{import: …}`); size, IOPS and throughput within EC2's limits for the type (gp3: 3,000 to 80,000 IOPS, at most 500 per GiB above 3,000, 125 to 2,000 MiB/s, at most 1 MiB/s per 4 IOPS; io1: 50 IOPS per GiB; io2: 1,000). Bottlerocket: this is the data volume (`/dev/xvdb`)"),
    Field::new("volumes", Ty::list(&Ty::Object("volume")), "Extra EBS volumes, encrypted unless `encrypted: false`")
        .long("extra EBS volumes, each `{deviceName, size, type, iops, throughput, encrypted, kmsKeyId, snapshotId, deleteOnTermination}`: gp3, encrypted and deleted with the instance unless set otherwise, `size` or `snapshotId` required, within the same limits as `rootVolume`. Device names: `/dev/xvd[b-z]` or `/dev/sd[b-z]` on Linux (one letter is one device in either spelling; `/dev/xvda` is the root), from `c` on Bottlerocket (`/dev/xvdb` is its data volume), `xvd[b-z]` on Windows. The volumes are attached, not formatted or mounted: do that in `preBootstrapCommands` (Bottlerocket: a bootstrap container)"),
    Field::new("instanceStore", Ty::OneOf(|| choices(INSTANCE_STORE_POLICIES)), "Assemble the instance store NVMe disks into one RAID 0 array for kubelet and the container runtime (AL2023, AL2, Bottlerocket)")
        .long("`raid0`: assemble the instance store NVMe disks into one RAID 0 array that kubelet and the container runtime use. AL2023: nodeadm's `instance.localStorage.strategy: RAID0` (a different strategy in `nodeConfig` is an error); AL2: `bootstrap.sh --local-disks raid0` (on the EKS AMI of a managed group, whose `bootstrap.sh` call EKS writes, the AMI's `/bin/setup-local-disks raid0` before it); Bottlerocket (1.22 or later): the bootstrap command `000-eksynth-instance-store`, `apiclient ephemeral-storage init` then `bind` of `/var/lib/containerd`, `/var/lib/kubelet` and `/var/log/pods`. Not on Windows. Meant for instance types with NVMe instance store (`m6id`, `c6gd`, `i4i`…)"),
    Field::new("imds", Ty::Object("imds"), "Instance metadata service settings")
        .default("required tokens, hop limit 1")
        .long("`httpTokens` (`required`/`optional`), `hopLimit` (1-3), `blockPods` (iptables rule that drops pod traffic to IMDS), `instanceTags` (self-managed groups: the instance's tags readable from IMDS; EC2 then refuses tag keys with `/` or spaces, so the `kubernetes.io/cluster/<name>` tag stays on the Auto Scaling group, with a warning)"),
    Field::new("preBootstrapCommands", Ty::STRINGS, "Commands run before the node joins")
        .long("shell commands run before the node joins"),
    Field::new("postBootstrapCommands", Ty::STRINGS, "Commands run once the node has joined the cluster, before the signal (self-managed AL2023, AL2, Windows); a failure sends FAILURE")
        .long("self-managed AL2023, AL2, Windows: commands run once the node has joined (see [The signal](../README.md#the-signal)), before the signal; a failure sends FAILURE (see [Escape hatches](../README.md#escape-hatches-in-user-data))"),
    Field::new("userDataParts", Ty::list(&Ty::Object("userDataPart")), "Extra MIME parts of the user data (AL2023, AL2), before eksynth's shell part")
        .long("AL2023, AL2: extra MIME parts, `{contentType, content}` with `text/x-shellscript`, `text/cloud-config` or `text/cloud-boothook`"),
    Field::new("bottlerocket", Ty::Object("bottlerocket"), "Bottlerocket settings beyond eksynth's own")
        .long("Bottlerocket: `settings`, any Bottlerocket settings merged into eksynth's TOML; the ones eksynth writes are refused"),
    Field::new("efsMounts", Ty::list(&Ty::Object("efsMount")), "")
        .long("list of `{fileSystemId, mountPoint}`"),
    Field::new("tags", Ty::StringMap, "Extra tags")
        .long("map of extra tags, propagated to instances and volumes; keys of 1 to 128 characters not starting with `aws:`, values of up to 256 (characters, not bytes); see [Tags](../README.md#tags) for the keys eksynth writes itself"),
    Field::new("iam", Ty::Object("iam"), "The node role")
        .default("new role")
        .long("`cniUsesIrsa`, `ssmManagedInstance`, `extraManagedPolicies`, `roleName` (existing role, with its path in `rolePath`), `instanceProfileArn` (existing profile, with `roleName`: an ARN that may name `${AWS::Partition}` and `${AWS::AccountId}`, or `{parameter: Name}` / `{import: Export}`); for the role the stack creates: `createdRoleName`, `rolePath`, `permissionsBoundary`, `instanceProfilePath` (self-managed), `policyStatements`; see [IAM governance](../README.md#iam-governance)"),
    Field::new("securityGroups", Ty::Custom {
            schema: security_groups_schema,
            reads: "list of security group IDs (`sg-…`), `{parameter: Name}` or `{import: ExportName}`",
        }, "Extra security groups: IDs, `{parameter: Name}` or `{import: ExportName}`")
        .long("extra security groups, each an ID, `{parameter: Name}` (an `AWS::EC2::SecurityGroup::Id` parameter) or `{import: ExportName}` (an export holding one ID)"),
    Field::new("nodeSecurityGroup", Ty::OneOf(|| choices(NODE_SECURITY_GROUPS)), "")
        .default("`shared`")
        .long("`shared`: the stack's node security group, with the rules of the official node group template; `cluster`: the cluster security group (`cluster.clusterSecurityGroup`), which lets nodes and control plane talk already. The node security group is emitted only when some group uses it"),
    Field::new("associatePublicIpAddress", Ty::Boolean, "A public IPv4 address on each node's primary interface (internet-reachable nodes)")
        .default("false")
        .long("a public IPv4 address on each node's primary network interface, which then carries the security groups (warning `W8006`: the nodes are reachable from the internet)"),
    Field::new("keyName", Ty::STRING, "An EC2 key pair (SSH is off unless set)")
        .long("EC2 key pair (SSH is off unless set)"),
    Field::new("ssh", Ty::Object("ssh"), "Who may reach the nodes on port 22 (needs `keyName`; not on Windows)")
        .long("with `keyName`: `sourceSecurityGroups` (IDs, `{parameter}` or `{import}`) and `sourceCidrs` (IPv4 or IPv6 networks: no host bits set, no spaces or leading zeros; never a block, nor blocks together, covering every address of a family, as `0.0.0.0/0` or `0.0.0.0/1` with `128.0.0.0/1`: error `E5005`) allowed in on port 22, through a security group of the group's own; not on Windows (no SSH server); on Bottlerocket, SSH reaches the admin container, which `bottlerocket.settings` must enable"),
    Field::new("detailedMonitoring", Ty::Boolean, "Detailed monitoring")
        .default("false")
        .long("1-minute CloudWatch metrics of the instances (the launch template's `Monitoring`)"),
    Field::new("ebsOptimized", Ty::Boolean, "`EbsOptimized` of the launch template (current types are EBS-optimized by default)")
        .default("EC2's default for the type")
        .long("the launch template's `EbsOptimized`; current types are EBS-optimized anyway, and `true` is refused on T2 types, which cannot be"),
    Field::new("cpuOptions", Ty::Object("cpuOptions"), "`CpuOptions` of the launch template: core count (one instance type), threads per core, AMD SEV-SNP")
        .default("the type's own")
        .long("the launch template's `CpuOptions`: `coreCount` (needs exactly one instance type, since core counts differ between types), `threadsPerCore` (`1` turns simultaneous multithreading off, `2`), `amdSevSnp: true` (AMD SEV-SNP; every type must be M6a, R6a or C6a). Replaced whole by a group's own"),
    Field::new("cpuCredits", Ty::OneOf(|| choices(CPU_CREDITS)), "CPU credits of burstable instances (T2, T3, T3a, T4g types only)")
        .default("the type's default")
        .long("`standard` or `unlimited`: the launch template's `CreditSpecification` for burstable instances; every instance type must be T2, T3, T3a or T4g (not with `instanceRequirements`, which leaves burstable types out)"),
    Field::new("enclave", Ty::Boolean, "Nitro Enclaves on the nodes (not on burstable types or below 4 vCPUs)")
        .default("false")
        .long("Nitro Enclaves on the nodes (`EnclaveOptions`); refused on burstable types and on sizes below 4 vCPUs (`large` and smaller), and with `instanceRequirements` whose `vCpuCount.min` is below 4. The enclave images and the Nitro Enclaves allocator are the user's to install (`preBootstrapCommands`, a DaemonSet)"),
    Field::new("clusterAutoscaler", Ty::Either(&[Ty::Boolean, Ty::Object("clusterAutoscaler")]), "Self-managed: the cluster autoscaler's tags (true or false); any group: `{priority}` for the priority expander (`eksynth autoscaler-priorities`)")
        .default("true")
        .long("self-managed: the cluster autoscaler's tags (`true`/`false`); any group: `{enabled, priority}`, `priority` (0 to 1,000,000) for [`autoscaler-priorities`](../README.md#autoscaler-priorities); `enabled` is refused on managed groups (EKS tags their Auto Scaling groups itself) and a priority with `enabled: false`; `clusterAutoscaler: false` takes no priority from `defaults`"),
    Field::new("updatePolicy", Ty::Object("updatePolicy"), "The rolling update")
        .default("1 / initial capacity / signal timeout")
        .long("`maxBatchSize`, `minInstancesInService` (< `maxSize`), `pauseTime`")
        .self_managed(),
    Field::new("signalTimeout", Ty::Duration, "How long nodes have to report a healthy kubelet")
        .default("`PT15M`")
        .long("how long CloudFormation waits for a node's signal; the node itself gives up 5 minutes earlier (see [The signal](../README.md#the-signal))")
        .self_managed(),
    Field::new("signalClient", Ty::OneOf(|| choices(SIGNAL_CLIENTS)), "")
        .default("`image`")
        .long("AL2023 and AL2: `image` signals with the image's `cfn-signal`; `embedded` (only with a custom `ami`) embeds a `curl --aws-sigv4` signaller for custom images without it")
        .self_managed(),
    Field::new("perAz", Ty::Boolean, "One group per listed subnet")
        .default("false")
        .long("one group per listed subnet, named `<name>-<subnet ID without subnet->` (`general-0a1b2c3d4e5f60711`), sharing one role"),
    Field::new("capacityType", Ty::OneOf(|| choices(CAPACITY_TYPES)), "")
        .default("`ON_DEMAND`")
        .long("`SPOT` (or `CAPACITY_BLOCK` for managed groups, with `capacityReservationId`); a self-managed spot group gets a mixed instances policy, capacity rebalancing and a `node-lifecycle=spot` label"),
    Field::new("instancesDistribution", Ty::Object("instancesDistribution"), "The spot and on-demand mix")
        .default("all spot when `SPOT`")
        .long("self-managed: `onDemandBaseCapacity`, `onDemandPercentageAboveBaseCapacity`, `onDemandAllocationStrategy` (`prioritized`, the order of `instanceTypes`, or `lowest-price`, the default and the only choice with `instanceRequirements`), `spotAllocationStrategy` (`price-capacity-optimized`, `capacity-optimized`, `capacity-optimized-prioritized` or `lowest-price`), `spotInstancePools` (1-20, with `lowest-price`), `spotMaxPrice` (US dollars an hour, `\"0.35\"`; unset caps spot at the on-demand price), `capacityRebalance`")
        .self_managed(),
    Field::new("bootstrapArguments", Ty::STRING, "Extra bootstrap.sh arguments (AL2)")
        .long("AL2 only: extra `bootstrap.sh` arguments, on one line (they continue its command line; a line break is an error at the field)"),
    Field::new("lifecycle", Ty::Object("lifecycle"), "Lifecycle of a self-managed group")
        .long("self-managed: `terminationHookTimeout` (a termination lifecycle hook for draining tools), `maxInstanceLifetime`, `metricsCollection`, `healthCheckGracePeriod`; `placementGroup` and `capacityReservation` are the older spelling of the group fields (not both); `warmPool` is refused (see below)")
        .self_managed(),
    Field::new("updateConfig", Ty::Object("updateConfig"), "Managed group updates")
        .default("EKS default")
        .long("managed: `maxUnavailable` or `maxUnavailablePercentage`, and `updateStrategy`: `DEFAULT` (new nodes first) or `MINIMAL` (old nodes terminated first, for scarce capacity such as GPUs)")
        .managed(),
    Field::new("forceUpdateEnabled", Ty::Boolean, "Force updates past pod disruption budgets")
        .long("managed: `ForceUpdateEnabled` of `AWS::EKS::Nodegroup`: updates go on past pod disruption budgets")
        .managed(),
    Field::new("releaseVersion", Ty::STRING, "The EKS AMI release version")
        .long("managed: `ReleaseVersion` of `AWS::EKS::Nodegroup`, the EKS AMI release version")
        .managed(),
    Field::new("amiType", Ty::STRING, "The EKS AMI type")
        .long("managed: `AmiType` of `AWS::EKS::Nodegroup`; follows from the family and instance types unless set, and is refused with a custom `ami` (and must be a `_FIPS` type with `fips`)")
        .managed(),
    Field::new("nodegroupName", Ty::pattern("^[A-Za-z0-9][-A-Za-z0-9_]*$", Some(63)), "Managed: the EKS node group's name (default: the group's name)")
        .default("the group's `name`")
        .long("managed: the EKS node group's name (`aws eks list-nodegroups`), 1 to 63 letters, digits, `-` and `_`, starting with a letter or digit, unique in the blueprint; not in `defaults`. A `perAz` group adds `-<subnet ID without subnet->` to it")
        .managed()
        .per_group(),
    Field::new("capacityReservationId", Ty::pattern("^cr-[0-9a-f]{17}$", None), "Managed, with capacityType CAPACITY_BLOCK: the capacity block's reservation ID")
        .long("managed, required with `capacityType: CAPACITY_BLOCK` (and only then): the capacity block's reservation (`cr-…`). The group takes exactly one instance type, which goes into the launch template with `InstanceMarketOptions.MarketType: capacity-block` and the reservation as `CapacityReservationTarget`, and the node group lists no `InstanceTypes`, as EKS requires for capacity blocks")
        .managed(),
    Field::new("nodeRepair", Ty::Object("nodeRepair"), "EKS node auto repair (managed)")
        .default("off")
        .long("managed: EKS node auto repair (`NodeRepairConfig`); `enabled` (true once the section is written), at most one of `maxUnhealthyNodeThresholdCount`/`…Percentage` (repair stops above it), at most one of `maxParallelNodesRepairedCount`/`…Percentage`, and `overrides`: a list of `{nodeMonitoringCondition, nodeUnhealthyReason, minRepairWaitTimeMins, repairAction}` (`Replace`, `Reboot` or `NoAction`), each with all four, as EKS requires. Settings with `enabled: false` are an error. Replaced whole by a group's own")
        .managed(),
    Field::new("autoScalingGroupName", Ty::pattern("^[A-Za-z0-9._-]+$", Some(255)), "Self-managed: the Auto Scaling group's name (create-only: changing it replaces the group); not in defaults")
        .default("generated")
        .long("self-managed: the Auto Scaling group's name, up to 255 letters, digits, `-`, `_` and `.`, unique in the blueprint; not in `defaults`. A `perAz` group adds `-<subnet ID without subnet->`. Create-only: setting, changing or removing it replaces the group, and `eksynth diff` reports that as a critical replacement")
        .self_managed()
        .per_group(),
    Field::new("instanceRequirements", Ty::Object("instanceRequirements"), "Self-managed: choose instance types by attributes instead of by name")
        .long("self-managed: choose the types by attributes instead of by name, in the mixed instances policy: `vCpuCount` and `memoryMiB` (`{min, max}`, both required, `max` optional), `instanceGenerations` (`current`, `previous`), `excludedInstanceTypes` (types or `*` patterns, at most 400), and `architecture` (`x86_64`, the default, or `arm64`). Auto Scaling's requirements have no architecture (the image decides which matching types launch), so `architecture` picks the image; the group has no accelerator variant and `maxPods` is not checked. Not with `instanceType(s)` (a group that sets one of the three takes none of them from `defaults`); refused for managed groups, whose API names types only"),
    Field::new("placementGroup", Ty::Text(Text { pattern: None, min_length: Some(1), max_length: Some(255), numbers: false }), "An existing placement group the instances launch into")
        .default("none (an `efa` group: its own)")
        .long("an existing placement group, self-managed and managed (the launch template's `Placement.GroupName`)"),
    Field::new("capacityReservation", Ty::Either(&[Ty::OneOf(|| vec!["open", "none"]), Ty::pattern("^cr-[0-9a-f]{17}$", None), Ty::Object("capacityReservation")]), "The capacity reservations the instances launch into: `open`, `none`, a reservation ID, or a resource group")
        .default("EC2's (`open`)")
        .long("self-managed and managed: `open`, `none`, a reservation ID (`cr-…`), or `{resourceGroupArn: …}` (`${AWS::Partition}` and the other pseudo parameters may be written in it); in the launch template's `CapacityReservationSpecification`. Not with a capacity block, which has `capacityReservationId`"),
    Field::new("efa", Ty::Boolean, "An Elastic Fabric Adapter as the primary interface, in a cluster placement group (EFA-capable types, one subnet)")
        .default("false")
        .long("an Elastic Fabric Adapter as the primary interface (`InterfaceType: efa`, device index 0, carrying the security groups), a cluster placement group made for the group (unless `placementGroup` names one), and a rule on the node security group that lets all traffic out to itself (EFA needs it both ways; the inbound one is there for every stack). Every instance type must support EFA (the list AWS's EFA device plugin chart is built with, vendored in `data/efa/`), the group launches in one subnet (list one, or `perAz: true`), and the family must carry the EFA driver: AL2023 and Bottlerocket; AL2 only with a custom `ami`; not Windows. Not with `instanceRequirements`. One EFA interface is attached per network card (`p4d.24xlarge` has 4, `trn1.32xlarge` 8, `p5.48xlarge` 32; counts vendored in `data/efa/`): the primary on card 0 at device index 0, the others at device index 1 of cards 1 and up, as eksctl does. With several instance types of different card counts, the group gets the fewest, which every type can launch with. Several interfaces leave no room for `associatePublicIpAddress` (an error: EC2 gives a public address only to a single interface). Pods reach the adapter through the EFA Kubernetes device plugin, which the cluster must run"),
];
/// `clusterAutoscaler` written as a mapping.
pub(in crate::blueprint) const CLUSTER_AUTOSCALER_FIELDS: &[Field] = &[
    Field::new(
        "enabled",
        Ty::Boolean,
        "Self-managed: the cluster autoscaler's tags (default true)",
    )
    .default("`true`"),
    Field::new(
        "priority",
        Ty::integer(0, 1_000_000),
        "The group's priority in the cluster-autoscaler-priority-expander ConfigMap (higher wins)",
    ),
];
/// `signalClient`: what sends an AL2023 or AL2 node's signal.
pub(in crate::blueprint) const SIGNAL_CLIENTS: &[(&str, SignalClient)] = &[
    ("image", SignalClient::Image),
    ("embedded", SignalClient::Embedded),
];
pub(in crate::blueprint) const CAPACITY_TYPES: &[(&str, CapacityType)] = &[
    ("ON_DEMAND", CapacityType::OnDemand),
    ("SPOT", CapacityType::Spot),
    ("CAPACITY_BLOCK", CapacityType::CapacityBlock),
];

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
    pub(super) capacity_reservation: Opt<CapacityReservation>,
    /// The older spellings under `lifecycle`, taken with it.
    pub(super) lifecycle_placement_group: Opt<String>,
    pub(super) lifecycle_capacity_reservation: Opt<CapacityReservation>,
    pub(super) efa: Opt<bool>,
    pub(super) min_size: Opt<u32>,
    pub(super) max_size: Opt<u32>,
    pub(super) desired_capacity: Opt<u32>,
    pub(super) subnets: Opt<Subnets>,
    pub(super) labels: Vec<(Located<String>, Located<String>)>,
    pub(super) taints: Opt<Vec<Located<Taint>>>,
    pub(super) max_pods: Opt<u32>,
    pub(super) kubelet: Vec<(Located<String>, serde_json::Value)>,
    /// `nodeConfig` as written, checked once the family is known.
    pub(super) node_config: Option<Node>,
    pub(super) root_volume: VolumeSpec,
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
    pub(super) bootstrap_arguments: Opt<String>,
    pub(super) lifecycle: Opt<Lifecycle>,
    pub(super) max_unavailable: Opt<Amount>,
    pub(super) update_strategy: Opt<UpdateStrategy>,
    pub(super) node_repair: Opt<NodeRepair>,
    pub(super) force_update_enabled: Opt<bool>,
    pub(super) release_version: Opt<String>,
    pub(super) ami_type: Opt<String>,
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
            capacity_reservation: self.capacity_reservation.or(d.capacity_reservation),
            lifecycle_placement_group,
            lifecycle_capacity_reservation,
            efa: self.efa.or(d.efa),
            min_size: self.min_size.or(d.min_size),
            max_size: self.max_size.or(d.max_size),
            desired_capacity: self.desired_capacity.or(d.desired_capacity),
            subnets: self.subnets.or(d.subnets),
            labels: merge_pairs(&d.labels, &self.labels),
            taints: self.taints.or(d.taints),
            max_pods: self.max_pods.or(d.max_pods),
            kubelet: merge_pairs(&d.kubelet, &self.kubelet),
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
            bootstrap_arguments: self.bootstrap_arguments.or(d.bootstrap_arguments),
            lifecycle: self.lifecycle.or(d.lifecycle),
            max_unavailable: self.max_unavailable.or(d.max_unavailable),
            update_strategy: self.update_strategy.or(d.update_strategy),
            node_repair: self.node_repair.or(d.node_repair),
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
    spec.capacity_reservation = f
        .get("capacityReservation")
        .and_then(|n| decode_capacity_reservation(d, "capacityReservation", n));
    spec.efa = opt_bool(d, f, "", "efa");
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
    if let Some(n) = f.get("kubelet") {
        spec.kubelet = decode_kubelet(d, n);
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
    spec.detailed_monitoring = opt_bool(d, f, "", "detailedMonitoring");
    spec.launch_options = decode_launch_options(d, f);
    spec.associate_public_ip = opt_bool(d, f, "", "associatePublicIpAddress");
    spec.node_security_group = f.get("nodeSecurityGroup").and_then(|n| {
        d.choice(
            "nodeSecurityGroup",
            n,
            super::networking::NODE_SECURITY_GROUPS,
        )
    });
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
