//! The blueprint: the typed, checked description of a node group stack.
//!
//! A blueprint is loaded from YAML (or JSON) by [`load`]. Once loaded, it
//! is complete and consistent: defaults are merged into every node group,
//! and every rule the later stages rely on has been checked here.

pub mod compose;
mod decode;
mod field;
mod hatches;
pub mod instances;
pub mod limits;
mod load;
mod max_pods;
pub mod overrides;
pub mod rules;
pub mod schema;
pub mod tags;

pub use decode::Located;
pub use hatches::reserved_bottlerocket_setting;
pub use load::{load, load_with};

// The plain values of the EKS AMI catalogue are the blueprint's own words
// for a node image.
pub use crate::upstream::ami_catalogue::{
    Accelerator, AmiFamily, Arch, KubernetesVersion, UbuntuRelease, WindowsVersion,
};

use crate::source::Span;

pub const API_VERSION: &str = "eksynth.io/v1";
pub const KIND: &str = "NodeBlueprint";

/// The prefix of the template parameters that resolve node images; the
/// blueprint's own parameters may not use it.
pub const IMAGE_PARAMETER_PREFIX: &str = "ImageId";

/// The parameter of a node group stack that names the blueprint's main
/// stack, whose exports it imports; the blueprint's own parameters may not
/// use it.
pub const SHARED_STACK_PARAMETER: &str = "SharedStackName";

#[derive(Clone, Debug)]
pub struct Blueprint {
    pub description: Option<String>,
    pub cluster: Cluster,
    pub node_groups: Vec<NodeGroup>,
    pub suppressions: Vec<Suppression>,
    /// The boundary and path of every role the stack creates, the aws-auth
    /// provider's included.
    pub iam: RoleDefaults,
    /// Changes to generated resources, applied in this order after lowering.
    pub overrides: Vec<overrides::Override>,
    /// CloudFormation Guard rule files or directories, each as written and
    /// where (its span's file is the blueprint that names it, whose folder
    /// the path is taken from): a base's first, each once.
    pub rules: Vec<Located<String>>,
    /// The stacks the blueprint makes, never empty. The first is the main
    /// stack: it holds the resources the node groups share and every group
    /// not placed in another stack.
    pub stacks: Vec<StackSpec>,
    /// The top-level `tags`, in written order: on the resources the groups
    /// share (each group's own resources take them through its `tags`).
    pub tags: Vec<(String, String)>,
}

impl Blueprint {
    /// Every template parameter the blueprint declares (`{parameter: Name}`),
    /// each with where it is first written.
    pub fn parameters(&self) -> Vec<(&str, Span)> {
        let mut seen = std::collections::HashSet::new();
        parameter_uses(&self.cluster, &self.iam, &self.node_groups)
            .into_iter()
            .filter(|(name, _, _)| seen.insert(*name))
            .map(|(name, _, span)| (name, span))
            .collect()
    }
}

/// Every place a template parameter is written: its name, the parameter
/// type it needs there, and where it is written. The cluster's values come
/// first, then the groups' subnets and keys, their security groups, and
/// their images.
fn parameter_uses<'a>(
    cluster: &'a Cluster,
    iam: &'a RoleDefaults,
    groups: &'a [NodeGroup],
) -> Vec<(&'a str, &'static str, Span)> {
    const STRING: &str = "String";
    const SECURITY_GROUP: &str = "AWS::EC2::SecurityGroup::Id";
    fn parameter(source: &Source) -> Option<&str> {
        match source {
            Source::Parameter { name, .. } => Some(name),
            Source::Literal(_) | Source::Import(_) => None,
        }
    }
    let mut uses = Vec::new();
    let mut add = |name: Option<&'a str>, kind: &'static str, span: Span| {
        uses.extend(name.map(|name| (name, kind, span)));
    };
    for (value, kind) in [
        (Some(&cluster.name), STRING),
        (cluster.endpoint.as_ref(), STRING),
        (cluster.certificate_authority.as_ref(), STRING),
        (cluster.service_ipv4_cidr.as_ref(), STRING),
        (
            cluster.control_plane_security_group.as_ref(),
            SECURITY_GROUP,
        ),
        (cluster.vpc.as_ref(), "AWS::EC2::VPC::Id"),
        (cluster.service_ipv6_cidr.as_ref(), STRING),
        (cluster.cluster_security_group.as_ref(), SECURITY_GROUP),
    ] {
        if let Some(value) = value {
            add(parameter(&value.value), kind, value.span);
        }
    }
    if let Some(AwsAuthProvider::Existing(token)) = cluster.node_access.provider() {
        add(parameter(token), STRING, cluster.node_access_span);
    }
    if let Some(boundary) = &iam.permissions_boundary {
        add(parameter(&boundary.value), STRING, boundary.span);
    }
    for group in groups {
        if let Subnets::Parameter { name, .. } = &group.subnets.value {
            add(Some(name), "List<AWS::EC2::Subnet::Id>", group.subnets.span);
        }
        let profile = group
            .iam
            .existing
            .as_ref()
            .and_then(|e| e.instance_profile_arn.as_ref());
        for key in group
            .kms_keys()
            .chain(&group.iam.permissions_boundary)
            .chain(profile)
        {
            add(parameter(&key.value), STRING, key.span);
        }
    }
    for group in groups {
        let ssh = group.ssh.iter().flat_map(|s| &s.source_security_groups);
        let rules = group
            .security_group_rules
            .iter()
            .filter_map(|r| match &r.source {
                RuleSource::SecurityGroup(group) => Some(group),
                RuleSource::Cidr(_) => None,
            });
        for value in group.security_groups.iter().chain(ssh).chain(rules) {
            add(parameter(&value.value), SECURITY_GROUP, value.span);
        }
        let load_balancers = group
            .target_group_arns
            .iter()
            .chain(&group.classic_load_balancer_names);
        for value in load_balancers {
            add(parameter(&value.value), STRING, value.span);
        }
    }
    for group in groups {
        let template = group.managed.iter().flat_map(|m| &m.launch_template);
        for value in template.flat_map(|t| std::iter::once(&t.id).chain(&t.version)) {
            add(parameter(&value.value), STRING, value.span);
        }
    }
    for group in groups {
        if let Ami::Parameter { name, .. } = &group.ami {
            let at = group
                .field_spans
                .iter()
                .find(|(field, _)| *field == "ami")
                .map_or(group.span, |(_, span)| *span);
            add(Some(name), "AWS::EC2::Image::Id", at);
        }
    }
    uses
}

