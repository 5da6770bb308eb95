//! How many pods an instance type's network interfaces can address, from
//! the table the EKS AMIs use (`data/eni-max-pods/`, vendored), and the
//! check of a node group's `maxPods` against it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::decode::{Decoder, Located};

const TABLE: &str = include_str!("../../data/eni-max-pods/instance-info.jsonl");

/// Addresses in one prefix that prefix delegation assigns (a `/28`).
const ADDRESSES_PER_PREFIX: u32 = 16;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct InstanceInfo {
    instance_type: String,
    #[serde(rename = "defaultMaxENIs")]
    default_max_enis: u32,
    ipv4_addresses_per_interface: u32,
}

/// Network interfaces and IPv4 addresses per interface, by instance type.
fn table() -> &'static HashMap<String, (u32, u32)> {
    static TABLE_BY_TYPE: OnceLock<HashMap<String, (u32, u32)>> = OnceLock::new();
    TABLE_BY_TYPE.get_or_init(|| {
        TABLE
            .lines()
            .filter_map(|line| serde_json::from_str::<InstanceInfo>(line).ok())
            .map(|info| {
                (
                    info.instance_type,
                    (info.default_max_enis, info.ipv4_addresses_per_interface),
                )
            })
            .collect()
    })
}

/// The most pods a node of `instance_type` can address: each pod takes a
/// secondary address (or, with prefix delegation, a slot of a `/28`
/// prefix) on one of the interfaces, and two host-network pods take none.
/// `None` for an instance type the table does not know.
pub fn capacity(instance_type: &str, prefix_delegation: bool) -> Option<u32> {
    let &(enis, addresses) = table().get(instance_type)?;
    let per_interface = addresses.saturating_sub(1);
    let slots = if prefix_delegation {
        per_interface * ADDRESSES_PER_PREFIX
    } else {
        per_interface
    };
    Some(enis * slots + 2)
}

/// Reports a `maxPods` above what the smallest of the group's instance
/// types can address. Unknown instance types are not judged.
pub fn check(
    d: &mut Decoder,
    max_pods: &Located<u32>,
    instance_types: &[Located<String>],
    prefix_delegation: bool,
) {
    let smallest = instance_types
        .iter()
        .filter_map(|t| Some((t.value.as_str(), capacity(&t.value, prefix_delegation)?)))
        .min_by_key(|(_, capacity)| *capacity);
    let Some((instance_type, capacity)) = smallest else {
        return;
    };
    if max_pods.value <= capacity {
        return;
    }
    let how = if prefix_delegation {
        "with prefix delegation"
    } else {
        "without prefix delegation"
    };
    let message = format!(
        "`maxPods: {}` is more than {instance_type} can hold: its network interfaces address {capacity} pods {how}",
        max_pods.value
    );
    d.error(max_pods.span, message).help = Some(if prefix_delegation {
        format!("set `maxPods` to {capacity} or less, or choose a larger instance type")
    } else {
        format!(
            "set `maxPods` to {capacity} or less, or turn on the VPC CNI's prefix delegation and say so with `cluster.prefixDelegation: true`"
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_the_eks_ami_formula() {
        // 3 interfaces of 10 addresses: 3 * 9 + 2.
        assert_eq!(capacity("m7g.large", false), Some(29));
        assert_eq!(capacity("m7g.large", true), Some(3 * 9 * 16 + 2));
        // 4 interfaces of 15 addresses.
        assert_eq!(capacity("m5.xlarge", false), Some(58));
        assert_eq!(capacity("t3.medium", false), Some(17));
        assert_eq!(capacity("no.such-type", false), None);
    }

    #[test]
    fn every_line_of_the_table_is_read() {
        assert_eq!(table().len(), TABLE.lines().count());
    }
}
