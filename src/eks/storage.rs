//! The block device mappings of a node group's launch template: the root
//! volume (Bottlerocket: its data volume) and the extra `volumes`, each
//! encrypted unless the blueprint says otherwise, with its KMS key as a
//! literal, a parameter or an import.

use super::inputs::{self, Kind};
use crate::blueprint::{Located, NodeGroup, Source};
use crate::cfn::{Expr, Resource, Template};

/// The description of a KMS key parameter.
const KMS_KEY: &str = "The KMS key that encrypts the node volumes";

fn kms_key(template: &mut Template, key: Option<&Located<Source>>) -> Option<Expr> {
    key.map(|key| inputs::value(template, &key.value, Kind::String, KMS_KEY))
}

fn mapping(device: &str, ebs: Resource) -> Expr {
    let mut ebs = ebs.properties;
    ebs.sort_keys();
    Expr::map([("DeviceName", Expr::str(device)), ("Ebs", Expr::Map(ebs))])
}

/// `BlockDeviceMappings`: the root volume first (under the family's root
/// device unless the blueprint names the image's), then the extra volumes
/// in blueprint order.
pub fn block_device_mappings(template: &mut Template, group: &NodeGroup) -> Expr {
    let root = &group.root_volume;
    let mut mappings = vec![mapping(
        root.device_name
            .as_deref()
            .unwrap_or(group.ami_family.root_device()),
        Resource::new("")
            .prop("DeleteOnTermination", true)
            .prop("Encrypted", root.encrypted)
            .prop_opt("Iops", root.iops)
            .prop_opt("KmsKeyId", kms_key(template, root.kms_key_id.as_ref()))
            .prop_opt("SnapshotId", root.snapshot_id.as_deref())
            .prop_opt("Throughput", root.throughput)
            .prop_opt("VolumeInitializationRate", root.initialization_rate)
            .prop_opt("VolumeSize", root.size_gib)
            .prop("VolumeType", root.volume_type.as_str()),
    )];
    for volume in &group.volumes {
        mappings.push(mapping(
            &volume.device_name,
            Resource::new("")
                .prop("DeleteOnTermination", volume.delete_on_termination)
                .prop("Encrypted", volume.encrypted)
                .prop_opt("Iops", volume.iops)
                .prop_opt("KmsKeyId", kms_key(template, volume.kms_key_id.as_ref()))
                .prop_opt("SnapshotId", volume.snapshot_id.as_deref())
                .prop_opt("Throughput", volume.throughput)
                .prop_opt("VolumeSize", volume.size_gib)
                .prop("VolumeType", volume.volume_type.as_str()),
        ));
    }
    Expr::List(mappings)
}
