//! The 16 KiB EC2 allows for user data, and who takes its bytes.

use crate::cfn::sub;

use super::mime::{ENCODED, Piece, pieces};
use super::{UserDataError, UserDataInput, render};

/// The most user data EC2 accepts, in bytes once decoded.
pub const MAX_USER_DATA_BYTES: usize = 16_384;

/// What a cluster value given by a parameter or an import is counted at:
/// CloudFormation fills it in at deploy time, so it is counted at the size
/// a real cluster's value has (base64 CA data of a real EKS cluster is
/// about 1,500 characters; an endpoint is `https://`, 32 hex digits, a
/// zone tag, the region and `.eks.amazonaws.com.cn` at most; EKS allows
/// 100 characters of cluster name), by its blueprint field.
const ASSUMED_CLUSTER_VALUES: [(&str, usize); 5] = [
    ("cluster.name", 100),
    ("cluster.endpoint", 80),
    ("cluster.certificateAuthority", 1_500),
    ("cluster.serviceIpv4Cidr", 18),
    ("cluster.serviceIpv6Cidr", 43),
];

/// The cluster DNS IP (from the service CIDR) and the stack name are
/// always filled in by CloudFormation: counted as an IPv6 address and
/// CloudFormation's longest stack name. Any other template value is the
/// region or the URL suffix (of the signal, or of an EFS DNS name):
/// counted as the longer of the longest region name and `amazonaws.com.cn`.
const DNS_IP_BYTES: usize = 39;
const STACK_NAME_BYTES: usize = 128;
const OTHER_VALUE_BYTES: usize = 16;

/// Each template value (placeholder) of `input` that is not counted at
/// [`OTHER_VALUE_BYTES`], with its size and the blueprint field it comes
/// from when it is one of the cluster's.
fn template_values(input: &UserDataInput) -> Vec<(&str, Option<&'static str>, usize)> {
    let [name, endpoint, ca, ipv4, ipv6] = ASSUMED_CLUSTER_VALUES.map(Some);
    let values = [
        (Some(input.cluster_name.as_str()), name),
        (Some(input.api_server_endpoint.as_str()), endpoint),
        (Some(input.certificate_authority.as_str()), ca),
        (input.service_ipv4_cidr.as_deref(), ipv4),
        (input.service_ipv6_cidr.as_deref(), ipv6),
    ];
    let mut out: Vec<_> = values
        .into_iter()
        .filter_map(|(value, field)| Some((value?, field.map(|(f, _)| f), field?.1)))
        .collect();
    out.push((input.dns_cluster_ip.as_str(), None, DNS_IP_BYTES));
    if let Some(signal) = &input.signal {
        out.push((signal.stack_name.as_str(), None, STACK_NAME_BYTES));
    }
    out.retain(|(value, _, _)| sub::is_placeholder(value));
    out
}

/// The size of rendered user data once CloudFormation has filled it in and
/// encoded the parts that are sent base64: each template value counted at
/// the size it really has ([`ASSUMED_CLUSTER_VALUES`]).
pub fn measured_len(text: &str, input: &UserDataInput) -> usize {
    let values = template_values(input);
    let plain_len = |text: &str| -> usize {
        text.split(sub::MARK)
            .enumerate()
            .map(|(i, piece)| match i % 2 {
                1 if piece.chars().all(|c| c.is_ascii_digit()) => {
                    let placeholder = format!("{0}{piece}{0}", sub::MARK);
                    values
                        .iter()
                        .find(|(value, _, _)| *value == placeholder)
                        .map_or(OTHER_VALUE_BYTES, |(_, _, bytes)| *bytes)
                }
                1 => piece.len() + 2 * sub::MARK.len_utf8(),
                _ => piece.len(),
            })
            .sum()
    };
    pieces(text)
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) => plain_len(text),
            Piece::Base64(text) => plain_len(text).div_ceil(3) * 4,
        })
        .sum()
}

/// The cluster fields given by a parameter or an import that `input`'s
/// user data counts at an assumed size, with that size.
fn assumed_values(input: &UserDataInput) -> Vec<(&'static str, usize)> {
    template_values(input)
        .into_iter()
        .filter_map(|(_, field, bytes)| Some((field?, bytes)))
        .collect()
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
    /// The cluster fields given by a parameter or an import, each counted
    /// at the size a real cluster's value has.
    pub assumed: Vec<(&'static str, usize)>,
    /// Whether a MIME part is sent base64 (its text is not all ASCII), and
    /// is counted as sent.
    pub base64: bool,
}

/// Who takes the bytes of `input`'s user data, rendered as `text`, when
/// it is over EC2's limit; `None` when it fits. Each field's share is
/// measured by rendering the user data again without it.
pub fn oversized(input: &UserDataInput, text: &str) -> Result<Option<Share>, UserDataError> {
    let total = measured_len(text, input);
    if total <= MAX_USER_DATA_BYTES {
        return Ok(None);
    }
    let size = |input: &UserDataInput| render(input).map(|text| measured_len(&text, input));
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
    Ok(Some(Share {
        total,
        own: size(&own)?,
        fields,
        assumed: assumed_values(input),
        base64: text.contains(ENCODED),
    }))
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
