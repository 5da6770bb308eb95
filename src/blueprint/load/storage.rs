//! A node group's storage: `rootVolume`, the extra EBS `volumes` and
//! `instanceStore`. Each volume is checked against EC2's limits for its
//! type (`crate::ebs`), each problem at the setting it is about; device
//! names follow each family's rules.
//!
//! Device names: EC2 takes `/dev/sd[b-z]` and `/dev/xvd[b-z]` for EBS
//! volumes of Linux instances, the kernel showing `sdX` as `xvdX`, so the
//! two spellings of one letter are one device; Windows instances take
//! `xvd[b-z]` (Amazon EC2 User Guide, "Device names for volumes on Amazon
//! EC2 instances",
//! <https://docs.aws.amazon.com/ebs/latest/userguide/device_naming.html>).
//! The root device is `/dev/xvda` (Windows: `/dev/sda1`), or the one
//! `rootVolume.deviceName` names for a custom image; Bottlerocket's data
//! volume, which `rootVolume` sizes, is `/dev/xvdb`, named by its image.

use super::read::Opt;
use super::read::{first_column, missing, opt_bool, opt_string, opt_u32};
use super::sources::decode_source;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

// What the root volume and the other volumes declare alike.
const IOPS: Field = Field::new("iops", Ty::integer(100, 256_000), "IOPS");
const THROUGHPUT: Field = Field::new("throughput", Ty::integer(125, 2000), "MiB/s (gp3)");
const ENCRYPTED: Field =
    Field::new("encrypted", Ty::Boolean, "Encrypted (the default)").default("`true`");
const KMS_KEY_ID: Field = Field::new(
    "kmsKeyId",
    Ty::Source,
    "A KMS key ID, ARN or alias: a literal, a parameter or an import",
);

pub(in crate::blueprint) const VOLUME_FIELDS: &[Field] = &[
    Field::new(
        "size",
        Ty::integer(1, 65_536),
        "GiB (the range depends on the type)",
    )
    .default("20"),
    Field::new("type", Ty::OneOf(|| VOLUME_TYPES.to_vec()), "")
        .default("`gp3`")
        .long("the EBS volume type"),
    IOPS,
    THROUGHPUT,
    ENCRYPTED,
    KMS_KEY_ID,
    Field::new(
        "snapshotId",
        Ty::pattern("^snap-([0-9a-f]{8}|[0-9a-f]{17})$", None),
        "The snapshot the volume starts from (Bottlerocket: a data volume with \
        images already pulled)",
    )
    .long(
        "the EBS snapshot the volume starts from (`SnapshotId`); `size` then \
        defaults to the snapshot's, and a `size` below it fails at launch. On \
        Bottlerocket this is the data volume, so a snapshot of one holds \
        container images pulled in advance. Changing it changes the launch \
        template, which rolls the nodes",
    ),
    Field::new(
        "deviceName",
        Ty::pattern("^/dev/(xvda|sda1)$", None),
        "The image's root device, for a custom image whose root is not the \
        family's",
    )
    .default("the family's root device: `/dev/xvda` (Windows: `/dev/sda1`)")
    .long(
        "the root device of the image (`/dev/xvda` or `/dev/sda1`, the names \
        EC2 gives root devices), for a custom `ami` whose root device is not \
        the family's: a mapping under any other name adds a volume and leaves \
        the root at the image's size. With `ami: recommended` it must be the \
        family's own. Refused on Bottlerocket, whose `rootVolume` is the data \
        volume the image names `/dev/xvdb`",
    ),
    Field::new(
        "initializationRate",
        Ty::integer(100, 300),
        "MiB/s at which the volume is filled from its `snapshotId` \
        (`VolumeInitializationRate`)",
    )
    .long(
        "MiB/s, 100 to 300, at which EBS fills the volume from `snapshotId` \
        (`VolumeInitializationRate`, a provisioned rate billed per volume), so \
        that a node reads its whole root (Bottlerocket: its image cache) at a \
        known speed after launch; only with `snapshotId`. Without it EBS fills \
        the volume at its default rate, or at once from a snapshot with fast \
        snapshot restore",
    ),
];
pub(in crate::blueprint) const DATA_VOLUME_FIELDS: &[Field] = &[
    Field::new(
        "deviceName",
        Ty::pattern("^(/dev/(xvd|sd)[b-z]|xvd[b-z])$", None),
        "`/dev/xvd[b-z]` or `/dev/sd[b-z]` (Bottlerocket: from `c`); Windows: \
        `xvd[b-z]`",
    )
    .required(),
    Field::new(
        "size",
        Ty::integer(1, 65_536),
        "GiB (the range depends on the type); default: the snapshot's",
    ),
    Field::new("type", Ty::OneOf(|| VOLUME_TYPES.to_vec()), "Default gp3").default("`gp3`"),
    IOPS,
    THROUGHPUT,
    ENCRYPTED,
    KMS_KEY_ID,
    Field::new(
        "snapshotId",
        Ty::pattern("^snap-([0-9a-f]{8}|[0-9a-f]{17})$", None),
        "The snapshot the volume starts from",
    ),
    Field::new(
        "deleteOnTermination",
        Ty::Boolean,
        "Deleted with the instance (the default)",
    )
    .default("`true`"),
];
/// The names EC2 gives root devices (Amazon EC2 User Guide, "Device names
/// for volumes on Amazon EC2 instances").
const ROOT_DEVICES: &[&str] = &["/dev/xvda", "/dev/sda1"];
pub(in crate::blueprint) const VOLUME_TYPES: &[&str] =
    &["gp3", "gp2", "io1", "io2", "st1", "sc1", "standard"];