/// One CloudFormation stack a blueprint makes.
#[derive(Clone, Debug, PartialEq)]
pub struct StackSpec {
    /// The name to deploy it under, which also names its template file.
    pub name: String,
    /// Where the stack is declared (`stack`, its key under `stacks`, or the
    /// node groups when neither is written), for findings about the whole
    /// stack, such as its size.
    pub span: Span,
    /// True when the blueprint wrote the stack's name, false when it was
    /// derived from the file name or from `stacks: perGroup`.
    pub named: bool,
}

/// CloudFormation's rule for stack names: a letter, then letters, digits
/// and dashes, at most 128 characters.
pub fn is_valid_stack_name(name: &str) -> bool {
    name.len() <= 128
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The stack name a blueprint file gets when it does not write one: the
/// file's stem, with every character a stack name cannot hold turned into
/// a dash (`staging_nodes.yaml` makes `staging-nodes`).
pub fn default_stack_name(file_name: &str) -> String {
    let stem = std::path::Path::new(file_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .trim_matches(|c| c == '<' || c == '>');
    let mut name: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "stack-");
    }
    name.truncate(128);
    name.trim_end_matches('-').to_string()
}

/// A finding of template validation that the blueprint accepts, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Suppression {
    pub id: Located<String>,
    pub reason: String,
}

/// Where a cluster value comes from when the stack is deployed.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Literal(String),
    /// A template parameter, with an optional default.
    Parameter {
        name: String,
        default: Option<String>,
    },
    /// `Fn::ImportValue` of another stack's export.
    Import(String),
}

#[derive(Clone, Debug)]
pub struct Cluster {
    pub name: Located<Source>,
    pub kubernetes_version: Located<KubernetesVersion>,
    /// The API server endpoint and CA data: required only when a group
    /// bootstraps its own nodes (a self-managed group, or a managed group on
    /// a custom image); EKS joins a managed group's EKS-AMI nodes itself.
    pub endpoint: Option<Located<Source>>,
    pub certificate_authority: Option<Located<Source>>,
    /// The IPv4 service CIDR as written: required on an IPv4 cluster,
    /// unused on an IPv6 one.
    pub service_ipv4_cidr: Option<Located<Source>>,
    /// The service CIDR of the cluster's IP family, which the nodes take:
    /// `service_ipv6_cidr` on an IPv6 cluster, `service_ipv4_cidr` on an
    /// IPv4 one.
    pub service_cidr: Located<Source>,
    /// `cluster.ipFamily` and where it is written; IPv4 when not.
    pub ip_family: Option<(IpFamily, Span)>,
    /// An IPv6 cluster's service CIDR, which then takes the place of
    /// `service_ipv4_cidr` on the nodes.
    pub service_ipv6_cidr: Option<Located<Source>>,
    /// Required when some group uses the shared node security group.
    pub control_plane_security_group: Option<Located<Source>>,
    /// The security group EKS made for the cluster, for groups that use it
    /// instead of the shared node security group.
    pub cluster_security_group: Option<Located<Source>>,
    /// Required when some group uses the shared node security group or
    /// SSH, whose security groups live in it.
    pub vpc: Option<Located<Source>>,
    /// Where `cluster` is written.
    pub span: Span,
    pub authentication_mode: AuthenticationMode,
    /// How self-managed nodes are authorized on the cluster.
    pub node_access: NodeAccess,
    /// Where the node access is written (`awsAuthProvider`, `nodeAccess` or
    /// `authenticationMode`, else the cluster name): the origin of the
    /// provider's resources.
    pub node_access_span: Span,
    /// Whether the cluster's VPC CNI assigns pods addresses from `/28`
    /// prefixes (`ENABLE_PREFIX_DELEGATION`), which lets a node hold more
    /// pods than its interfaces have secondary addresses.
    pub prefix_delegation: bool,
}

