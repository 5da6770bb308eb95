//! User data: the text each node runs at boot, rendered from the handlebars
//! templates in `blueprints/userdata/`: MIME with shell (and a nodeadm
//! `NodeConfig`) for Amazon Linux, TOML settings for Bottlerocket, a
//! `<powershell>` script for Windows. [`Mode`] decides how much of the
//! bootstrap is ours: all of it for self-managed groups (which also signal
//! CloudFormation) and for managed groups on a custom AMI, only the user's
//! own parts for managed groups on an EKS AMI.
//!
//! Template values (cluster name, endpoint, stack name...) arrive here as
//! opaque placeholder strings made by `cfn::sub::SubBuilder`; the caller turns
//! the rendered text into `Fn::Sub`. Rendering never sees CloudFormation.
//!
//! One module per concern: `templates` holds the handlebars registry and
//! its quoting helpers, `quote` the quoting itself, `kubelet` checks the
//! kubelet settings, labels and taints every family shares, `signal` the
//! signal to CloudFormation, `mime` the multipart envelope, `shell` what
//! the AL2023 and AL2 scripts share, `al2023`, `al2`, `bottlerocket`
//! and `windows` each family's rendering (`settings_toml` the user's
//! Bottlerocket settings as TOML), and `budget` the 16 KiB limit.

mod al2;
mod al2023;
mod bottlerocket;
mod budget;
mod kubelet;
mod mime;
mod quote;
mod settings_toml;
mod shell;
mod signal;
mod templates;
mod windows;

use serde::Serialize;
use serde_json::Value;

pub use budget::{MAX_USER_DATA_BYTES, Share, measured_len, oversized};
pub use mime::{ENCODED, Piece, pieces};
pub use quote::{double_quote, powershell_quote, shell_quote, toml_quote};
pub use signal::{
    SIGNAL_MARGIN_SECONDS, Signal, SignalClient, node_deadline_seconds, render_signaller,
};

/// The AMI families whose user data is rendered here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bootstrap {
    /// Amazon Linux 2023: MIME multipart with a nodeadm `NodeConfig`.
    Al2023,
    /// Amazon Linux 2: `/etc/eks/bootstrap.sh`.
    Al2,
    /// Bottlerocket: TOML settings, not a script.
    Bottlerocket,
    /// Windows Server: a `<powershell>` script around `Start-EKSBootstrap.ps1`.
    Windows,
    /// Canonical's Ubuntu images: their own `/etc/eks/bootstrap.sh`, AL2's
    /// with kubelet run by the `kubelet-eks` snap.
    Ubuntu,
}

/// Who bootstraps the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Mode {
    /// A self-managed group: the full bootstrap, and the signal to CloudFormation.
    SelfManaged,
    /// A managed node group on an EKS AMI: EKS adds the bootstrap itself and merges
    /// our user data with its own, so only the user's parts are rendered; no signal.
    ManagedEksAmi,
    /// A managed node group on a custom AMI: the full bootstrap; no signal.
    ManagedCustomAmi,
}