/// `instanceStore`: how the instance store NVMe disks are assembled.
pub(in crate::blueprint) const INSTANCE_STORE_POLICIES: &[(&str, InstanceStore)] =
    &[("raid0", InstanceStore::Raid0)];

/// The settings every volume has, as written.
#[derive(Clone, Default)]
pub(super) struct VolumeSpec {
    pub(super) size: Opt<u32>,
    pub(super) volume_type: Opt<String>,
    pub(super) iops: Opt<u32>,
    pub(super) throughput: Opt<u32>,
    pub(super) encrypted: Opt<bool>,
    pub(super) kms_key_id: Opt<Source>,
}

impl VolumeSpec {
    /// The group's settings over the defaults', field by field.
    pub(super) fn over(self, d: VolumeSpec) -> VolumeSpec {
        VolumeSpec {
            size: self.size.or(d.size),
            volume_type: self.volume_type.or(d.volume_type),
            iops: self.iops.or(d.iops),
            throughput: self.throughput.or(d.throughput),
            encrypted: self.encrypted.or(d.encrypted),
            kms_key_id: self.kms_key_id.or(d.kms_key_id),
        }
    }
}

/// `rootVolume` as written: the settings every volume has, and its own.
#[derive(Clone, Default)]
pub(super) struct RootVolumeSpec {
    pub(super) settings: VolumeSpec,
    pub(super) snapshot_id: Opt<String>,
    pub(super) device_name: Opt<String>,
    pub(super) initialization_rate: Opt<u32>,
}

impl RootVolumeSpec {
    /// The group's settings over the defaults', field by field.
    pub(super) fn over(self, d: RootVolumeSpec) -> RootVolumeSpec {
        RootVolumeSpec {
            settings: self.settings.over(d.settings),
            snapshot_id: self.snapshot_id.or(d.snapshot_id),
            device_name: self.device_name.or(d.device_name),
            initialization_rate: self.initialization_rate.or(d.initialization_rate),
        }
    }
}

/// One entry of `volumes` as written.
#[derive(Clone)]
pub(super) struct DataVolumeSpec {
    device_name: Located<String>,
    settings: VolumeSpec,
    snapshot_id: Opt<String>,
    /// `snapshotId` or `size` is written, even if wrong (then already
    /// reported).
    sized: bool,
    delete_on_termination: Opt<bool>,
    /// The entry itself.
    span: Span,
}