/// How self-managed node roles get into the cluster.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeAccess {
    /// An `AWS::EKS::AccessEntry` per node role (API authentication modes).
    AccessEntries,
    /// A `Custom::AwsAuth` per node role, served by a provider.
    AwsAuth(AwsAuthProvider),
    /// Access entries, an existing role's a `Custom::NodeAccessEntry`
    /// served by the provider, which keeps it while any stack that owns it
    /// stands (API authentication modes).
    SharedAccessEntries(AwsAuthProvider),
    /// Nothing: someone outside the blueprint grants the node roles access
    /// (an access entry or an aws-auth mapping made elsewhere).
    None,
}

impl NodeAccess {
    /// The provider the access resources need, if any.
    pub fn provider(&self) -> Option<&AwsAuthProvider> {
        match self {
            NodeAccess::AccessEntries | NodeAccess::None => None,
            NodeAccess::AwsAuth(provider) | NodeAccess::SharedAccessEntries(provider) => {
                Some(provider)
            }
        }
    }

    /// The provider the stack serves its access resources with, when some
    /// need one: self-managed groups mapped in aws-auth by it, or with
    /// existing roles whose access entries it shares.
    pub fn needed_provider(&self, groups: &[NodeGroup]) -> Option<&AwsAuthProvider> {
        let mut self_managed = groups.iter().filter(|g| g.managed.is_none());
        match self {
            NodeAccess::AwsAuth(provider) if self_managed.next().is_some() => Some(provider),
            NodeAccess::SharedAccessEntries(provider)
                if self_managed.any(|g| g.iam.existing.is_some()) =>
            {
                Some(provider)
            }
            _ => None,
        }
    }
}

/// Who serves the `Custom::AwsAuth` and `Custom::NodeAccessEntry` resources.
#[derive(Clone, Debug, PartialEq)]
pub enum AwsAuthProvider {
    /// An existing provider's service token.
    Existing(Source),
    /// A provider Lambda emitted in the same template.
    Inline {
        subnets: Vec<String>,
        security_groups: Vec<String>,
        reserved_concurrency: Option<u32>,
        log_retention_days: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthenticationMode {
    Api,
    ApiAndConfigMap,
    ConfigMap,
}

/// Where the node image comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Ami {
    /// The EKS-optimized image, through its public SSM parameter.
    Recommended,
    /// A pinned image ID: nodes roll only when the blueprint changes it.
    Pinned(String),
    /// A custom image whose ID an SSM parameter holds, read by
    /// CloudFormation at each deploy through a parameter of type
    /// `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>`.
    Ssm(String),
    /// A custom image ID given as a template parameter of type
    /// `AWS::EC2::Image::Id`.
    Parameter {
        name: String,
        default: Option<String>,
    },
}

impl Ami {
    /// Whether the image is the user's own rather than the EKS-optimized
    /// one: a managed group then runs the full bootstrap itself.
    pub fn is_custom(&self) -> bool {
        !matches!(self, Ami::Recommended)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Subnets {
    List(Vec<String>),
    /// A `List<AWS::EC2::Subnet::Id>` parameter.
    Parameter {
        name: String,
        default: Option<String>,
    },
    /// An export holding a comma-separated list of subnet IDs.
    Import(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: TaintEffect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    /// The spelling kubelet and Kubernetes use.
    pub fn kubernetes_name(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Volume {
    /// `None`: the snapshot's size.
    pub size_gib: Option<u32>,
    pub volume_type: String,
    pub iops: Option<u32>,
    pub throughput: Option<u32>,
    pub encrypted: bool,
    /// A KMS key ID, ARN or alias: a literal, a parameter or an import.
    pub kms_key_id: Option<Located<Source>>,
    pub snapshot_id: Option<String>,
    /// The image's root device when it is not the family's.
    pub device_name: Option<String>,
    /// `VolumeInitializationRate`, MiB/s, for a volume from a snapshot.
    pub initialization_rate: Option<u32>,
}

/// An extra EBS volume of a node group's instances.
#[derive(Clone, Debug, PartialEq)]
pub struct DataVolume {
    /// As EC2 takes it for the family: `/dev/xvdf`, `/dev/sdf`, `xvdf`.
    pub device_name: String,
    /// `None`: the snapshot's size.
    pub size_gib: Option<u32>,
    pub volume_type: String,
    pub iops: Option<u32>,
    pub throughput: Option<u32>,
    pub encrypted: bool,
    pub kms_key_id: Option<Located<Source>>,
    pub snapshot_id: Option<String>,
    pub delete_on_termination: bool,
}

/// How a node assembles its instance store NVMe disks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceStore {
    /// One RAID 0 array for kubelet and the container runtime.
    Raid0,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Imds {
    /// `HttpTokens: required` (IMDSv2 only).
    pub tokens_required: bool,
    pub hop_limit: u32,
    /// `HttpProtocolIpv6: enabled`: IMDS at its IPv6 address too.
    pub ipv6: bool,
    /// An iptables rule that drops pod traffic to IMDS.
    pub block_pods: bool,
    /// `InstanceMetadataTags: enabled`: the instance's tags in IMDS.
    pub instance_tags: bool,
    /// Where `imds.httpTokens` and `imds.hopLimit` are written, for the
    /// findings about them.
    pub tokens_span: Option<Span>,
    pub hop_limit_span: Option<Span>,
}

/// Launch template settings EC2 takes as written, checked against the
/// group's instance types by the loader.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchOptions {
    /// `EbsOptimized`; EC2's default for the type when `None`.
    pub ebs_optimized: Option<bool>,
    pub cpu: Option<CpuOptions>,
    /// `CreditSpecification.CpuCredits` of burstable (T) instances.
    pub cpu_credits: Option<CpuCredits>,
    /// `EnclaveOptions.Enabled`: Nitro Enclaves on the nodes.
    pub enclave: bool,
    /// `MaintenanceOptions.AutoRecovery`; EC2's default when `None`.
    pub auto_recovery: Option<AutoRecovery>,
}

/// Whether EC2 recovers an instance whose host fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoRecovery {
    Default,
    Disabled,
}

impl AutoRecovery {
    pub fn name(self) -> &'static str {
        match self {
            AutoRecovery::Default => "default",
            AutoRecovery::Disabled => "disabled",
        }
    }
}

/// `CpuOptions`: fewer cores or one thread per core, AMD SEV-SNP.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuOptions {
    pub core_count: Option<u32>,
    pub threads_per_core: Option<u32>,
    /// `AmdSevSnp: enabled` (M6a, R6a and C6a types only).
    pub amd_sev_snp: bool,
}

/// How a burstable instance spends CPU credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuCredits {
    Standard,
    Unlimited,
}

impl CpuCredits {
    pub fn name(self) -> &'static str {
        match self {
            CpuCredits::Standard => "standard",
            CpuCredits::Unlimited => "unlimited",
        }
    }
}

