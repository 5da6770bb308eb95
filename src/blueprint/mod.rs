//! The blueprint: the typed, checked description of a node group stack.
//!
//! A blueprint is loaded from YAML (or JSON) by [`load`]. Once loaded, it
//! is complete and consistent: defaults are merged into every node group,
//! and every rule the later stages rely on has been checked here.

mod decode;
mod load;
pub mod rules;

pub use decode::Located;
pub use load::load;

use crate::source::Span;

pub const API_VERSION: &str = "eksynth.io/v1";
pub const KIND: &str = "NodeBlueprint";

#[derive(Clone, Debug)]
pub struct Blueprint {
    pub description: Option<String>,
    pub cluster: Cluster,
    pub node_groups: Vec<NodeGroup>,
    pub suppressions: Vec<Suppression>,
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
    pub endpoint: Located<Source>,
    pub certificate_authority: Located<Source>,
    pub service_ipv4_cidr: Located<Source>,
    pub control_plane_security_group: Located<Source>,
    pub vpc: Located<Source>,
    pub authentication_mode: AuthenticationMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubernetesVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthenticationMode {
    Api,
    ApiAndConfigMap,
    ConfigMap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmiFamily {
    AmazonLinux2023,
    AmazonLinux2,
}

impl AmiFamily {
    pub fn name(self) -> &'static str {
        match self {
            AmiFamily::AmazonLinux2023 => "AmazonLinux2023",
            AmiFamily::AmazonLinux2 => "AmazonLinux2",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Arm64,
}

/// Where the node image comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Ami {
    /// The EKS-optimized image, through its public SSM parameter.
    Recommended,
    /// A pinned image ID: nodes roll only when the blueprint changes it.
    Pinned(String),
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
    pub size_gib: u32,
    pub volume_type: String,
    pub iops: Option<u32>,
    pub throughput: Option<u32>,
    pub encrypted: bool,
    pub kms_key_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Imds {
    /// `HttpTokens: required` (IMDSv2 only).
    pub tokens_required: bool,
    pub hop_limit: u32,
    /// An iptables rule that drops pod traffic to IMDS.
    pub block_pods: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EfsMount {
    pub file_system_id: String,
    pub mount_point: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Iam {
    /// The VPC CNI gets its permissions through IRSA or Pod Identity, so the
    /// node role does not carry the CNI policy.
    pub cni_uses_irsa: bool,
    pub ssm_managed_instance: bool,
    pub extra_managed_policies: Vec<String>,
    pub existing: Option<ExistingIdentity>,
}

/// A role (and optionally its instance profile) made outside the stack.
#[derive(Clone, Debug, PartialEq)]
pub struct ExistingIdentity {
    pub role_name: String,
    pub instance_profile_arn: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RollingUpdate {
    pub max_batch_size: u32,
    pub min_instances_in_service: u32,
    pub pause_time: String,
}

/// One self-managed node group, with the blueprint defaults merged in.
#[derive(Clone, Debug)]
pub struct NodeGroup {
    pub name: Located<String>,
    /// The stem of every logical ID this group produces, e.g. `Staging1`.
    pub logical_id: String,
    pub ami_family: AmiFamily,
    pub ami: Ami,
    pub arch: Arch,
    pub gpu: bool,
    pub instance_types: Vec<Located<String>>,
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: Option<u32>,
    pub subnets: Located<Subnets>,
    pub labels: Vec<(String, String)>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    pub root_volume: Volume,
    pub imds: Imds,
    pub pre_bootstrap_commands: Vec<String>,
    pub efs_mounts: Vec<EfsMount>,
    pub tags: Vec<(String, String)>,
    pub iam: Iam,
    pub security_groups: Vec<String>,
    pub key_name: Option<String>,
    pub detailed_monitoring: bool,
    pub cluster_autoscaler: bool,
    pub update: RollingUpdate,
    pub signal_timeout: String,
    pub signal_timeout_seconds: u32,
    /// Where the group is written, for messages about it.
    pub span: Span,
}

impl NodeGroup {
    /// How many instances the group starts with: the count the creation
    /// policy waits for.
    pub fn initial_capacity(&self) -> u32 {
        self.desired_capacity.unwrap_or(self.min_size)
    }
}