/// Decodes the settings of `rootVolume` or of one `volumes` entry; `what`
/// names it in messages (`rootVolume`, `volumes[]`).
fn decode_settings(
    d: &mut Decoder,
    f: &mut crate::blueprint::decode::Fields<'_>,
    what: &str,
) -> VolumeSpec {
    let prefix = format!("{what}.");
    VolumeSpec {
        size: opt_u32(d, f, &prefix, "size"),
        volume_type: f.get("type").and_then(|n| {
            d.name_choice(&format!("{what}.type"), n, VOLUME_TYPES)
                .map(|c| Located::new(c.value.to_string(), c.span))
        }),
        iops: opt_u32(d, f, &prefix, "iops"),
        throughput: opt_u32(d, f, &prefix, "throughput"),
        encrypted: opt_bool(d, f, &prefix, "encrypted"),
        kms_key_id: f
            .get("kmsKeyId")
            .and_then(|n| decode_source(d, &format!("{what}.kmsKeyId"), n)),
    }
}

/// A volume's `snapshotId`, an EBS snapshot ID.
fn decode_snapshot_id(
    d: &mut Decoder,
    f: &mut crate::blueprint::decode::Fields<'_>,
    what: &str,
) -> Opt<String> {
    opt_string(d, f, &format!("{what}."), "snapshotId").and_then(|id| {
        let ok = rules::is_ec2_id("snap", &id.value);
        if !ok {
            let message = format!("`{}` is not an EBS snapshot ID", id.value);
            d.error(id.span, message).help =
                Some("snapshot IDs look like `snap-0123456789abcdef0`".into());
        }
        ok.then_some(id)
    })
}

pub(super) fn decode_volume(d: &mut Decoder, node: &Node) -> RootVolumeSpec {
    let Some(mut f) = d.fields("rootVolume", node, VOLUME_FIELDS) else {
        return RootVolumeSpec::default();
    };
    let settings = decode_settings(d, &mut f, "rootVolume");
    let snapshot_id = decode_snapshot_id(d, &mut f, "rootVolume");
    let device_name = opt_string(d, &mut f, "rootVolume.", "deviceName").and_then(|name| {
        let ok = ROOT_DEVICES.contains(&name.value.as_str());
        if !ok {
            let message = format!("`{}` is not a root device name", name.value);
            d.error(name.span, message).help =
                Some("EC2 names a root device `/dev/xvda` or `/dev/sda1`".into());
        }
        ok.then_some(name)
    });
    let initialization_rate = opt_u32(d, &mut f, "rootVolume.", "initializationRate");
    f.finish(d, "`rootVolume`");
    RootVolumeSpec {
        settings,
        snapshot_id,
        device_name,
        initialization_rate,
    }
}

/// `volumes`: a list of extra EBS volumes.
pub(super) fn decode_volumes(d: &mut Decoder, node: &Node) -> Opt<Vec<DataVolumeSpec>> {
    if let Value::Map(_) = node.value {
        d.wrong_type("volumes", node, "a list").help =
            Some("write each volume as `- {deviceName: /dev/xvdf, size: 100}`".into());
        return None;
    }
    let volumes = d
        .list("volumes", node)
        .iter()
        .filter_map(|n| decode_data_volume(d, n))
        .collect();
    Some(Located::new(volumes, node.span))
}

fn decode_data_volume(d: &mut Decoder, node: &Node) -> Option<DataVolumeSpec> {
    let mut f = d.fields("volumes[]", node, DATA_VOLUME_FIELDS)?;
    let device_name = opt_string(d, &mut f, "volumes[].", "deviceName");
    let settings = decode_settings(d, &mut f, "volumes[]");
    let snapshot_id = decode_snapshot_id(d, &mut f, "volumes[]");
    let delete_on_termination = opt_bool(d, &mut f, "volumes[].", "deleteOnTermination");
    f.finish(d, "a volume");
    let sized = f.given("size") || f.given("snapshotId");
    if f.given("deviceName") && device_name.is_none() {
        return None;
    }
    let Some(device_name) = device_name else {
        missing(
            d,
            first_column(node.span),
            "deviceName",
            "volume",
            "the device to attach it as, e.g. `deviceName: /dev/xvdf`",
        );
        return None;
    };
    Some(DataVolumeSpec {
        device_name,
        settings,
        snapshot_id,
        sized,
        delete_on_termination,
        span: node.span,
    })
}