/// The address family of a cluster's pods and services.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpFamily {
    Ipv4,
    Ipv6,
}

/// The security group that lets a group's nodes talk to each other and to
/// the control plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeSecurityGroup {
    /// The stack's `NodeSecurityGroup`, with the rules of the official
    /// node group template.
    Shared,
    /// The cluster security group EKS made (`cluster.clusterSecurityGroup`),
    /// which already allows all of that.
    Cluster,
}

/// The sources of SSH to a group's nodes: a security group of its own with
/// one port 22 rule per source.
#[derive(Clone, Debug, PartialEq)]
pub struct Ssh {
    pub source_security_groups: Vec<Located<Source>>,
    /// IPv4 or IPv6 CIDRs, never the whole internet.
    pub source_cidrs: Vec<String>,
}

/// An inbound rule of a group's own security group (`securityGroupRules`).
#[derive(Clone, Debug, PartialEq)]
pub struct SecurityGroupRule {
    pub protocol: RuleProtocol,
    /// The ports of a `tcp` or `udp` rule, from and to.
    pub ports: Option<(u16, u16)>,
    pub source: RuleSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleProtocol {
    Tcp,
    Udp,
    Icmp,
    Icmpv6,
    /// Every protocol and port (`IpProtocol: -1`).
    All,
}

impl RuleProtocol {
    /// The blueprint's name, which is EC2's `IpProtocol` but for `all`.
    pub fn name(self) -> &'static str {
        match self {
            RuleProtocol::Tcp => "tcp",
            RuleProtocol::Udp => "udp",
            RuleProtocol::Icmp => "icmp",
            RuleProtocol::Icmpv6 => "icmpv6",
            RuleProtocol::All => "all",
        }
    }
}

