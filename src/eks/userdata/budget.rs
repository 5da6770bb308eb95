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
    for (field, clear) in USER_FIELDS {
        let mut without = input.clone();
        if !clear(&mut without) {
            continue;
        }
        clear(&mut own);
        fields.push((field, total.saturating_sub(size(&without)?)));
    }
    fields.sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
    Ok(Share {
        total,
        own: size(&own)?,
        fields,
    })
}

/// Clears a field of the input; false when it was not set.
type Clear = fn(&mut UserDataInput) -> bool;

fn take<T>(v: &mut Vec<T>) -> bool {
    !std::mem::take(v).is_empty()
}

/// The blueprint fields that put the group's own text into its user data,
/// each with how to clear it.
const USER_FIELDS: [(&str, Clear); 12] = [
    ("preBootstrapCommands", |i| {
        take(&mut i.pre_bootstrap_commands)
    }),
    ("postBootstrapCommands", |i| {
        i.signal
            .as_mut()
            .is_some_and(|s| take(&mut s.post_bootstrap_commands))
    }),
    ("userDataParts", |i| take(&mut i.user_data_parts)),
    ("bottlerocket", |i| {
        !std::mem::take(&mut i.bottlerocket_settings).is_empty()
    }),
    ("efsMounts", |i| take(&mut i.efs_mounts)),
    ("labels", |i| take(&mut i.labels)),
    ("taints", |i| take(&mut i.taints)),
    ("kubelet", |i| take(&mut i.kubelet_config)),
    ("nodeConfig", |i| i.node_config.take().is_some()),
    ("maxPods", |i| i.max_pods.take().is_some()),
    ("bootstrapArguments", |i| {
        i.bootstrap_arguments.take().is_some()
    }),
    ("instanceStore", |i| {
        std::mem::take(&mut i.instance_store_raid0)
    }),
];
