//! The fields of a node group entry (and of `defaults`), declared once:
//! the table `node_group.rs` decodes a group with, and the value lists of
//! the fields it decodes itself. Each nested section's own table is beside
//! its decoder (`IMDS_FIELDS` in `group_sections.rs`, ...).

use super::launch_options::{AUTO_RECOVERY, CPU_CREDITS};
use super::load_balancers::MAX_LOAD_BALANCERS;
use super::networking::{NODE_SECURITY_GROUPS, security_groups_schema};
use super::storage::INSTANCE_STORE_POLICIES;
use crate::blueprint::field::{Field, Text, Ty, choices};
use crate::blueprint::*;

/// `nodeConfig` in the JSON Schema: nodeadm's own `spec` schema.
fn node_config_schema(doc: &str) -> serde_json::Value {
    let mut spec = crate::upstream::node_config::spec_schema().clone();
    if let serde_json::Value::Object(map) = &mut spec {
        map.insert("description".into(), serde_json::json!(doc));
    }
    spec
}

/// The most instance types a self-managed group's mixed instances policy
/// takes: "You can specify up to 40 instance types per Auto Scaling group"
/// (`LaunchTemplateOverrides`,
/// <https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_LaunchTemplateOverrides.html>).
pub(in crate::blueprint) const MAX_AUTO_SCALING_TYPES: usize = 40;
/// The most a managed group's `InstanceTypes` takes: "0-20 instance types"
/// (`AWS::EKS::Nodegroup` `InstanceTypes`,
/// <https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-eks-nodegroup.html#cfn-eks-nodegroup-instancetypes>).
pub(in crate::blueprint) const MAX_NODEGROUP_TYPES: usize = 20;

