//! A group's `placement`: the tenancy of its instances and the partition
//! of its placement group they launch into, with the rules EC2 enforces
//! between them, the placement group and the instance types.
//!
//! The rules, each from the Amazon EC2 User Guide:
//! - a partition is a partition of the group's `placementGroup`, which must
//!   use the partition strategy; a partition placement group has at most
//!   seven partitions per Availability Zone ("Placement strategies for your
//!   placement groups", partition placement groups), and the cluster
//!   placement group eksynth makes for `efa` has none;
//! - of the burstable types only T3 runs as a Dedicated Instance ("Burstable
//!   performance instances", supported purchasing options: "Dedicated
//!   Instances (T3 only)");
//! - an instance of `host` tenancy needs a Dedicated Host to land on: a host
//!   ID, which the instances of one group cannot share, or a License Manager
//!   host resource group ("Configure instance tenancy" in the Amazon EC2 Auto
//!   Scaling User Guide), which eksynth does not write, so `host` is refused;
//! - `SpreadDomain` is reserved by EC2 for future use (the launch template's
//!   `Placement` in the CloudFormation resource schema), so it is refused.

use super::launch_options::burstable;
use super::read::{Opt, opt_u32};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::{Placement, PlacementGroup, Tenancy};
use crate::source::Span;
use crate::syntax::Node;

pub(in crate::blueprint) const PLACEMENT_FIELDS: &[Field] = &[
    Field::new("tenancy", Ty::OneOf(|| choices(TENANCIES)), "")
        .default("the VPC's (`default`: shared hardware)")
        .long(
            "`default` (shared hardware) or `dedicated` (Dedicated Instances: \
            hardware of this account only; of the burstable types only T3). \
            `host` is refused: an instance on a Dedicated Host needs a host ID or \
            a License Manager host resource group, which eksynth does not write. \
            EC2 cannot change an instance between `default` and `dedicated`, so a \
            change replaces the nodes: it changes the launch template, which \
            rolls them",
        ),
    Field::new(
        "partitionNumber",
        Ty::integer(1, 7),
        "The partition of `placementGroup` the instances launch into (a \
        partition placement group)",
    )
    .long(
        "the partition, 1 to 7, of the group's `placementGroup` that every \
        instance launches into (`Placement.PartitionNumber`); that placement \
        group must use the partition strategy, which EC2 checks at launch, and \
        has at most seven partitions per Availability Zone. Needs \
        `placementGroup`: the cluster placement group made for `efa` has no \
        partitions. Without it, EC2 spreads the instances over the partitions. \
        A change rolls the nodes",
    ),
    Field::new(
        "spreadDomain",
        Ty::Refused,
        "Refused: EC2 reserves `SpreadDomain` for future use",
    ),
];

/// `placement.tenancy`; `host` is known so that its refusal says why.
pub(in crate::blueprint) const TENANCIES: &[(&str, Tenancy)] = &[
    ("default", Tenancy::Default),
    ("dedicated", Tenancy::Dedicated),
    ("host", Tenancy::Host),
];

/// `placement` as written.
#[derive(Clone, Default)]
pub(super) struct PlacementSpec {
    pub(super) tenancy: Opt<Tenancy>,
    pub(super) partition_number: Opt<u32>,
}

impl PlacementSpec {
    /// The group's settings over the defaults', field by field.
    pub(super) fn over(self, d: PlacementSpec) -> PlacementSpec {
        PlacementSpec {
            tenancy: self.tenancy.or(d.tenancy),
            partition_number: self.partition_number.or(d.partition_number),
        }
    }
}

pub(super) fn decode_placement(d: &mut Decoder, node: &Node) -> PlacementSpec {
    let Some(mut f) = d.fields("placement", node, PLACEMENT_FIELDS) else {
        return PlacementSpec::default();
    };
    let tenancy = f
        .get("tenancy")
        .and_then(|n| d.choice("placement.tenancy", n, TENANCIES));
    let partition_number = opt_u32(d, &mut f, "placement.", "partitionNumber");
    if f.get("spreadDomain").is_some()
        && let Some(at) = f.key_span("spreadDomain")
    {
        d.error(at, "`placement.spreadDomain` is refused")
            .help = Some(
            "EC2 reserves the launch template's `SpreadDomain` for future use; a spread placement group's level is set on the group. Remove `spreadDomain`".into(),
        );
    }
    f.finish(d, "`placement`");
    PlacementSpec {
        tenancy,
        partition_number,
    }
}

/// Checks `placement` against the group's placement group and named
/// instance types, each problem at the setting it is about.
pub(super) fn check_placement(
    d: &mut Decoder,
    spec: &PlacementSpec,
    placement_group: Option<&PlacementGroup>,
    instance_types: &[Located<String>],
) -> Placement {
    let tenancy = spec
        .tenancy
        .as_ref()
        .and_then(|tenancy| match tenancy.value {
            Tenancy::Host => {
                refuse_host(d, tenancy.span);
                None
            }
            Tenancy::Dedicated => {
                check_dedicated(d, tenancy.span, instance_types);
                Some(Tenancy::Dedicated)
            }
            Tenancy::Default => Some(Tenancy::Default),
        });
    if let Some(partition) = &spec.partition_number {
        match placement_group {
            Some(PlacementGroup::Named(_)) => {}
            Some(PlacementGroup::Cluster) => {
                d.error(
                    partition.span,
                    "`placement.partitionNumber` names a partition, but the group's placement group is the cluster placement group made for `efa`",
                )
                .help = Some(
                    "a cluster placement group has no partitions; name a partition placement group in `placementGroup`, or remove `partitionNumber`".into(),
                );
            }
            None => {
                d.error(
                    partition.span,
                    "`placement.partitionNumber` needs `placementGroup`",
                )
                .help = Some(
                    "name the partition placement group the instances launch into, e.g. `placementGroup: kafka-partitions`".into(),
                );
            }
        }
    }
    Placement {
        tenancy,
        partition_number: spec.partition_number.as_ref().map(|p| p.value),
    }
}

fn refuse_host(d: &mut Decoder, at: Span) {
    d.error(at, "`placement.tenancy: host` is refused").help = Some(
        "an instance on a Dedicated Host needs a host ID, which the instances of one group cannot share, or a License Manager host resource group, which eksynth does not write; use `dedicated`, or set `Placement` with `overrides:`".into(),
    );
}

/// Of the burstable types, only T3 runs as a Dedicated Instance.
fn check_dedicated(d: &mut Decoder, at: Span, instance_types: &[Located<String>]) {
    let t3 = |name: &str| name.split('.').next() == Some("t3");
    if let Some(other) = instance_types
        .iter()
        .find(|t| burstable(&t.value) && !t3(&t.value))
    {
        let message = format!(
            "`{}` cannot run as a Dedicated Instance (`placement.tenancy: dedicated`)",
            other.value
        );
        d.error(at, message).help = Some(
            "of the burstable types EC2 offers only T3 as Dedicated Instances; use `t3` or a non-burstable type".into(),
        );
    }
}