/// What one volume's settings come to: size (none for a snapshot's own),
/// type, IOPS, throughput and encryption.
struct Checked {
    size_gib: Option<u32>,
    volume_type: String,
    encrypted: bool,
}

/// Checks one volume's settings against EC2's limits for its type, each
/// problem at the setting it is about (or the type, or `at`, for a
/// default). `what` names the volume in messages (`rootVolume`,
/// `volumes[]`); `label` in the warning about encryption.
fn check_settings(
    d: &mut Decoder,
    spec: &VolumeSpec,
    what: &str,
    label: &str,
    size_gib: Option<u32>,
    at: Span,
) -> Checked {
    let volume_type = spec
        .volume_type
        .as_ref()
        .map_or("gp3".to_string(), |t| t.value.clone());
    let volume_limits = crate::ebs::limits(&volume_type);
    let takes_iops = volume_limits.is_some_and(|l| l.iops.is_some());
    let takes_throughput = volume_limits.is_some_and(|l| l.throughput.is_some());
    if let Some(iops) = &spec.iops
        && !takes_iops
    {
        d.error(
            iops.span,
            format!("`{what}.iops` cannot be set for {volume_type} volumes"),
        )
        .help = Some("IOPS are set only for gp3, io1 and io2".into());
    }
    if spec.iops.is_none()
        && volume_limits.is_some_and(|l| l.iops.is_some_and(|i| i.default.is_none()))
    {
        let at = spec.volume_type.as_ref().map_or(at, |t| t.span);
        d.error(at, format!("{volume_type} volumes need `{what}.iops`"));
    }
    if let Some(throughput) = &spec.throughput
        && !takes_throughput
    {
        d.error(
            throughput.span,
            format!("`{what}.throughput` can only be set for gp3 volumes"),
        );
    }
    let volume = crate::ebs::Volume {
        volume_type: &volume_type,
        size: size_gib.map(u64::from),
        iops: spec
            .iops
            .as_ref()
            .filter(|_| takes_iops)
            .map(|v| u64::from(v.value)),
        throughput: spec
            .throughput
            .as_ref()
            .filter(|_| takes_throughput)
            .map(|v| u64::from(v.value)),
    };
    for (setting, problem) in crate::ebs::problems(&volume) {
        let (field, setting_at) = match setting {
            crate::ebs::Setting::Size => ("size", spec.size.as_ref().map(|v| v.span)),
            crate::ebs::Setting::Iops => ("iops", spec.iops.as_ref().map(|v| v.span)),
            crate::ebs::Setting::Throughput => {
                ("throughput", spec.throughput.as_ref().map(|v| v.span))
            }
        };
        let setting_at = setting_at
            .or_else(|| spec.volume_type.as_ref().map(|t| t.span))
            .unwrap_or(at);
        d.error(setting_at, format!("`{what}.{field}`: {problem}"))
            .help =
            Some("EC2 limits each volume type's size, IOPS per GiB and throughput per IOPS".into());
    }
    let encrypted = spec.encrypted.as_ref().is_none_or(|e| e.value);
    if let Some(flag) = &spec.encrypted
        && !flag.value
    {
        d.warning(flag.span, format!("{label} is not encrypted")).help =
                Some("leave `encrypted` at its default `true`; the account's default EBS key is used when no `kmsKeyId` is given".into());
        if let Some(key) = &spec.kms_key_id {
            d.error(key.span, "`kmsKeyId` is set but `encrypted` is false");
        }
    }
    Checked {
        size_gib,
        volume_type,
        encrypted,
    }
}

