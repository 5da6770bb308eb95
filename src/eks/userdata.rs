//! User data: the text each node runs at boot, rendered from the handlebars
//! templates in `blueprints/userdata/`.
//!
//! Template values (cluster name, endpoint, stack name...) arrive here as
//! opaque placeholder strings made by `cfn::sub::SubBuilder`; the caller turns
//! the rendered text into `Fn::Sub`. Rendering never sees CloudFormation.

use serde::Serialize;

/// The AMI families whose user data is rendered here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bootstrap {
    /// Amazon Linux 2023: MIME multipart with a nodeadm `NodeConfig`.
    Al2023,
    /// Amazon Linux 2: `/etc/eks/bootstrap.sh`.
    Al2,
}

/// Everything a node needs to join the cluster and report back.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDataInput {
    pub bootstrap: Bootstrap,
    pub cluster_name: String,
    pub api_server_endpoint: String,
    /// Base64 certificate authority data.
    pub certificate_authority: String,
    pub service_ipv4_cidr: String,
    /// The cluster DNS IP (the service CIDR's `.10` address), for AL2.
    pub dns_cluster_ip: String,
    pub labels: Vec<Label>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Kubelet configuration fields (e.g. `imageGCHighThresholdPercent`),
    /// in the kubelet's own camelCase names, in blueprint order.
    pub kubelet_config: Vec<(String, serde_json::Value)>,
    pub pre_bootstrap_commands: Vec<String>,
    pub efs_mounts: Vec<EfsMount>,
    /// Block pods (traffic from `eni+` interfaces) from reaching IMDS.
    pub block_pod_imds: bool,
    pub signal: Signal,
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

/// How the node tells CloudFormation it is healthy.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    pub stack_name: String,
    /// The Auto Scaling group's logical ID, exactly as in the template.
    pub logical_id: String,
    pub region: String,
    pub url_suffix: String,
    /// How long to wait for kubelet to report healthy before signalling failure.
    pub timeout_seconds: u32,
}

/// Renders the user data for one node group.
pub fn render(input: &UserDataInput) -> String {
    let _ = input;
    String::new()
}