pub(in crate::blueprint) const GROUP_FIELDS: &[Field] = &[
    Field::new(
        "name",
        Ty::pattern("^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$", Some(63)),
        "",
    )
    .required_when("yes")
    .long(
        "letters, digits and single dashes, starting with a letter, at most 63 \
        characters",
    )
    .per_group(),
    Field::new("amiFamily", Ty::OneOf(|| choices(&AmiFamily::ALL)), "")
        .default("`AmazonLinux2023`")
        .long(
            "the image family; `AmazonLinux2` only up to Kubernetes 1.32. A public \
            EKS SSM path in `ami` names the family, so it may be left out then. \
            `Ubuntu2204` (Kubernetes 1.29 and later) and `Ubuntu2404` (1.31 and \
            later) are Canonical's EKS images, from Canonical's public SSM \
            parameters (`/aws/service/canonical/ubuntu/eks/<release>/<version>/\
            stable/current/<amd64|arm64>/hvm/<ebs-gp2|ebs-gp3>/ami-id`), \
            bootstrapped with their own `/etc/eks/bootstrap.sh`; no GPU or \
            Neuron instance types, `instanceStore`, `efsMounts` or warm pool. \
            The images carry no `cfn-signal`, so the nodes sign their signal \
            themselves (`signalClient` is `embedded`). By decision, a managed \
            group cannot run them on Canonical's image, since EKS has no Ubuntu \
            AMI type: use a self-managed group, or pin the image as a custom \
            `ami`. Changing the family rolls the nodes (a new image and user \
            data in the launch template)",
        ),
    Field::new(
        "ami",
        Ty::Either(&[
            Ty::pattern("^(recommended|ami-[0-9a-f]{8}([0-9a-f]{9})?)$", None),
            Ty::Object("ami"),
        ]),
        "`recommended`, a pinned AMI ID, or a custom image from an SSM parameter \
        or a template parameter",
    )
    .default("`recommended`")
    .long(
        "`recommended` (the EKS-optimized image, through its public SSM \
        parameter), a pinned `ami-…` ID, or a custom image: `{ssmParameter: \
        /path}` (a parameter `ImageIdCustom<Id>` of type \
        `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>` defaulting to the \
        path, resolved at each deploy) or `{parameter: Name, default: ami-…}` (a \
        parameter of type `AWS::EC2::Image::Id`). A public EKS path names the \
        family, so `amiFamily` may be left out: \
        `/aws/service/eks/optimized-ami/<version>/amazon-linux-2023/…` is \
        `AmazonLinux2023`, `…/amazon-linux-2[-arm64|-gpu]/…` `AmazonLinux2`, \
        `/aws/service/bottlerocket/aws-k8s-…` `Bottlerocket`, \
        `/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Op\
        timized-<version>/image_id` `WindowsServer2022Core` (and so on), \
        `/aws/service/canonical/ubuntu/eks/24.04/…` `Ubuntu2404`; an \
        `amiFamily` of another family is an error. Any custom image gets the \
        full bootstrap, also on a managed group",
    ),
    Field::new(
        "kubernetesVersion",
        Ty::STRING_OR_NUMBER,
        "The group's Kubernetes version, quoted, while it lags the cluster's in a \
        staged upgrade (at most 3 minor versions older, never newer)",
    )
    .default("the cluster's")
    .long(
        "the group's own Kubernetes version (quoted, `\"1.33\"`) while it lags \
        the cluster in a staged upgrade: at most 3 minor versions older than \
        `cluster.kubernetesVersion` and never newer (the [Kubernetes \
        version-skew \
        policy](https://kubernetes.io/releases/version-skew-policy/) for \
        kubelets); its image, its managed `Version` and the family rules (AL2 \
        ends with 1.32) follow it",
    ),
    Field::new(
        "fips",
        Ty::Boolean,
        "Bottlerocket's FIPS image (EKS-optimized only)",
    )
    .default("false")
    .long(
        "Bottlerocket on the EKS-optimized image: its FIPS variant, \
        `aws-k8s-<version>[-nvidia]-fips` (Kubernetes 1.28 and later; NVIDIA \
        1.29 and later), and on a managed group `AmiType` \
        `BOTTLEROCKET_x86_64_FIPS`, `BOTTLEROCKET_ARM_64_FIPS` or their \
        `_NVIDIA_FIPS` forms. Refused on other families and with a custom `ami`",
    ),
    Field::new("instanceType", Ty::STRING, "One instance type")
        .required_when("unless `instanceTypes` or `instanceRequirements`")
        .long("one instance type; see `instanceTypes`"),
    Field::new(
        "instanceTypes",
        Ty::List {
            item: &Ty::Either(&[Ty::STRING, Ty::Object("weightedInstanceType")]),
            min: Some(1),
            max: Some(MAX_AUTO_SCALING_TYPES as u32),
        },
        "Instance types, each a name or (self-managed) `{type, weight}`: with \
        weights, sizes count capacity units",
    )
    .required_when("unless `instanceType` or `instanceRequirements`")
    .long(
        "one type, or several (same architecture): up to 40 on a self-managed \
        group (the most instance types an Auto Scaling group's mixed instances \
        policy takes), up to 20 on a managed group (EKS's limit); the architecture (x86_64, \
        arm64) and accelerator (NVIDIA, Neuron) follow from them and pick the \
        AMI. Self-managed, an item may be `{type, weight}` (`WeightedCapacity`, \
        1 to 999; every type then needs one): sizes then count capacity units, \
        and the creation policy waits for the initial capacity over the largest \
        weight, the fewest instances that make it",
    ),
    Field::new("minSize", Ty::integer(0, 10_000), "Instances").default("1"),
    Field::new("maxSize", Ty::integer(1, 10_000), "Instances").required_when("yes"),
    Field::new("desiredCapacity", Ty::integer(0, 10_000), "Instances")
        .long("leave unset when the cluster autoscaler owns it"),
    Field::new("subnets", Ty::Either(&[Ty::STRINGS, Ty::Source]), "")
        .required_when("yes")
        .long("list of subnet IDs, `{parameter: …}` or `{import: …}`"),
    Field::new("labels", Ty::StringMap, "Kubernetes labels")
        .long("map; checked against Kubernetes syntax and kubelet's reserved prefixes"),
    Field::new("taints", Ty::list(&Ty::Object("taint")), "").long(
        "list of `{key, value, effect}`; effect `NoSchedule`, `PreferNoSchedule`, \
        `NoExecute` (or `NO_SCHEDULE`…)",
    ),
    Field::new("maxPods", Ty::integer(1, 737), "Pods per node")
        .default("AMI default")
        .long(
            "at most what the smallest of the group's instance types can address: \
            `interfaces × (addresses per interface − 1) + 2` (29 for `m7g.large`), \
            or with `cluster.prefixDelegation`, `interfaces × (addresses per \
            interface − 1) × 16 + 2`, from the table the EKS AMIs use (vendored in \
            `data/eni-max-pods/`); an instance type the table does not know is not \
            checked",
        ),
    Field::new(
        "clusterDNS",
        Ty::List {
            item: &Ty::STRING,
            min: Some(1),
            max: Some(super::cluster_dns::MAX_NAMESERVERS),
        },
        "Nameserver addresses kubelet gives pods, e.g. a node-local DNS cache",
    )
    .default("the service CIDR's DNS IP")
    .long(
        "list of one to three IP addresses of the cluster's family (e.g. \
        `[169.254.20.10]` for a node-local DNS cache), in place of the DNS IP \
        of the service CIDR: AL2023 `kubelet.config.clusterDNS` in the \
        NodeConfig, AL2 `bootstrap.sh --dns-cluster-ip` (comma-separated; on \
        a managed group's EKS AMI merged into `kubelet-config.json`), \
        Bottlerocket `settings.kubernetes.cluster-dns-ip` (a list when \
        several), Windows `-DNSClusterIP` (one address; not on a managed \
        group's EKS AMI). Changing it rolls the nodes (new user data)",
    ),
    Field::new(
        "kubelet",
        Ty::Object("kubelet"),
        "Kubelet settings: any KubeletConfiguration \
        (kubelet.config.k8s.io/v1beta1) field",
    )
    .long(
        "any `KubeletConfiguration` (`kubelet.config.k8s.io/v1beta1`) field; see \
        [Escape hatches](../guide/escape-hatches.md)",
    ),
    Field::new(
        "nodeConfig",
        Ty::Custom {
            schema: node_config_schema,
            reads: "mapping: a nodeadm `NodeConfig` `spec` fragment",
        },
        "AmazonLinux2023: a nodeadm NodeConfig `spec` fragment, merged into the \
        generated one",
    )
    .long(
        "AL2023: a nodeadm `NodeConfig` `spec` fragment; see [Escape \
        hatches](../guide/escape-hatches.md)",
    ),
    Field::new(
        "rootVolume",
        Ty::Object("rootVolume"),
        "The root (Bottlerocket: data) volume",
    )
    .default("20 GiB gp3, encrypted")
    .long(
        "`size`, `type`, `iops`, `throughput`, `encrypted`, `kmsKeyId` (a key ID, \
        ARN or alias, `{parameter: …}` or `{import: …}`), `snapshotId` with its \
        `initializationRate`, and `deviceName` for a custom image; size, IOPS and \
        throughput within EC2's limits for the type (gp3: 3,000 to 80,000 IOPS, \
        at most 500 per GiB above 3,000, 125 to 2,000 MiB/s, at most 1 MiB/s per \
        4 IOPS; io1: 50 IOPS per GiB; io2: 1,000). Bottlerocket: this is the \
        data volume (`/dev/xvdb`)",
    ),
    Field::new(
        "volumes",
        Ty::list(&Ty::Object("volume")),
        "Extra EBS volumes, encrypted unless `encrypted: false`",
    )
    .long(
        "extra EBS volumes, each `{deviceName, size, type, iops, throughput, \
        encrypted, kmsKeyId, snapshotId, deleteOnTermination}`: gp3, encrypted \
        and deleted with the instance unless set otherwise, `size` or \
        `snapshotId` required, within the same limits as `rootVolume`. Device \
        names: `/dev/xvd[b-z]` or `/dev/sd[b-z]` on Linux (one letter is one \
        device in either spelling; `/dev/xvda` is the root), from `c` on \
        Bottlerocket (`/dev/xvdb` is its data volume), `xvd[b-z]` on Windows. \
        The volumes are attached, not formatted or mounted: do that in \
        `preBootstrapCommands` (Bottlerocket: a bootstrap container)",
    ),
    Field::new(
        "instanceStore",
        Ty::OneOf(|| choices(INSTANCE_STORE_POLICIES)),
        "Assemble the instance store NVMe disks into one RAID 0 array for kubelet \
        and the container runtime (AL2023, AL2, Bottlerocket)",
    )
    .long(
        "`raid0`: assemble the instance store NVMe disks into one RAID 0 array \
        that kubelet and the container runtime use. AL2023: nodeadm's \
        `instance.localStorage.strategy: RAID0` (a different strategy in \
        `nodeConfig` is an error); AL2: `bootstrap.sh --local-disks raid0` (on \
        the EKS AMI of a managed group, whose `bootstrap.sh` call EKS writes, \
        the AMI's `/bin/setup-local-disks raid0` before it); Bottlerocket (1.22 \
        or later): the bootstrap command `000-eksynth-instance-store`, \
        `apiclient ephemeral-storage init` then `bind` of `/var/lib/containerd`, \
        `/var/lib/kubelet` and `/var/log/pods`. Not on Windows. Meant for \
        instance types with NVMe instance store (`m6id`, `c6gd`, `i4i`…)",
    ),
    Field::new(
        "imds",
        Ty::Object("imds"),
        "Instance metadata service settings",
    )
    .default("required tokens, hop limit 1")
    .long(
        "`httpTokens` (`required`/`optional`), `hopLimit` (1-3), `blockPods` \
        (iptables rule that drops pod traffic to IMDS), `instanceTags` \
        (self-managed groups: the instance's tags readable from IMDS; EC2 then \
        refuses tag keys with `/` or spaces, so the \
        `kubernetes.io/cluster/<name>` tag stays on the Auto Scaling group, with \
        a warning)",
    ),
    Field::new(
        "preBootstrapCommands",
        Ty::STRINGS,
        "Commands run before the node joins",
    )
    .long("shell commands run before the node joins"),
    Field::new(
        "postBootstrapCommands",
        Ty::STRINGS,
        "Commands run once the node has joined the cluster, before the signal \
        (self-managed AL2023, AL2, Windows); a failure sends FAILURE",
    )
    .long(
        "self-managed AL2023, AL2, Windows: commands run once the node has joined \
        (see [The signal](../guide/signal.md)), before the signal; a \
        failure sends FAILURE (see [Escape \
        hatches](../guide/user-data.md#escape-hatches-in-user-data))",
    ),
    Field::new(
        "userDataParts",
        Ty::list(&Ty::Object("userDataPart")),
        "Extra MIME parts of the user data (AL2023, AL2), before eksynth's shell \
        part",
    )
    .long(
        "AL2023, AL2: extra MIME parts, `{contentType, content}` with \
        `text/x-shellscript`, `text/cloud-config` or `text/cloud-boothook`",
    ),
    Field::new(
        "bottlerocket",
        Ty::Object("bottlerocket"),
        "Bottlerocket settings beyond eksynth's own",
    )
    .long(
        "Bottlerocket: `settings`, any Bottlerocket settings merged into \
        eksynth's TOML; the ones eksynth writes are refused",
    ),
    Field::new("efsMounts", Ty::list(&Ty::Object("efsMount")), "")
        .long("list of `{fileSystemId, mountPoint}`"),
    Field::new("tags", Ty::StringMap, "Extra tags").long(
        "map of extra tags, on the group's instances, volumes, Auto Scaling group \
        or managed node group, and its node role, security groups and access \
        entry (changed in place); keys of 1 to 128 characters not starting with \
        `aws:`, values of up to 256 (characters, not bytes), in IAM's characters \
        when the stack creates the role; see [Tags](../guide/tags.md) for the keys \
        eksynth writes itself",
    ),
    Field::new("iam", Ty::Object("iam"), "The node role")
        .default("new role")
        .long(
            "`cniUsesIrsa`, `ssmManagedInstance`, `extraManagedPolicies`, `roleName` \
            (existing role, with its path in `rolePath`), `instanceProfileArn` \
            (existing profile, with `roleName`: an ARN that may name \
            `${AWS::Partition}` and `${AWS::AccountId}`, or `{parameter: Name}` / \
            `{import: Export}`); for the role the stack creates: `createdRoleName`, \
            `rolePath`, `permissionsBoundary`, `instanceProfilePath` (self-managed), \
            `policyStatements`; see [IAM governance](../guide/iam.md)",
        ),
    Field::new(
        "securityGroups",
        Ty::Custom {
            schema: security_groups_schema,
            reads: "list of security group IDs (`sg-…`), `{parameter: Name}` or `{import: \
                ExportName}`",
        },
        "Extra security groups: IDs, `{parameter: Name}` or `{import: \
        ExportName}`",
    )
    .long(
        "extra security groups, each an ID, `{parameter: Name}` (an \
        `AWS::EC2::SecurityGroup::Id` parameter) or `{import: ExportName}` (an \
        export holding one ID)",
    ),
    Field::new(
        "nodeSecurityGroup",
        Ty::OneOf(|| choices(NODE_SECURITY_GROUPS)),
        "",
    )
    .default("`shared`")
    .long(
        "`shared`: the stack's node security group, with the rules of the \
        official node group template; `cluster`: the cluster security group \
        (`cluster.clusterSecurityGroup`), which lets nodes and control plane \
        talk already. The node security group is emitted only when some group \
        uses it",
    ),
    Field::new(
        "associatePublicIpAddress",
        Ty::Boolean,
        "A public IPv4 address on each node's primary interface \
        (internet-reachable nodes)",
    )
    .default("false")
    .long(
        "a public IPv4 address on each node's primary network interface, which \
        then carries the security groups (warning `W8006`: the nodes are \
        reachable from the internet)",
    ),
    Field::new(
        "keyName",
        Ty::STRING,
        "An EC2 key pair (SSH is off unless set)",
    )
    .long("EC2 key pair (SSH is off unless set)"),
    Field::new(
        "securityGroupRules",
        Ty::list(&Ty::Object("securityGroupRule")),
        "Inbound rules on a security group of the group's own: `{protocol, \
        ports, source}`, never open to the whole internet",
    )
    .long(
        "inbound rules, each `{protocol, ports, source}` (see the \
        `securityGroupRule` object), on a security group made for the group \
        (`<Group>RulesSecurityGroup`, in `cluster.vpc`) and added to its nodes' \
        groups, self-managed and managed, every family. As with `ssh`, no \
        protocol and port may be open to every address of a family, by one \
        rule or by several together (`0.0.0.0/1` with `128.0.0.0/1`; error \
        `E5005` where that takes in TCP port 22). Rules are changed in place on \
        the security group, without rolling the nodes; the first rules (or \
        removing them all) add (remove) the group's security group in the \
        launch template, which rolls them. A security group holds 60 inbound \
        rules unless the VPC quota is raised",
    ),
    Field::new(
        "ssh",
        Ty::Object("ssh"),
        "Who may reach the nodes on port 22 (needs `keyName`; not on Windows)",
    )
    .long(
        "with `keyName`: `sourceSecurityGroups` (IDs, `{parameter}` or \
        `{import}`) and `sourceCidrs` (IPv4 or IPv6 networks: no host bits set, \
        no spaces or leading zeros; never a block, nor blocks together, covering \
        every address of a family, as `0.0.0.0/0` or `0.0.0.0/1` with \
        `128.0.0.0/1`: error `E5005`) allowed in on port 22, through a security \
        group of the group's own; not on Windows (no SSH server); on \
        Bottlerocket, SSH reaches the admin container, which \
        `bottlerocket.settings` must enable",
    ),
    Field::new("detailedMonitoring", Ty::Boolean, "Detailed monitoring")
        .default("false")
        .long(
            "1-minute CloudWatch metrics of the instances (the launch template's \
            `Monitoring`)",
        ),
    Field::new(
        "ebsOptimized",
        Ty::Boolean,
        "`EbsOptimized` of the launch template (current types are EBS-optimized \
        by default)",
    )
    .default("EC2's default for the type")
    .long(
        "the launch template's `EbsOptimized`; current types are EBS-optimized \
        anyway, and `true` is refused on T2 types, which cannot be",
    ),
    Field::new(
        "cpuOptions",
        Ty::Object("cpuOptions"),
        "`CpuOptions` of the launch template: core count (one instance type), \
        threads per core, AMD SEV-SNP",
    )
    .default("the type's own")
    .long(
        "the launch template's `CpuOptions`: `coreCount` (needs exactly one \
        instance type, since core counts differ between types), `threadsPerCore` \
        (`1` turns simultaneous multithreading off, `2`), `amdSevSnp: true` (AMD \
        SEV-SNP; every type must be M6a, R6a or C6a). Replaced whole by a \
        group's own",
    ),
    Field::new(
        "cpuCredits",
        Ty::OneOf(|| choices(CPU_CREDITS)),
        "CPU credits of burstable instances (T2, T3, T3a, T4g types only)",
    )
    .default("the type's default")
    .long(
        "`standard` or `unlimited`: the launch template's `CreditSpecification` \
        for burstable instances; every instance type must be T2, T3, T3a or T4g \
        (not with `instanceRequirements`, which leaves burstable types out)",
    ),
    Field::new(
        "enclave",
        Ty::Boolean,
        "Nitro Enclaves on the nodes (not on burstable types or below 4 vCPUs)",
    )
    .default("false")
    .long(
        "Nitro Enclaves on the nodes (`EnclaveOptions`); refused on burstable \
        types and on sizes below 4 vCPUs (`large` and smaller), and with \
        `instanceRequirements` whose `vCpuCount.min` is below 4. The enclave \
        images and the Nitro Enclaves allocator are the user's to install \
        (`preBootstrapCommands`, a DaemonSet)",
    ),
    Field::new(
        "autoRecovery",
        Ty::OneOf(|| choices(AUTO_RECOVERY)),
        "EC2's automatic recovery of an instance whose host fails \
        (`MaintenanceOptions.AutoRecovery`)",
    )
    .default("EC2's (`default`: on where the type supports it)")
    .long(
        "`default` or `disabled`: the launch template's \
        `MaintenanceOptions.AutoRecovery`. With `default`, EC2 recovers an \
        instance of a supported type whose host fails a system status check \
        onto new hardware, keeping its ID, addresses and EBS volumes; a node \
        comes back as itself. `disabled` leaves a failed instance to the Auto \
        Scaling health check (a self-managed group) or EKS (a managed group), \
        which replace it. Self-managed and managed; a change rolls the nodes",
    ),
    Field::new(
        "clusterAutoscaler",
        Ty::Either(&[Ty::Boolean, Ty::Object("clusterAutoscaler")]),
        "Self-managed: the cluster autoscaler's tags (true or false); any group: \
        `{priority}` for the priority expander (`eksynth autoscaler-priorities`)",
    )
    .default("true")
    .long(
        "self-managed: the cluster autoscaler's tags (`true`/`false`); any group: \
        `{enabled, priority}`, `priority` (0 to 1,000,000) for \
        [`autoscaler-priorities`](../guide/commands.md#autoscaler-priorities); `enabled` \
        is refused on managed groups (EKS tags their Auto Scaling groups itself) \
        and a priority with `enabled: false`; `clusterAutoscaler: false` takes \
        no priority from `defaults`",
    ),
    Field::new(
        "updatePolicy",
        Ty::Object("updatePolicy"),
        "The rolling update",
    )
    .default("1 / initial capacity / signal timeout")
    .long("`maxBatchSize`, `minInstancesInService` (< `maxSize`), `pauseTime`")
    .self_managed(),
    Field::new(
        "signalTimeout",
        Ty::Duration,
        "How long nodes have to report a healthy kubelet",
    )
    .default("`PT15M`")
    .long(
        "how long CloudFormation waits for a node's signal; the node itself gives \
        up 5 minutes earlier (see [The signal](../guide/signal.md))",
    )
    .self_managed(),
    Field::new("signalClient", Ty::OneOf(|| choices(SIGNAL_CLIENTS)), "")
        .default("`image` (`embedded` on Ubuntu)")
        .long(
            "AL2023 and AL2: `image` signals with the image's `cfn-signal`; \
            `embedded` (only with a custom `ami`) embeds a `curl --aws-sigv4` \
            signaller for custom images without it. Ubuntu: always \
            `embedded`, since Canonical's images carry no `cfn-signal`",
        )
        .self_managed(),
    Field::new("perAz", Ty::Boolean, "One group per listed subnet")
        .default("false")
        .long(
            "one group per listed subnet, named `<name>-<subnet ID without subnet->` \
            (`general-0a1b2c3d4e5f60711`), sharing one role",
        ),
    Field::new("capacityType", Ty::OneOf(|| choices(CAPACITY_TYPES)), "")
        .default("`ON_DEMAND`")
        .long(
            "`SPOT` (or `CAPACITY_BLOCK`, with `capacityReservationId`); a \
            self-managed spot group gets a mixed \
            instances policy, capacity rebalancing and a `node-lifecycle=spot` label",
        ),
    Field::new(
        "instancesDistribution",
        Ty::Object("instancesDistribution"),
        "The spot and on-demand mix",
    )
    .default("all spot when `SPOT`")
    .long(
        "self-managed: `onDemandBaseCapacity`, \
        `onDemandPercentageAboveBaseCapacity`, `onDemandAllocationStrategy` \
        (`prioritized`, the order of `instanceTypes`, or `lowest-price`, the \
        default and the only choice with `instanceRequirements`), \
        `spotAllocationStrategy` (`price-capacity-optimized`, \
        `capacity-optimized`, `capacity-optimized-prioritized` or \
        `lowest-price`), `spotInstancePools` (1-20, with `lowest-price`), \
        `spotMaxPrice` (US dollars an hour, `\"0.35\"`; unset caps spot at the \
        on-demand price), `capacityRebalance`",
    )
    .self_managed(),
    Field::new(
        "targetGroupArns",
        Ty::List {
            item: &Ty::Source,
            min: Some(1),
            max: Some(MAX_LOAD_BALANCERS),
        },
        "Self-managed: target groups (Application, Network, Gateway Load \
        Balancers) the instances are registered with",
    )
    .long(
        "self-managed: the Auto Scaling group's `TargetGroupARNs`, each an ARN \
        (`arn:${AWS::Partition}:elasticloadbalancing:<region>:<account>:targetgroup/<name>/<id>`, \
        the partition, region and account may be pseudo parameters), \
        `{parameter: Name}` or `{import: ExportName}`; at most 50, the fixed \
        Auto Scaling quota. Applied in place: Auto Scaling registers the \
        group's instances with a target group added and deregisters them from \
        one removed, with no rolling update. With `lifecycle.healthCheckType: \
        ELB` the group also replaces instances the load balancer finds \
        unhealthy. Refused on managed groups, whose Auto Scaling group is EKS's",
    )
    .self_managed(),
    Field::new(
        "classicLoadBalancerNames",
        Ty::List {
            item: &Ty::Source,
            min: Some(1),
            max: Some(MAX_LOAD_BALANCERS),
        },
        "Self-managed: Classic Load Balancers the instances are registered with",
    )
    .long(
        "self-managed: the Auto Scaling group's `LoadBalancerNames`, each a \
        name (1 to 32 letters, digits and dashes), `{parameter: Name}` or \
        `{import: ExportName}`; at most 50. Applied in place, as \
        `targetGroupArns`. Refused on managed groups",
    )
    .self_managed(),
    Field::new(
        "bootstrapArguments",
        Ty::STRING,
        "Extra bootstrap.sh arguments (AL2)",
    )
    .long(
        "AL2 only: extra `bootstrap.sh` arguments, on one line (they continue its \
        command line; a line break is an error at the field)",
    ),
    Field::new(
        "lifecycle",
        Ty::Object("lifecycle"),
        "Lifecycle of the group's instances",
    )
    .long(
        "`warmPool` (any group); self-managed: `terminationHookTimeout` (a \
        termination lifecycle hook for draining tools), `maxInstanceLifetime`, \
        `metricsCollection`, `healthCheckGracePeriod`, and the Auto Scaling \
        group's settings (`terminationPolicies`, `defaultInstanceWarmup`, \
        `healthCheckType`, `protectFromScaleIn`, `instanceMaintenancePolicy`, \
        `availabilityZoneDistribution`, `deletionProtection`, `hooks`; see \
        [`lifecycle`](#lifecycle)); `placementGroup` and `capacityReservation` are \
        the older spelling of the group fields (not both)",
    ),
    Field::new(
        "updateConfig",
        Ty::Object("updateConfig"),
        "Managed group updates",
    )
    .default("EKS default")
    .long(
        "managed: `maxUnavailable` or `maxUnavailablePercentage`, and \
        `updateStrategy`: `DEFAULT` (new nodes first) or `MINIMAL` (old nodes \
        terminated first, for scarce capacity such as GPUs)",
    )
    .managed(),
    Field::new(
        "forceUpdateEnabled",
        Ty::Boolean,
        "Force updates past pod disruption budgets",
    )
    .long(
        "managed: `ForceUpdateEnabled` of `AWS::EKS::Nodegroup`: updates go on \
        past pod disruption budgets",
    )
    .managed(),
    Field::new("releaseVersion", Ty::STRING, "The EKS AMI release version")
        .long(
            "managed: `ReleaseVersion` of `AWS::EKS::Nodegroup`, the EKS AMI release \
            version",
        )
        .managed(),
    Field::new("amiType", Ty::STRING, "The EKS AMI type")
        .long(
            "managed: `AmiType` of `AWS::EKS::Nodegroup`; follows from the family and \
            instance types unless set, and is refused with a custom `ami` (and must \
            be a `_FIPS` type with `fips`)",
        )
        .managed(),
    Field::new(
        "nodegroupName",
        Ty::pattern("^[A-Za-z0-9][-A-Za-z0-9_]*$", Some(63)),
        "Managed: the EKS node group's name (default: the group's name)",
    )
    .default("the group's `name`")
    .long(
        "managed: the EKS node group's name (`aws eks list-nodegroups`), 1 to 63 \
        letters, digits, `-` and `_`, starting with a letter or digit, unique in \
        the blueprint; not in `defaults`. A `perAz` group adds `-<subnet ID \
        without subnet->` to it",
    )
    .managed()
    .per_group(),
    Field::new(
        "capacityReservationId",
        Ty::pattern("^cr-[0-9a-f]{17}$", None),
        "With capacityType CAPACITY_BLOCK: the capacity block's reservation ID",
    )
    .long(
        "required with `capacityType: CAPACITY_BLOCK` (and only then): the \
        capacity block's reservation (`cr-…`). The group takes exactly one \
        instance type, which goes into the launch template with \
        `InstanceMarketOptions.MarketType: capacity-block` and the reservation \
        as `CapacityReservationTarget`. Managed: the node group lists no \
        `InstanceTypes`, as EKS requires for capacity blocks. Self-managed: the \
        Auto Scaling group launches from that launch template, with no mixed \
        instances policy (no `instancesDistribution`, weights or \
        `instanceRequirements`); its subnets must be in the block's \
        Availability Zone, and instances launch only while the block is active \
        (EC2 terminates them 30 minutes before it ends): keep `minSize: 0` and \
        scale with scheduled actions, as AWS advises",
    ),
    Field::new(
        "launchTemplate",
        Ty::Object("launchTemplate"),
        "Managed: a launch template made elsewhere, `{id, version}`, instead of \
        eksynth's own",
    )
    .long(
        "managed: an existing launch template, `{id, version}` (each a literal, \
        `{parameter: …}` or `{import: …}`), which the node group uses; eksynth \
        writes no launch template for the group, refuses the fields that would \
        go into one (IMDS, volumes, kubelet and bootstrap settings, security \
        groups, SSH, placement, EFA, ...) and a custom `ami`, and notes \
        (`I5031`) that it cannot check that template's IMDS settings or volume \
        encryption. See the `launchTemplate` object",
    )
    .managed(),
    Field::new(
        "nodeRepair",
        Ty::Object("nodeRepair"),
        "EKS node auto repair (managed)",
    )
    .default("off")
    .long(
        "managed: EKS node auto repair (`NodeRepairConfig`); `enabled` (true once \
        the section is written), at most one of \
        `maxUnhealthyNodeThresholdCount`/`…Percentage` (repair stops above it), \
        at most one of `maxParallelNodesRepairedCount`/`…Percentage`, and \
        `overrides`: a list of `{nodeMonitoringCondition, nodeUnhealthyReason, \
        minRepairWaitTimeMins, repairAction}` (`Replace`, `Reboot` or \
        `NoAction`), each with all four, as EKS requires. Settings with \
        `enabled: false` are an error. Replaced whole by a group's own",
    )
    .managed(),
    Field::new(
        "autoScalingGroupName",
        Ty::pattern("^[A-Za-z0-9._-]+$", Some(255)),
        "Self-managed: the Auto Scaling group's name (create-only: changing it \
        replaces the group); not in defaults",
    )
    .default("generated")
    .long(
        "self-managed: the Auto Scaling group's name, up to 255 letters, digits, \
        `-`, `_` and `.`, unique in the blueprint; not in `defaults`. A `perAz` \
        group adds `-<subnet ID without subnet->`. Create-only: setting, \
        changing or removing it replaces the group, and `eksynth diff` reports \
        that as a critical replacement",
    )
    .self_managed()
    .per_group(),
    Field::new(
        "instanceRequirements",
        Ty::Object("instanceRequirements"),
        "Self-managed: choose instance types by attributes instead of by name",
    )
    .long(
        "self-managed: choose the types by attributes instead of by name, in the \
        mixed instances policy: `vCpuCount` and `memoryMiB` (`{min, max}`, both \
        required, `max` optional), `instanceGenerations` (`current`, \
        `previous`), `excludedInstanceTypes` (types or `*` patterns, at most \
        400), and `architecture` (`x86_64`, the default, or `arm64`). Auto \
        Scaling's requirements have no architecture (the image decides which \
        matching types launch), so `architecture` picks the image; the group has \
        no accelerator variant and `maxPods` is not checked. Not with \
        `instanceType(s)` (a group that sets one of the three takes none of them \
        from `defaults`); refused for managed groups, whose API names types only",
    ),
    Field::new(
        "placementGroup",
        Ty::Text(Text {
            pattern: None,
            min_length: Some(1),
            max_length: Some(255),
            numbers: false,
        }),
        "An existing placement group the instances launch into",
    )
    .default("none (an `efa` group: its own)")
    .long(
        "an existing placement group, self-managed and managed (the launch \
        template's `Placement.GroupName`)",
    ),
    Field::new(
        "placement",
        Ty::Object("placement"),
        "The instances' tenancy and the partition of `placementGroup` they launch \
        into",
    )
    .long(
        "`{tenancy, partitionNumber}` in the launch template's `Placement`, \
        self-managed and managed; see the `placement` object below for the \
        rules EC2 enforces between them, `placementGroup` and the instance \
        types",
    ),
    Field::new(
        "capacityReservation",
        Ty::Either(&[
            Ty::OneOf(|| vec!["open", "none"]),
            Ty::pattern("^cr-[0-9a-f]{17}$", None),
            Ty::Object("capacityReservation"),
        ]),
        "The capacity reservations the instances launch into: `open`, `none`, a \
        reservation ID, or a resource group",
    )
    .default("EC2's (`open`)")
    .long(
        "self-managed and managed: `open`, `none`, a reservation ID (`cr-…`), or \
        `{resourceGroupArn: …}` (`${AWS::Partition}` and the other pseudo \
        parameters may be written in it); in the launch template's \
        `CapacityReservationSpecification`. Not with a capacity block, which has \
        `capacityReservationId`",
    ),
    Field::new(
        "efa",
        Ty::Either(&[Ty::Boolean, Ty::Object("efa")]),
        "An Elastic Fabric Adapter as the primary interface, in a cluster \
        placement group (EFA-capable types, one subnet); `{interfaces: \
        efa-only}` makes the other cards' EFA-only",
    )
    .default("false")
    .long(
        "an Elastic Fabric Adapter as the primary interface (`InterfaceType: \
        efa`, device index 0, carrying the security groups), a cluster placement \
        group made for the group (unless `placementGroup` names one), and a rule \
        on the node security group that lets all traffic out to itself (EFA \
        needs it both ways; the inbound one is there for every stack). Every \
        instance type must support EFA (the list AWS's EFA device plugin chart \
        is built with, vendored in `data/efa/`), the group launches in one \
        subnet (list one, or `perAz: true`), and the family must carry the EFA \
        driver: AL2023 and Bottlerocket; AL2 only with a custom `ami`; not \
        Windows. Not with `instanceRequirements`. One EFA interface is attached \
        per network card (`p4d.24xlarge` has 4, `trn1.32xlarge` 8, `p5.48xlarge` \
        32; counts vendored in `data/efa/`): the primary on card 0 at device \
        index 0, the others at device index 1 of cards 1 and up, as eksctl does. \
        With several instance types of different card counts, the group gets the \
        fewest, which every type can launch with. Several interfaces leave no \
        room for `associatePublicIpAddress` (an error: EC2 gives a public \
        address only to a single interface). `efa: {interfaces: efa-only}` is \
        `efa: true` with EFA-only interfaces on cards 1 and up (see the `efa` \
        object). Pods reach the adapter through the EFA Kubernetes device \
        plugin, which the cluster must run",
    ),
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
        "The group's priority in the cluster-autoscaler-priority-expander \
        ConfigMap (higher wins)",
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
