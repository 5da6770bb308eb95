//! The 16 KiB EC2 allows for user data, and who takes its bytes.

use crate::cfn::sub;

use super::{UserDataError, UserDataInput, render};

/// The most user data EC2 accepts, in bytes once decoded.
pub const MAX_USER_DATA_BYTES: usize = 16_384;

/// The size of rendered user data once CloudFormation has filled it in,
/// template values counted as nothing (as validation counts them).
pub fn measured_len(text: &str) -> usize {
    text.split(sub::MARK)
        .enumerate()
        .map(|(i, piece)| match i % 2 {
            // A placeholder's index, and its two marks.
            1 if piece.chars().all(|c| c.is_ascii_digit()) => 0,
            1 => piece.len() + 2 * sub::MARK.len_utf8(),
            _ => piece.len(),
        })
        .sum()
}

/// Who takes the bytes of a group's user data: eksynth's own parts (the
/// bootstrap, the signal, the pod IMDS block), and the group's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    pub total: usize,
    /// The user data with none of the group's fields set.
    pub own: usize,
    /// What each field set adds, by its blueprint name, largest first.
    pub fields: Vec<(&'static str, usize)>,
}

/// Measures who takes the bytes of `input`'s user data.
pub fn share(input: &UserDataInput) -> Result<Share, UserDataError> {
    let size = |input: &UserDataInput| render(input).map(|text| measured_len(&text));
    let total = size(input)?;
    let mut own = input.clone();
    let mut fields = Vec::new();
    for field in USER_FIELDS {
        let mut without = input.clone();
        if !clear(&mut without, field) {
            continue;
        }
        clear(&mut own, field);
        fields.push((field, total.saturating_sub(size(&without)?)));
    }
    fields.sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
    Ok(Share {
        total,
        own: size(&own)?,
        fields,
    })
}

/// The blueprint fields that put the group's own text into its user data.
const USER_FIELDS: [&str; 12] = [
    "preBootstrapCommands",
    "postBootstrapCommands",
    "userDataParts",
    "bottlerocket",
    "efsMounts",
    "labels",
    "taints",
    "kubelet",
    "nodeConfig",
    "maxPods",
    "bootstrapArguments",
    "instanceStore",
];

/// Clears `field` in `input`; false when it was not set.
fn clear(input: &mut UserDataInput, field: &str) -> bool {
    fn take<T>(v: &mut Vec<T>) -> bool {
        !std::mem::take(v).is_empty()
    }
    match field {
        "preBootstrapCommands" => take(&mut input.pre_bootstrap_commands),
        "postBootstrapCommands" => input
            .signal
            .as_mut()
            .is_some_and(|s| take(&mut s.post_bootstrap_commands)),
        "userDataParts" => take(&mut input.user_data_parts),
        "bottlerocket" => !std::mem::take(&mut input.bottlerocket_settings).is_empty(),
        "efsMounts" => take(&mut input.efs_mounts),
        "labels" => take(&mut input.labels),
        "taints" => take(&mut input.taints),
        "kubelet" => take(&mut input.kubelet_config),
        "maxPods" => input.max_pods.take().is_some(),
        "nodeConfig" => input.node_config.take().is_some(),
        "bootstrapArguments" => input.bootstrap_arguments.take().is_some(),
        "instanceStore" => std::mem::take(&mut input.instance_store_raid0),
        _ => false,
    }
}