/// Where a rule's traffic may come from.
#[derive(Clone, Debug, PartialEq)]
pub enum RuleSource {
    /// An IPv4 or IPv6 network, never the whole internet.
    Cidr(String),
    /// A security group: an ID, a parameter or an import.
    SecurityGroup(Located<Source>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct EfsMount {
    pub file_system_id: String,
    pub mount_point: String,
}

/// One part of a MIME user-data document, added as written.
#[derive(Clone, Debug, PartialEq)]
pub struct UserDataPart {
    pub content_type: PartType,
    pub content: String,
}

/// The cloud-init content types a user-data part may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartType {
    CloudConfig,
    ShellScript,
    CloudBoothook,
}

impl PartType {
    /// The MIME type cloud-init dispatches the part on.
    pub fn mime_type(self) -> &'static str {
        match self {
            PartType::CloudConfig => "text/cloud-config",
            PartType::ShellScript => "text/x-shellscript",
            PartType::CloudBoothook => "text/cloud-boothook",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Iam {
    /// The VPC CNI gets its permissions through IRSA or Pod Identity, so the
    /// node role does not carry the CNI policy.
    pub cni_uses_irsa: bool,
    pub ssm_managed_instance: bool,
    pub extra_managed_policies: Vec<String>,
    pub existing: Option<ExistingIdentity>,
    /// The name of the role the stack creates (`RoleName`); CloudFormation
    /// generates one when `None`.
    pub role_name: Option<Located<String>>,
    /// The created role's path, `/` by default.
    pub role_path: String,
    /// The created instance profile's path: the role's unless set.
    pub instance_profile_path: String,
    /// The created role's permissions boundary: ARN text that may hold
    /// `${AWS::Partition}` and `${AWS::AccountId}`, or a parameter or
    /// import of one.
    pub permissions_boundary: Option<Located<Source>>,
    /// Extra IAM policy statements, in an inline policy of the created
    /// role; strings may hold the pseudo parameters `Fn::Sub` resolves.
    pub policy_statements: Vec<serde_json::Value>,
    /// The created role's `Tags`, in the order written.
    pub role_tags: Vec<(String, String)>,
    /// The created role's `Description`.
    pub role_description: Option<String>,
}

/// What every role the stack creates gets unless its node group says
/// otherwise: the blueprint's `iam` section.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoleDefaults {
    pub permissions_boundary: Option<Located<Source>>,
    pub role_path: Option<String>,
}

/// A role (and optionally its instance profile) made outside the stack.
#[derive(Clone, Debug, PartialEq)]
pub struct ExistingIdentity {
    pub role_name: String,
    /// The role's IAM path (`iam.rolePath`), `/` unless written: part of
    /// its ARN, which access entries and managed node groups take whole.
    pub path: String,
    /// An existing instance profile: ARN text that may hold
    /// `${AWS::Partition}` and `${AWS::AccountId}`, or a parameter or
    /// import of the ARN.
    pub instance_profile_arn: Option<Located<Source>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RollingUpdate {
    pub max_batch_size: u32,
    pub min_instances_in_service: u32,
    pub pause_time: String,
    /// Where `updatePolicy.pauseTime` is written, when it is.
    pub pause_time_span: Option<Span>,
}

/// What sends an AL2023 or AL2 node's signal to CloudFormation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalClient {
    /// The image's own `cfn-signal`.
    Image,
    /// A signaller embedded in the user data, for images without one.
    Embedded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapacityType {
    OnDemand,
    Spot,
    CapacityBlock,
}

/// How a self-managed group mixes on-demand and spot instances.
#[derive(Clone, Debug, PartialEq)]
pub struct InstancesDistribution {
    pub on_demand_base_capacity: u32,
    pub on_demand_percentage_above_base: u32,
    /// `lowest-price` or `prioritized` (the order of `instanceTypes`).
    pub on_demand_allocation_strategy: String,
    pub spot_allocation_strategy: String,
    /// How many of the cheapest spot pools `lowest-price` spreads over.
    pub spot_instance_pools: Option<u32>,
    /// The most an hour of a spot instance may cost, in US dollars
    /// (`"0.35"`); `None` caps it at the on-demand price.
    pub spot_max_price: Option<String>,
    pub capacity_rebalance: bool,
}

/// Instance types chosen by their attributes rather than by name
/// (self-managed groups): the Auto Scaling group picks every type that
/// matches, now and as EC2 adds new ones.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceRequirements {
    /// The image's architecture: the requirements cannot name one, and the
    /// Auto Scaling group launches only the matching types the image runs on.
    pub arch: Arch,
    pub vcpu: Range,
    pub memory_mib: Range,
    /// `current`, `previous`, or both; empty leaves EC2's default (both).
    pub generations: Vec<String>,
    /// Instance types or wildcard patterns (`t2.*`, `*6g*`) never chosen.
    pub excluded_instance_types: Vec<String>,
}

/// An inclusive range with an optional upper end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub min: u32,
    pub max: Option<u32>,
}

/// `Placement` beyond the placement group: tenancy and partition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    /// `Tenancy`, as written (never `host`, which the loader refuses).
    pub tenancy: Option<Tenancy>,
    /// `PartitionNumber` of a named partition placement group.
    pub partition_number: Option<u32>,
}

/// Whose hardware the instances run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tenancy {
    Default,
    Dedicated,
    Host,
}

impl Tenancy {
    pub fn name(self) -> &'static str {
        match self {
            Tenancy::Default => "default",
            Tenancy::Dedicated => "dedicated",
            Tenancy::Host => "host",
        }
    }
}

