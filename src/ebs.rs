//! What EC2 allows an EBS volume of each type: its size, its IOPS, and its
//! throughput, alone and against each other. The blueprint loader checks a
//! root volume with it, and `validate` every literal volume of a template.
//!
//! Source: Amazon EBS User Guide, "Amazon EBS volume types"
//! (<https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html>),
//! with its pages on General Purpose SSD
//! (<https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html>)
//! and Provisioned IOPS SSD
//! (<https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html>)
//! volumes, as of 2025-11. Every `io2` volume is an io2 Block Express
//! volume now, with its 1,000 IOPS per GiB.

/// The limits of one volume type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub volume_type: &'static str,
    /// Volume size in GiB.
    pub size: (u64, u64),
    /// Provisioned IOPS, when the type takes them.
    pub iops: Option<Iops>,
    /// Provisioned throughput in MiB/s, when the type takes it (gp3).
    pub throughput: Option<Throughput>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iops {
    pub min: u64,
    pub max: u64,
    /// At most this many IOPS per GiB of size...
    pub per_gib: u64,
    /// ...except that this many are allowed at any size (gp3's baseline).
    pub baseline: u64,
    /// What a volume gets when it names none; `None` when it must name them.
    pub default: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throughput {
    pub min: u64,
    pub max: u64,
    /// At most one MiB/s per this many provisioned IOPS (0.25 MiB/s per IOPS).
    pub iops_per_mib: u64,
    pub default: u64,
}

/// The volume types and their limits.
pub const LIMITS: &[Limits] = &[
    Limits {
        volume_type: "gp3",
        size: (1, 65_536),
        iops: Some(Iops {
            min: 3_000,
            max: 80_000,
            per_gib: 500,
            baseline: 3_000,
            default: Some(3_000),
        }),
        throughput: Some(Throughput {
            min: 125,
            max: 2_000,
            iops_per_mib: 4,
            default: 125,
        }),
    },
    Limits {
        volume_type: "gp2",
        size: (1, 16_384),
        iops: None,
        throughput: None,
    },
    Limits {
        volume_type: "io1",
        size: (4, 16_384),
        iops: Some(Iops {
            min: 100,
            max: 64_000,
            per_gib: 50,
            baseline: 0,
            default: None,
        }),
        throughput: None,
    },
    Limits {
        volume_type: "io2",
        size: (4, 65_536),
        iops: Some(Iops {
            min: 100,
            max: 256_000,
            per_gib: 1_000,
            baseline: 0,
            default: None,
        }),
        throughput: None,
    },
    Limits {
        volume_type: "st1",
        size: (125, 16_384),
        iops: None,
        throughput: None,
    },
    Limits {
        volume_type: "sc1",
        size: (125, 16_384),
        iops: None,
        throughput: None,
    },
    Limits {
        volume_type: "standard",
        size: (1, 1_024),
        iops: None,
        throughput: None,
    },
];

/// The limits of `volume_type`, if it is one EC2 has.
pub fn limits(volume_type: &str) -> Option<&'static Limits> {
    LIMITS.iter().find(|l| l.volume_type == volume_type)
}

/// The setting of a volume a problem is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Size,
    Iops,
    Throughput,
}

/// A volume as written: a setting left out is `None`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Volume<'a> {
    pub volume_type: &'a str,
    pub size: Option<u64>,
    pub iops: Option<u64>,
    pub throughput: Option<u64>,
}

