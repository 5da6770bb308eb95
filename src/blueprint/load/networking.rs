//! The rules of a node group's networking fields that depend on other
//! fields: instance tags in IMDS, public addresses.

use super::node_group::GroupSpec;
use crate::blueprint::decode::Decoder;

/// Whether the instance's tags are readable from IMDS
/// (`imds.instanceTags`). EC2 then refuses to launch an instance with a tag
/// key outside `[0-9a-zA-Z\-_+=,.@:]{1,255}` or named `.`, `..` or `_index`
/// (the key is a path segment of `/latest/meta-data/tags/instance/`).
pub(super) fn check_instance_tags(d: &mut Decoder, spec: &GroupSpec, is_managed: bool) -> bool {
    let Some(flag) = spec.imds.instance_tags.as_ref().filter(|f| f.value) else {
        return false;
    };
    if is_managed {
        // EKS copies the launch template into its own and does not carry
        // the option over; its instances carry `k8s.io/...` tags anyway.
        d.error(flag.span, "`imds.instanceTags` is not available on a managed node group")
            .help = Some(
            "EKS tags a managed group's instances with keys that hold `/`, which instance tags in IMDS cannot carry; use a self-managed group".into(),
        );
        return false;
    }
    let mut ok = true;
    for (key, _) in &spec.tags {
        if !imds_tag_key_ok(&key.value) {
            ok = false;
            let message = format!(
                "tag key `{}` cannot be read from IMDS, and EC2 refuses to launch an instance with it when `imds.instanceTags` is on",
                key.value
            );
            d.error(key.span, message).help = Some(
                "use letters, digits and `-_+=,.@:` only (no `/` or spaces), or turn `imds.instanceTags` off".into(),
            );
        }
    }
    if ok {
        d.warning(
            flag.span,
            "with `imds.instanceTags`, the nodes do not get the `kubernetes.io/cluster/<name>` tag (EC2 refuses tag keys with `/` then); it stays on the Auto Scaling group",
        )
        .help = Some(
            "tools that find the cluster's instances by that tag (such as the in-tree AWS cloud provider's classic load balancers) do not see these nodes".into(),
        );
    }
    ok
}

fn imds_tag_key_ok(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 255
        && !matches!(key, "." | ".." | "_index")
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_+=,.@:".contains(c))
}

/// Whether the nodes get a public IPv4 address
/// (`associatePublicIpAddress`), with a warning when they do.
pub(super) fn check_public_ip(d: &mut Decoder, spec: &GroupSpec) -> bool {
    let Some(flag) = spec.associate_public_ip.as_ref().filter(|f| f.value) else {
        return false;
    };
    d.warning(
        flag.span,
        "`associatePublicIpAddress: true` gives every node an internet-reachable address",
    )
    .help = Some(
        "only the security groups stand between the nodes and the internet; prefer private subnets with a NAT gateway".into(),
    );
    true
}