/// Everything a node needs to join the cluster and report back.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDataInput {
    pub bootstrap: Bootstrap,
    pub mode: Mode,
    pub cluster_name: String,
    pub api_server_endpoint: String,
    /// Base64 certificate authority data.
    pub certificate_authority: String,
    /// The IPv4 service CIDR; `None` on an IPv6 cluster that does not name
    /// one.
    pub service_ipv4_cidr: Option<String>,
    /// An IPv6 cluster's service CIDR, which AL2023 and AL2 then take in
    /// place of the IPv4 one.
    pub service_ipv6_cidr: Option<String>,
    /// The cluster DNS IP (the service CIDR's `.10` address), for AL2,
    /// Bottlerocket and Windows.
    pub dns_cluster_ip: String,
    /// The group's own nameservers (`clusterDNS`), which take the place of
    /// `dns_cluster_ip` on every family; empty when the group sets none.
    pub cluster_dns: Vec<String>,
    /// Node labels. Rendered for self-managed groups only: a managed group
    /// sets them through the EKS API, on an EKS AMI or a custom one.
    pub labels: Vec<Label>,
    /// Node taints. Rendered for self-managed groups only, like the labels.
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Kubelet configuration fields (e.g. `imageGCHighThresholdPercent`),
    /// in the kubelet's own camelCase names, in blueprint order.
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    /// AL2023: the user's `NodeConfig` `spec` fragment, merged into the
    /// generated one (the loader made sure none of it conflicts).
    pub node_config: Option<Value>,
    /// Shell commands (PowerShell on Windows) run before the node joins.
    pub pre_bootstrap_commands: Vec<String>,
    /// The user's own MIME parts (AL2023 and AL2), placed before eksynth's
    /// shell part so that they run before the node joins.
    pub user_data_parts: Vec<ExtraPart>,
    /// The user's Bottlerocket settings under `settings` (never null, and
    /// never one that eksynth writes itself: the loader checked both).
    pub bottlerocket_settings: serde_json::Map<String, Value>,
    pub efs_mounts: Vec<EfsMount>,
    /// Block pods (traffic from `eni+` interfaces) from reaching IMDS.
    pub block_pod_imds: bool,
    /// How the node reports to CloudFormation: `Some` exactly for
    /// [`Mode::SelfManaged`].
    pub signal: Option<Signal>,
    /// AL2 only: extra `bootstrap.sh` arguments, the user's own shell text,
    /// appended verbatim after eksynth's.
    pub bootstrap_arguments: Option<String>,
    /// Assemble the instance store NVMe disks into one RAID 0 array for
    /// kubelet and the container runtime (AL2023, AL2 and Bottlerocket).
    pub instance_store_raid0: bool,
    /// A self-managed group with a warm pool (AL2023 and AL2): the node
    /// prepares at first boot but joins and signals only once Auto Scaling
    /// puts the instance in service, at whichever boot that is.
    pub warm_pool: bool,
}

/// A MIME part of the user's, added as written.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraPart {
    /// A MIME type such as `text/cloud-config`.
    pub content_type: String,
    pub content: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Label {
    pub key: String,
    pub value: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EfsMount {
    pub file_system_id: String,
    pub mount_point: String,
    /// The file system's DNS name, e.g. `fs-1.efs.<region placeholder>.<url suffix placeholder>`.
    pub dns_name: String,
}

/// Why user data could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum UserDataError {
    #[error("kubelet setting `{0}` is given more than once")]
    DuplicateKubeletSetting(String),
    #[error("kubelet setting `{key}` must be {expected}")]
    KubeletSettingType { key: String, expected: &'static str },
    #[error("{what} `{value}` contains `{separator}`, which separates entries in the kubelet flag")]
    Separator {
        what: &'static str,
        value: String,
        separator: char,
    },
    #[error(
        "taint `{key}` has effect `{effect}`; expected NoSchedule, PreferNoSchedule or NoExecute"
    )]
    TaintEffect { key: String, effect: String },
    #[error("EFS mount point `{0}` is not an absolute path")]
    MountPoint(String),
    #[error("{what} cannot be set for {target}")]
    Unsupported { what: String, target: &'static str },
    #[error("label `{0}` is given more than once")]
    DuplicateLabel(String),
    #[error(
        "a signal must be given for a self-managed group and only for one (mode {mode:?}, signal {given})"
    )]
    SignalMode { mode: Mode, given: &'static str },
    /// A bug in the embedded templates, not in the input.
    #[error("user data template: {0}")]
    Template(String),
}

pub(super) fn unsupported(what: impl Into<String>, target: &'static str) -> UserDataError {
    UserDataError::Unsupported {
        what: what.into(),
        target,
    }
}

