//! The values the AL2023 and AL2 shell scripts share: the signal, the
//! pre-bootstrap commands, the pod IMDS block and EFS mounts.

use serde_json::{Value, json};

use super::quote::fstab_field;
use super::{UserDataError, UserDataInput, render_signaller, unique_marker};

/// NFS options recommended for EFS, plus `_netdev,nofail` for boot.
const EFS_MOUNT_OPTIONS: &str =
    "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev,nofail";

/// Whether the input has anything for the shell part besides the bootstrap
/// and the signal.
pub(super) fn has_shell_steps(input: &UserDataInput) -> bool {
    !input.pre_bootstrap_commands.is_empty() || input.block_pod_imds || !input.efs_mounts.is_empty()
}

/// The values shared by the AL2023 and AL2 shell templates.
pub(super) fn shell_data(
    input: &UserDataInput,
) -> Result<serde_json::Map<String, Value>, UserDataError> {
    let signal = match &input.signal {
        Some(signal) => {
            let script = render_signaller(signal)?;
            // A value with a line equal to the heredoc marker would end the
            // heredoc early; pick a marker no line of the script uses.
            let eof = unique_marker("EKSYNTH_SIGNAL_EOF", |m| script.lines().any(|l| l == m));
            // Past CloudFormation's own timeout a signal changes nothing.
            let hard_limit = signal.timeout_seconds;
            json!({ "script": script, "eof": eof, "hardLimitSeconds": hard_limit })
        }
        None => Value::Null,
    };

    let mut mounts = Vec::with_capacity(input.efs_mounts.len());
    for mount in &input.efs_mounts {
        if !mount.mount_point.starts_with('/') {
            return Err(UserDataError::MountPoint(mount.mount_point.clone()));
        }
        let line = format!(
            "{}:/ {} nfs4 {EFS_MOUNT_OPTIONS} 0 0",
            fstab_field(&mount.dns_name),
            fstab_field(&mount.mount_point),
        );
        mounts.push(json!({ "mountPoint": mount.mount_point, "fstabLine": line }));
    }

    let mut data = serde_json::Map::new();
    data.insert("signal".into(), signal);
    data.insert(
        "preBootstrapCommands".into(),
        json!(input.pre_bootstrap_commands),
    );
    data.insert("blockPodImds".into(), json!(input.block_pod_imds));
    data.insert("efsMounts".into(), Value::Array(mounts));
    data.insert("warmPool".into(), json!(input.warm_pool));
    Ok(data)
}