/// Everything EC2 would refuse about `volume`, each with the setting it is
/// about. An unknown type has no problems here (the schema reports it);
/// a setting the type does not take is the caller's to report, and is not
/// compared with the others. Without a size (a snapshot's), the limits per
/// GiB are not checked.
pub fn problems(volume: &Volume<'_>) -> Vec<(Setting, String)> {
    let Some(limits) = limits(volume.volume_type) else {
        return Vec::new();
    };
    let name = limits.volume_type;
    let mut out = Vec::new();
    if let Some(size) = volume.size {
        let (low, high) = limits.size;
        if !(low..=high).contains(&size) {
            out.push((
                Setting::Size,
                format!("{name} volumes are {low} to {high} GiB, not {size}"),
            ));
        }
    }
    let iops = limits
        .iops
        .and_then(|rule| Some((rule, volume.iops.or(rule.default)?)));
    if let Some((rule, iops)) = iops {
        let written = volume.iops.is_some();
        if written && !(rule.min..=rule.max).contains(&iops) {
            out.push((
                Setting::Iops,
                format!(
                    "{name} volumes take {} to {} IOPS, not {iops}",
                    rule.min, rule.max
                ),
            ));
        } else if written
            && let Some(size) = volume.size
            && iops > rule.baseline.max(rule.per_gib * size)
        {
            let most = rule.baseline.max(rule.per_gib * size);
            out.push((
                Setting::Iops,
                format!(
                    "{iops} IOPS on a {size} GiB {name} volume is above its limit of {most} ({} IOPS per GiB)",
                    rule.per_gib
                ),
            ));
        }
        if let (Some(rule), Some(throughput)) = (limits.throughput, volume.throughput) {
            if !(rule.min..=rule.max).contains(&throughput) {
                out.push((
                    Setting::Throughput,
                    format!(
                        "{name} volumes take {} to {} MiB/s, not {throughput}",
                        rule.min, rule.max
                    ),
                ));
            } else if throughput * rule.iops_per_mib > iops {
                let most = iops / rule.iops_per_mib;
                out.push((
                    Setting::Throughput,
                    format!(
                        "{throughput} MiB/s with {iops} IOPS is above the limit of {most} MiB/s (1 MiB/s per {} IOPS)",
                        rule.iops_per_mib
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        volume_type: &str,
        size: u64,
        iops: Option<u64>,
        throughput: Option<u64>,
    ) -> Vec<Setting> {
        problems(&Volume {
            volume_type,
            size: Some(size),
            iops,
            throughput,
        })
        .into_iter()
        .map(|(setting, _)| setting)
        .collect()
    }

    #[test]
    fn gp3_iops_are_at_most_500_per_gib_above_the_baseline() {
        assert_eq!(check("gp3", 20, Some(10_000), None), []);
        assert_eq!(check("gp3", 20, Some(10_001), None), [Setting::Iops]);
        assert_eq!(check("gp3", 20, Some(20_000), None), [Setting::Iops]);
        // 3,000 IOPS are allowed at any size.
        assert_eq!(check("gp3", 1, Some(3_000), None), []);
        assert_eq!(check("gp3", 1, None, None), []);
        assert_eq!(check("gp3", 160, Some(80_000), None), []);
        assert_eq!(check("gp3", 1_000, Some(80_001), None), [Setting::Iops]);
    }

    #[test]
    fn gp3_throughput_is_at_most_a_quarter_of_the_iops() {
        assert_eq!(check("gp3", 20, None, Some(750)), []);
        assert_eq!(check("gp3", 20, None, Some(751)), [Setting::Throughput]);
        assert_eq!(check("gp3", 20, Some(4_000), Some(1_000)), []);
        assert_eq!(
            check("gp3", 20, Some(4_000), Some(1_001)),
            [Setting::Throughput]
        );
        assert_eq!(check("gp3", 20, Some(8_000), Some(2_000)), []);
        assert_eq!(
            check("gp3", 40, Some(20_000), Some(2_001)),
            [Setting::Throughput]
        );
        assert_eq!(check("gp3", 20, None, Some(124)), [Setting::Throughput]);
    }

    #[test]
    fn io1_and_io2_have_their_own_ratios_and_sizes() {
        assert_eq!(check("io1", 20, Some(1_000), None), []);
        assert_eq!(check("io1", 20, Some(1_001), None), [Setting::Iops]);
        assert_eq!(check("io2", 20, Some(20_000), None), []);
        assert_eq!(check("io2", 20, Some(20_001), None), [Setting::Iops]);
        assert_eq!(check("io1", 2, Some(100), None), [Setting::Size]);
        assert_eq!(check("io2", 300, Some(256_001), None), [Setting::Iops]);
    }

    #[test]
    fn sizes_follow_the_type() {
        assert_eq!(check("st1", 124, None, None), [Setting::Size]);
        assert_eq!(check("st1", 125, None, None), []);
        assert_eq!(check("standard", 1_025, None, None), [Setting::Size]);
        assert_eq!(check("gp2", 16_385, None, None), [Setting::Size]);
        assert_eq!(check("gp3", 65_536, None, None), []);
    }

    #[test]
    fn without_a_size_only_the_ranges_are_checked() {
        let volume = Volume {
            volume_type: "gp3",
            size: None,
            iops: Some(20_000),
            throughput: None,
        };
        assert!(problems(&volume).is_empty());
    }
}