/// The placement group the instances launch into.
#[derive(Clone, Debug, PartialEq)]
pub enum PlacementGroup {
    /// An existing placement group, by name.
    Named(String),
    /// A cluster placement group made for the node group (`efa: true`).
    Cluster,
}

/// Which capacity reservations the instances launch into.
#[derive(Clone, Debug, PartialEq)]
pub enum CapacityReservation {
    /// Any open reservation with matching attributes (EC2's default).
    Open,
    /// Never a reservation.
    None,
    /// One reservation, by ID (`cr-…`).
    Id(String),
    /// The reservations of a resource group, by ARN.
    ResourceGroup(String),
}

/// Settings of a managed node group (`AWS::EKS::Nodegroup`).
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    /// `NodegroupName`: the group's name unless `nodegroupName` says
    /// otherwise (a `perAz` group adds its subnet suffix to either).
    pub nodegroup_name: Located<String>,
    pub capacity_type: CapacityType,
    /// `MaxUnavailable` (a count) or `MaxUnavailablePercentage`.
    pub max_unavailable: Option<Amount>,
    /// `UpdateConfig.UpdateStrategy`; EKS's default when unset.
    pub update_strategy: Option<UpdateStrategy>,
    /// `NodeRepairConfig`: EKS's node auto repair.
    pub node_repair: Option<NodeRepair>,
    pub force_update_enabled: bool,
    pub release_version: Option<String>,
    /// An explicit `AmiType`; otherwise it follows from the family,
    /// architecture and accelerator.
    pub ami_type: Option<String>,
    /// A launch template made elsewhere, used instead of eksynth's own.
    pub launch_template: Option<ExistingLaunchTemplate>,
}

/// `launchTemplate`: a managed group's existing launch template.
#[derive(Clone, Debug, PartialEq)]
pub struct ExistingLaunchTemplate {
    pub id: Located<Source>,
    /// `None`: the launch template's default version.
    pub version: Option<Located<Source>>,
}

/// How a managed group replaces nodes in a version update: `DEFAULT`
/// launches new nodes before terminating old ones, `MINIMAL` terminates
/// first (for scarce capacity such as GPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateStrategy {
    Default,
    Minimal,
}

/// EKS node auto repair of a managed group (`NodeRepairConfig`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRepair {
    pub enabled: bool,
    /// Above this many unhealthy nodes repair stops.
    pub max_unhealthy: Option<Amount>,
    /// At most this many nodes are repaired at once.
    pub max_parallel: Option<Amount>,
    pub overrides: Vec<RepairOverride>,
}

/// A node count or a percentage of the group's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Count(u32),
    Percentage(u32),
}

/// A repair action for one condition and reason the node monitoring agent
/// reports; EKS requires all four values.
#[derive(Clone, Debug, PartialEq)]
pub struct RepairOverride {
    pub condition: String,
    pub reason: String,
    pub min_wait_minutes: u32,
    pub action: RepairAction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairAction {
    Replace,
    Reboot,
    NoAction,
}

/// What a self-managed group's Auto Scaling group does over its life.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lifecycle {
    /// A termination lifecycle hook with this heartbeat timeout (seconds),
    /// so that draining tools can act before an instance goes.
    pub termination_hook: Option<u32>,
    pub max_instance_lifetime: Option<u32>,
    pub metrics_collection: bool,
    pub health_check_grace_period: Option<u32>,
    /// `TerminationPolicies`: names, or Lambda function ARNs (which may
    /// name pseudo parameters), in order.
    pub termination_policies: Vec<String>,
    pub default_instance_warmup: Option<u32>,
    /// `HealthCheckType`'s types, each once, in the order written.
    pub health_check_types: Vec<&'static str>,
    /// Where `healthCheckType` is written, when it is.
    pub health_check_span: Option<Span>,
    /// `NewInstancesProtectedFromScaleIn`, when written.
    pub protect_from_scale_in: Option<bool>,
    /// `InstanceMaintenancePolicy`: the minimum and maximum healthy
    /// percentages.
    pub instance_maintenance: Option<(u32, u32)>,
    /// `AvailabilityZoneDistribution.CapacityDistributionStrategy`.
    pub availability_zone_distribution: Option<&'static str>,
    pub deletion_protection: Option<&'static str>,
    /// `LifecycleHookSpecificationList`.
    pub hooks: Vec<LifecycleHook>,
    /// Pre-initialized instances beside the group's Auto Scaling group.
    pub warm_pool: Option<WarmPool>,
}

/// A lifecycle hook of a self-managed group's Auto Scaling group, made
/// with the group so that it holds its very first instances too.
#[derive(Clone, Debug, PartialEq)]
pub struct LifecycleHook {
    pub name: String,
    /// `autoscaling:EC2_INSTANCE_LAUNCHING` or
    /// `autoscaling:EC2_INSTANCE_TERMINATING`.
    pub transition: &'static str,
    /// Seconds, 30 to 7200.
    pub heartbeat_timeout: u32,
    /// `CONTINUE` or `ABANDON`.
    pub default_result: &'static str,
    pub notification_target_arn: Option<String>,
    pub role_arn: Option<String>,
    /// Where the hook's `lifecycleTransition` is written: where a rule
    /// about the hook as a whole points.
    pub span: Span,
    /// Where `heartbeatTimeout` is written, when it is.
    pub heartbeat_span: Option<Span>,
}