/// Checks the root volume and returns it; `at` is the group's name. A
/// volume from a snapshot takes the snapshot's size unless told otherwise.
pub(super) fn check_root_volume(
    d: &mut Decoder,
    spec: &RootVolumeSpec,
    family: AmiFamily,
    custom_image: bool,
    at: Span,
) -> Volume {
    let root = &spec.settings;
    let size_gib = match (&root.size, &spec.snapshot_id) {
        (Some(size), _) => Some(size.value),
        (None, Some(_)) => None,
        (None, None) => Some(20),
    };
    let checked = check_settings(d, root, "rootVolume", "the root volume", size_gib, at);
    if let Some(rate) = &spec.initialization_rate
        && spec.snapshot_id.is_none()
    {
        d.error(
            rate.span,
            "`rootVolume.initializationRate` needs `rootVolume.snapshotId`",
        )
        .help = Some(
            "EBS fills only a volume made from a snapshot at a provisioned rate; add the snapshot or remove the rate"
                .into(),
        );
    }
    if let Some(name) = &spec.device_name {
        check_root_device(d, name, family, custom_image);
    }
    Volume {
        size_gib: checked.size_gib,
        volume_type: checked.volume_type,
        iops: root.iops.as_ref().map(|v| v.value),
        throughput: root.throughput.as_ref().map(|v| v.value),
        encrypted: checked.encrypted,
        kms_key_id: root.kms_key_id.clone(),
        snapshot_id: spec.snapshot_id.as_ref().map(|s| s.value.clone()),
        device_name: spec.device_name.as_ref().map(|n| n.value.clone()),
        initialization_rate: spec.initialization_rate.as_ref().map(|r| r.value),
    }
}

/// `rootVolume.deviceName`: not on Bottlerocket, whose `rootVolume` is the
/// data volume its image names, and only the family's own root device on
/// the EKS-optimized image, where any other name would add a volume.
fn check_root_device(d: &mut Decoder, name: &Located<String>, family: AmiFamily, custom: bool) {
    let own = family.root_device();
    if family == AmiFamily::Bottlerocket {
        d.error(
            name.span,
            "`rootVolume.deviceName` is not taken on Bottlerocket",
        )
        .help = Some(format!(
            "Bottlerocket's `rootVolume` is its data volume, which its image names `{own}`; remove `deviceName`"
        ));
    } else if !custom && name.value != own {
        d.error(
            name.span,
            format!(
                "the EKS-optimized {} image's root device is `{own}`, not `{}`",
                family.name(),
                name.value
            ),
        )
        .help = Some(
            "a mapping under another name adds a volume and leaves the root as the image made it; remove `deviceName`, or set it with a custom `ami`"
                .into(),
        );
    }
}

/// The letter of a device name that `family` takes for an extra volume,
/// or why it takes none.
fn device_letter(name: &str, family: AmiFamily) -> Result<char, String> {
    let (rest, expected) = match family {
        AmiFamily::Windows(_) => (name.strip_prefix("xvd"), "`xvd[b-z]` on Windows"),
        _ => (
            name.strip_prefix("/dev/xvd")
                .or_else(|| name.strip_prefix("/dev/sd")),
            "`/dev/xvd[b-z]` or `/dev/sd[b-z]` on Linux",
        ),
    };
    let mut chars = rest.into_iter().flat_map(str::chars);
    match (chars.next(), chars.next()) {
        (Some(letter @ 'b'..='z'), None) => Ok(letter),
        (Some('a'), None) if !matches!(family, AmiFamily::Windows(_)) => Err(format!(
            "`{name}` is the root device; extra volumes take {expected}"
        )),
        _ => Err(format!("expected {expected}")),
    }
}

