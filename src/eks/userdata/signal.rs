//! How a node tells CloudFormation it has joined the cluster: the signal's
//! settings, the node's deadline, and the signaller script.

use serde::Serialize;
use serde_json::{Value, json};

use super::UserDataError;
use super::templates::{SIGNAL_SIGV4_TEMPLATE, SIGNAL_TEMPLATE, render_template};

/// How the node tells CloudFormation it has joined the cluster.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    pub stack_name: String,
    /// The Auto Scaling group's logical ID, exactly as in the template.
    pub logical_id: String,
    pub region: String,
    pub url_suffix: String,
    /// CloudFormation's own timeout for the signal (the creation policy's);
    /// the node gives up earlier, at [`node_deadline_seconds`].
    pub timeout_seconds: u32,
    /// What sends the signal from an AL2023, AL2 or Ubuntu node.
    pub client: SignalClient,
    /// The systemd unit that runs kubelet, whose process names the node:
    /// `kubelet.service` on Amazon Linux, the `kubelet-eks` snap's
    /// `snap.kubelet-eks.daemon.service` on Ubuntu.
    pub kubelet_unit: String,
    /// Commands (PowerShell on Windows) run once the node has joined (its
    /// Node object reads back; on Windows, once kubelet is healthy) and
    /// before the signal: one that fails sends FAILURE.
    pub post_bootstrap_commands: Vec<String>,
}

/// What sends the signal from an Amazon Linux node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SignalClient {
    /// The image's own `cfn-signal` (aws-cfn-bootstrap), which the
    /// EKS-optimized AL2023 and AL2 images carry.
    #[default]
    Image,
    /// A signaller embedded in the user data that signs `SignalResource`
    /// with `curl --aws-sigv4`: for custom images without `cfn-signal`.
    Embedded,
}

// The node's deadline is a rule of the blueprint too: a launch lifecycle
// hook must settle by it (`blueprint::load::asg_settings`).
pub use crate::blueprint::rules::{SIGNAL_MARGIN_SECONDS, node_deadline_seconds};

impl Signal {
    /// The values the templates see: the fields, and the node's deadline.
    pub(super) fn data(&self) -> Value {
        let mut data = json!(self);
        data["deadlineSeconds"] = json!(node_deadline_seconds(self.timeout_seconds));
        // Numbered from 1, for the reason of a FAILURE.
        data["postBootstrap"] = self
            .post_bootstrap_commands
            .iter()
            .enumerate()
            .map(|(index, command)| json!({ "command": command, "number": index + 1 }))
            .collect();
        data
    }
}

/// Renders the signaller script that the user data installs as
/// `/usr/local/bin/eksynth-signal` and runs as `eksynth-signal.service`.
pub fn render_signaller(signal: &Signal) -> Result<String, UserDataError> {
    let template = match signal.client {
        SignalClient::Image => SIGNAL_TEMPLATE,
        SignalClient::Embedded => SIGNAL_SIGV4_TEMPLATE,
    };
    let mut script = render_template(template, &signal.data())?;
    // The install step writes it with a heredoc, whose end marker must
    // follow a newline.
    if !script.ends_with('\n') {
        script.push('\n');
    }
    Ok(script)
}