/// A warm pool (`lifecycle.warmPool`): instances launched ahead of need
/// and kept stopped, running or hibernated until the group scales out.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmPool {
    /// Instances the pool keeps at least (Auto Scaling's default is 0).
    pub min_size: Option<u32>,
    /// The group and the pool together hold at most this many instances;
    /// Auto Scaling's default is the group's maximum size.
    pub max_prepared_capacity: Option<u32>,
    /// Where written, or at `warmPool` when left to its default.
    pub pool_state: Located<PoolState>,
    /// Instances return to the pool on scale-in instead of terminating.
    pub reuse_on_scale_in: Located<bool>,
    /// Where `warmPool` is written: its resource's origin.
    pub span: Span,
}

/// The state a warm pool keeps its instances in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolState {
    Stopped,
    Running,
    Hibernated,
}

/// One node group, self-managed or managed, with the blueprint defaults
/// merged in.
#[derive(Clone, Debug)]
pub struct NodeGroup {
    pub name: Located<String>,
    /// The index in [`Blueprint::stacks`] of the stack that holds the group.
    pub stack: usize,
    /// The stem of every logical ID this group produces, e.g. `Staging1`.
    pub logical_id: String,
    /// The stem of the IAM resources' logical IDs: the groups one `perAz`
    /// group becomes share one role.
    pub identity: String,
    /// `Some` for a managed node group.
    pub managed: Option<Managed>,
    pub ami_family: AmiFamily,
    pub ami: Ami,
    /// The Kubernetes version of the group's nodes: the cluster's, or the
    /// group's own while it lags in a staged upgrade.
    pub kubernetes_version: KubernetesVersion,
    /// Bottlerocket's FIPS variant (`fips: true`).
    pub fips: bool,
    pub arch: Arch,
    pub accelerator: Accelerator,
    /// Spot and on-demand mix of a self-managed group; `None` is all on-demand.
    pub distribution: Option<InstancesDistribution>,
    /// Target groups the Auto Scaling group registers its instances with
    /// (self-managed groups).
    pub target_group_arns: Vec<Located<Source>>,
    /// Classic Load Balancers the Auto Scaling group registers its
    /// instances with (self-managed groups).
    pub classic_load_balancer_names: Vec<Located<Source>>,
    pub lifecycle: Lifecycle,
    /// Extra `bootstrap.sh` arguments (AL2 only).
    pub bootstrap_arguments: Option<String>,
    /// One group per subnet was asked for (already expanded by the loader).
    pub per_az: bool,
    /// Empty when `instance_requirements` chooses the types.
    pub instance_types: Vec<Located<String>>,
    /// Each instance type's `WeightedCapacity`, in `instance_types`' order:
    /// empty, or one per type.
    pub weights: Vec<u32>,
    /// Attribute-based instance type selection (self-managed groups).
    pub instance_requirements: Option<InstanceRequirements>,
    pub placement_group: Option<PlacementGroup>,
    pub placement: Placement,
    pub capacity_reservation: Option<CapacityReservation>,
    /// The capacity block's reservation (`capacityReservationId`): set
    /// exactly when the group's capacity type is `CAPACITY_BLOCK`,
    /// self-managed or managed.
    pub capacity_block: Option<String>,
    /// An Elastic Fabric Adapter as the primary network interface, in a
    /// cluster placement group.
    pub efa: bool,
    /// With `efa`, how many EFA interfaces the launch template attaches,
    /// one per network card: the fewest network cards of the group's
    /// instance types.
    pub efa_cards: u32,
    /// The EFA interfaces of network cards 1 and up are EFA-only
    /// (`InterfaceType: efa-only`), with no IP address.
    pub efa_only: bool,
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: Option<u32>,
    pub subnets: Located<Subnets>,
    pub labels: Vec<(String, String)>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// `clusterDNS`: the nameservers kubelet gives pods, in place of the
    /// service CIDR's DNS IP; empty when the group does not set them.
    pub cluster_dns: Vec<String>,
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    /// AL2023: a `NodeConfig` `spec` fragment merged into the generated one
    /// (checked: no value of it conflicts with a generated one).
    pub node_config: Option<serde_json::Value>,
    pub root_volume: Volume,
    /// Extra EBS volumes, in blueprint order.
    pub volumes: Vec<DataVolume>,
    pub instance_store: Option<InstanceStore>,
    pub imds: Imds,
    pub pre_bootstrap_commands: Vec<String>,
    /// Commands run once the node has joined the cluster, before the signal
    /// (a self-managed AL2023, AL2 or Windows group).
    pub post_bootstrap_commands: Vec<String>,
    /// Extra MIME parts of an AL2023 or AL2 group's user data.
    pub user_data_parts: Vec<UserDataPart>,
    /// Bottlerocket settings beyond eksynth's own, under `settings`: a
    /// tree of tables whose leaves are strings, numbers, booleans or lists
    /// (never null), in blueprint order.
    pub bottlerocket_settings: serde_json::Map<String, serde_json::Value>,
    pub efs_mounts: Vec<EfsMount>,
    pub tags: Vec<(String, String)>,
    pub iam: Iam,
    /// Extra security groups of the nodes: IDs, `AWS::EC2::SecurityGroup::Id`
    /// parameters or imports of one ID each.
    pub security_groups: Vec<Located<Source>>,
    pub key_name: Option<String>,
    pub detailed_monitoring: bool,
    /// `EbsOptimized`, `CpuOptions`, `CreditSpecification` and
    /// `EnclaveOptions` of the launch template.
    pub launch_options: LaunchOptions,
    /// The security group the nodes share: the stack's own, or the
    /// cluster's.
    pub node_security_group: NodeSecurityGroup,
    /// A public IPv4 address on the primary network interface.
    pub associate_public_ip: bool,
    /// Who may reach the nodes on port 22 (with `keyName`).
    pub ssh: Option<Ssh>,
    /// Inbound rules of a security group of the group's own.
    pub security_group_rules: Vec<SecurityGroupRule>,
    pub cluster_autoscaler: bool,
    /// The group's priority for the cluster autoscaler's priority expander
    /// (`eksynth autoscaler-priorities`).
    pub autoscaler_priority: Option<u32>,
    /// A self-managed group's `AutoScalingGroupName`; CloudFormation
    /// generates `<stack>-<logical ID>-<random>` when `None`.
    pub auto_scaling_group_name: Option<Located<String>>,
    pub update: RollingUpdate,
    /// How long the creation and update policies wait for a signal, as
    /// ISO 8601 (`PT15M`), checked by the loader.
    pub signal_timeout: String,
    /// What sends the signal of an AL2023 or AL2 node.
    pub signal_client: SignalClient,
    /// Where the group is written, for messages about it.
    pub span: Span,
    /// Where each field of the group (or of the defaults it takes) is
    /// written, by its blueprint name; the group's own first.
    pub field_spans: Vec<(&'static str, Span)>,
}

impl NodeGroup {
    /// Whether nodeadm names the nodes after their instance ID (the
    /// `InstanceIdNodeName` feature gate of `nodeConfig`): kubelet then
    /// authenticates as `system:node:<instance ID>`, which an access entry
    /// of type `EC2` or an aws-auth username `system:node:{{SessionName}}`
    /// grants (amazon-eks-ami, `nodeadm/doc/examples.md`).
    pub fn instance_id_node_name(&self) -> bool {
        self.node_config
            .as_ref()
            .and_then(|config| config.pointer("/featureGates/InstanceIdNodeName"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    }

    /// The KMS keys of the group's volumes, root first.
    pub fn kms_keys(&self) -> impl Iterator<Item = &Located<Source>> {
        self.root_volume
            .kms_key_id
            .iter()
            .chain(self.volumes.iter().filter_map(|v| v.kms_key_id.as_ref()))
    }

    /// How many instances the group starts with: the count the creation
    /// policy waits for.
    pub fn initial_capacity(&self) -> u32 {
        self.desired_capacity.unwrap_or(self.min_size)
    }

    /// How many instances the group starts with at least: its initial
    /// capacity, which counts capacity units when the instance types are
    /// weighted, over the largest weight.
    pub fn initial_instances(&self) -> u32 {
        instance_count(self.initial_capacity(), &self.weights)
    }

    /// The signal timeout in seconds, for the node's own wait.
    pub fn signal_timeout_seconds(&self) -> u32 {
        // The loader accepted the duration, so it always parses.
        rules::iso_duration_seconds(&self.signal_timeout).map_or(900, |s| s as u32)
    }
}

/// How many instances make `units` of capacity at least: the units over
/// the largest weight, rounded up (the units themselves without weights).
fn instance_count(units: u32, weights: &[u32]) -> u32 {
    let largest = weights.iter().copied().max().unwrap_or(1).max(1);
    units.div_ceil(largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_becomes_a_valid_stack_name() {
        for (file, stack) in [
            ("nodes.yaml", "nodes"),
            ("envs/staging_nodes.yaml", "staging-nodes"),
            ("a.b.yml", "a-b"),
            ("1st.yaml", "stack-1st"),
            ("<stdin>", "stdin"),
            ("", "stack"),
        ] {
            let name = default_stack_name(file);
            assert_eq!(name, stack, "{file}");
            assert!(is_valid_stack_name(&name), "{name}");
        }
        assert!(!is_valid_stack_name(&"a".repeat(129)));
        assert!(!is_valid_stack_name("a_b"));
    }
}