/// Checks the group's extra volumes and returns them.
pub(super) fn check_volumes(
    d: &mut Decoder,
    volumes: &[DataVolumeSpec],
    family: AmiFamily,
) -> Vec<DataVolume> {
    let mut out = Vec::new();
    let mut taken: Vec<(char, &Located<String>)> = Vec::new();
    for volume in volumes {
        let device = &volume.device_name;
        match device_letter(&device.value, family) {
            Err(problem) => {
                d.error(
                    device.span,
                    format!("device name `{}` does not fit: {problem}", device.value),
                )
                .help = Some(
                    "EC2 names EBS devices by letter; `/dev/xvda` (Windows: `/dev/sda1`) is the root device"
                        .into(),
                );
            }
            Ok('b') if family == AmiFamily::Bottlerocket => {
                d.error(
                    device.span,
                    format!(
                        "`{}` is Bottlerocket's data volume, which `rootVolume` sets",
                        device.value
                    ),
                )
                .help = Some("choose a device from `/dev/xvdc` on, or size the data volume with `rootVolume`".into());
            }
            Ok(letter) => match taken.iter().find(|(l, _)| *l == letter) {
                Some((_, first)) => {
                    d.error(
                        device.span,
                        format!(
                            "device `{}` is the device of the volume at line {} (`{}`)",
                            device.value, first.span.line, first.value
                        ),
                    )
                    .help = Some(
                        "each volume needs its own letter; `/dev/sdX` and `/dev/xvdX` are one device"
                            .into(),
                    );
                }
                None => taken.push((letter, device)),
            },
        }
        let settings = &volume.settings;
        let size = settings.size.as_ref().map(|s| s.value);
        if !volume.sized {
            d.error(
                first_column(volume.span),
                format!("volume `{}` needs `size` or `snapshotId`", device.value),
            )
            .help = Some("give its size in GiB, e.g. `size: 100`".into());
        }
        let label = format!("volume `{}`", device.value);
        let checked = check_settings(d, settings, "volumes[]", &label, size, device.span);
        out.push(DataVolume {
            device_name: device.value.clone(),
            size_gib: checked.size_gib,
            volume_type: checked.volume_type,
            iops: settings.iops.as_ref().map(|v| v.value),
            throughput: settings.throughput.as_ref().map(|v| v.value),
            encrypted: checked.encrypted,
            kms_key_id: settings.kms_key_id.clone(),
            snapshot_id: volume.snapshot_id.as_ref().map(|s| s.value.clone()),
            delete_on_termination: volume
                .delete_on_termination
                .as_ref()
                .is_none_or(|v| v.value),
        });
    }
    out
}

/// `instanceStore` on a family that cannot assemble the disks, and the
/// `bootstrapArguments` that would assemble them a second time.
pub(super) fn check_instance_store(
    d: &mut Decoder,
    store: &Located<InstanceStore>,
    family: AmiFamily,
    bootstrap_arguments: Option<&Located<String>>,
) {
    if let AmiFamily::Windows(_) = family {
        d.error(
            store.span,
            format!("`instanceStore` is not supported on `{}`", family.name()),
        )
        .help = Some(
            "the EKS Windows AMIs have no tool that assembles instance store disks; format them in `preBootstrapCommands`"
                .into(),
        );
    }
    if family.is_ubuntu() {
        d.error(
            store.span,
            format!("`instanceStore` is not supported on `{}`", family.name()),
        )
        .help = Some(
            "Canonical's bootstrap.sh has no `--local-disks` and its images no setup-local-disks; assemble the disks in `preBootstrapCommands`"
                .into(),
        );
    }
    if family == AmiFamily::AmazonLinux2
        && let Some(arguments) = bootstrap_arguments
        && arguments.value.contains("--local-disks")
    {
        d.error(
            arguments.span,
            "`bootstrapArguments` sets `--local-disks`, which `instanceStore` sets too",
        )
        .help = Some("set it once: remove `--local-disks` here".into());
    }
}

#[cfg(test)]
mod tests {
    use super::VOLUME_TYPES;

    #[test]
    fn every_volume_type_the_loader_takes_has_ebs_limits_and_no_more() {
        let limited: Vec<&str> = crate::ebs::LIMITS.iter().map(|l| l.volume_type).collect();
        let mut taken = VOLUME_TYPES.to_vec();
        let mut known = limited.clone();
        taken.sort_unstable();
        known.sort_unstable();
        assert_eq!(taken, known);
    }
}