/// Picks `base`, or `base` with a numeric suffix, such that `clashes` is
/// false for it. The candidates are endless and the text finite, so this
/// ends.
pub(super) fn unique_marker(base: &str, clashes: impl Fn(&str) -> bool) -> String {
    let mut candidate = base.to_string();
    let mut n = 2u32;
    while clashes(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// The user's extra `bootstrap.sh` arguments, if any.
pub(super) fn bootstrap_arguments(input: &UserDataInput) -> Option<&str> {
    input
        .bootstrap_arguments
        .as_deref()
        .filter(|a| !a.trim().is_empty())
}

/// Refuses what `target` cannot carry.
pub(super) fn refuse_fields(
    input: &UserDataInput,
    target: &'static str,
    fields: &[Field],
) -> Result<(), UserDataError> {
    for field in fields {
        let set = match field {
            Field::PreBootstrapCommands => !input.pre_bootstrap_commands.is_empty(),
            Field::EfsMounts => !input.efs_mounts.is_empty(),
            Field::BlockPodImds => input.block_pod_imds,
            Field::BootstrapArguments => bootstrap_arguments(input).is_some(),
            Field::PostBootstrapCommands => input
                .signal
                .as_ref()
                .is_some_and(|s| !s.post_bootstrap_commands.is_empty()),
            Field::UserDataParts => !input.user_data_parts.is_empty(),
            Field::BottlerocketSettings => !input.bottlerocket_settings.is_empty(),
            Field::InstanceStore => input.instance_store_raid0,
            Field::WarmPool => input.warm_pool,
        };
        if set {
            return Err(unsupported(field.name(), target));
        }
    }
    Ok(())
}

/// Input fields that not every family can carry.
#[derive(Clone, Copy)]
pub(super) enum Field {
    PreBootstrapCommands,
    EfsMounts,
    BlockPodImds,
    BootstrapArguments,
    PostBootstrapCommands,
    UserDataParts,
    BottlerocketSettings,
    InstanceStore,
    WarmPool,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::PreBootstrapCommands => "pre-bootstrap commands",
            Field::EfsMounts => "EFS mounts",
            Field::BlockPodImds => "the pod IMDS block",
            Field::BootstrapArguments => "bootstrap.sh arguments",
            Field::PostBootstrapCommands => "post-bootstrap commands",
            Field::UserDataParts => "MIME user-data parts",
            Field::BottlerocketSettings => "Bottlerocket settings",
            Field::InstanceStore => "the instance store RAID 0 array",
            Field::WarmPool => "a warm pool (a join held until the instance is in service)",
        }
    }
}

/// Renders the user data for one node group.
///
/// - AL2023 and AL2 get a MIME `multipart/mixed` document. AL2023 needs it
///   for the nodeadm `NodeConfig` part; AL2 has a single shell part, because
///   cloud-init runs either form the same way, and one envelope keeps a
///   single shape to check. EKS accepts only MIME user data in the launch
///   template of a managed group, and merges it with its own.
/// - Bottlerocket gets TOML settings.
/// - Windows gets a `<powershell>` script.
///
/// For [`Mode::ManagedEksAmi`] only the user's own parts are rendered (EKS
/// adds the bootstrap); when there are none the result is an empty string,
/// and the caller leaves `UserData` out.
pub fn render(input: &UserDataInput) -> Result<String, UserDataError> {
    match (input.mode, &input.signal) {
        (Mode::SelfManaged, Some(_)) | (Mode::ManagedEksAmi | Mode::ManagedCustomAmi, None) => {}
        (mode, signal) => {
            return Err(UserDataError::SignalMode {
                mode,
                given: if signal.is_some() { "given" } else { "missing" },
            });
        }
    }
    let prepared = kubelet::prepare(input)?;
    match input.bootstrap {
        Bootstrap::Al2023 => al2023::render(input, &prepared),
        Bootstrap::Al2 | Bootstrap::Ubuntu => al2::render(input, &prepared),
        Bootstrap::Bottlerocket => bottlerocket::render(input, &prepared),
        Bootstrap::Windows => windows::render(input, &prepared),
    }
}
