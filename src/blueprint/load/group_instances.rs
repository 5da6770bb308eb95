//! The instance stage of a node group's resolution: the rules between its
//! instance fields, its kind, its family and its subnets (weights,
//! placement and reservations in either spelling, EFA). It reads across
//! sections, so it sits above the `instances` section it checks.

use super::instances::{TypeSpec, network_cards, supports_efa};
use super::node_group::GroupSpec;
use super::read::Opt;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::instances::instance_info;
use crate::blueprint::*;
use crate::source::Span;

/// The instance settings of a group once its kind and family are known.
pub(super) struct Resolved {
    pub(super) weights: Vec<u32>,
    pub(super) placement_group: Option<PlacementGroup>,
    pub(super) capacity_reservation: Option<CapacityReservation>,
    pub(super) efa: bool,
    /// The EFA interfaces, one per network card: the fewest cards of the
    /// group's types (0 without `efa`).
    pub(super) efa_cards: u32,
    /// The interfaces of cards 1 and up are EFA-only.
    pub(super) efa_only: bool,
}

/// The rules between the instance fields, the kind of group, its family
/// and its subnets; each broken rule is reported at the field it is about.
pub(super) fn check_instances(
    d: &mut Decoder,
    spec: &GroupSpec,
    is_managed: bool,
    family: AmiFamily,
    family_at: Span,
    subnets: &Located<Subnets>,
) -> Resolved {
    let types = spec
        .instance_types
        .as_ref()
        .map_or(&[][..], |t| &t.value[..]);
    let weighted: Vec<&TypeSpec> = types.iter().filter(|t| t.weight.is_some()).collect();
    let mut weights = Vec::new();
    if let Some(first) = weighted.first().and_then(|t| t.weight.as_ref()) {
        if is_managed {
            d.error(first.span, "managed node groups take no instance type weights")
                .help = Some(
                "EKS runs the Auto Scaling group of a managed group and counts instances; list the types alone".into(),
            );
        } else if let Some(unweighted) = types.iter().find(|t| t.weight.is_none()) {
            let message = format!(
                "`{}` has no weight, but other instance types have one",
                unweighted.name.value
            );
            d.error(unweighted.name.span, message).help = Some(
                "EC2 Auto Scaling needs a weight for every type once one has it: write it as `{type: …, weight: 1}`".into(),
            );
        } else {
            weights = types
                .iter()
                .filter_map(|t| t.weight.as_ref())
                .map(|w| w.value)
                .collect();
        }
    }

    if let (true, Some(requirements)) = (is_managed, &spec.instance_requirements) {
        d.error(
            requirements.span,
            "managed node groups do not support `instanceRequirements`",
        )
        .help = Some(
            "`AWS::EKS::Nodegroup` takes instance types by name only; list them in `instanceTypes`, or use a self-managed group".into(),
        );
    }

    let written_placement = one_spelling(
        d,
        "placementGroup",
        &spec.placement_group,
        &spec.lifecycle_placement_group,
    );
    let capacity_reservation = one_spelling(
        d,
        "capacityReservation",
        &spec.capacity_reservation,
        &spec.lifecycle_capacity_reservation,
    );
    if let Some(reservation) = &capacity_reservation
        && spec.capacity_reservation_id.is_some()
    {
        d.error(
            reservation.span,
            "`capacityReservation` is set for a capacity block group",
        )
        .help = Some("a capacity block group launches into its `capacityReservationId`; remove `capacityReservation`".into());
    }

    let efa = spec.efa.as_ref().filter(|e| e.value);
    let mut placement_group = written_placement.map(|p| PlacementGroup::Named(p.value));
    if let Some(efa) = efa {
        check_efa(d, spec, efa.span, family, family_at, subnets, types);
        placement_group = placement_group.or(Some(PlacementGroup::Cluster));
    }
    // A launch template serves every type of the group, and an interface
    // on a card a type lacks fails its launch; eksctl takes the fewest
    // cards of the types too.
    let efa_cards = if efa.is_some() {
        let mut names: Vec<&str> = types.iter().map(|t| t.name.value.as_str()).collect();
        names.extend(spec.instance_type.as_ref().map(|t| t.value.as_str()));
        names.into_iter().map(network_cards).min().unwrap_or(1)
    } else {
        0
    };
    let efa_only = spec.efa_only.as_ref().filter(|o| o.value && efa.is_some());
    if let Some(efa_only) = efa_only
        && efa_cards < 2
    {
        d.error(
            efa_only.span,
            "`efa.interfaces: efa-only` needs instance types of several network cards",
        )
        .help = Some(
            "EFA-only interfaces go on network cards 1 and up, and the group's types have one card (the fewest of its types); remove `interfaces`, or use types such as `p5.48xlarge`".into(),
        );
    }
    Resolved {
        weights,
        placement_group,
        capacity_reservation: capacity_reservation.map(|c| c.value),
        efa: efa.is_some(),
        efa_cards,
        efa_only: efa_only.is_some(),
    }
}

/// An Elastic Fabric Adapter works only on the instance types that have
/// one, on images with its driver, and within one Availability Zone: EFA
/// traffic does not cross subnets' zones, and the cluster placement group
/// the nodes share lives in one zone
/// (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html>).
fn check_efa(
    d: &mut Decoder,
    spec: &GroupSpec,
    at: Span,
    family: AmiFamily,
    family_at: Span,
    subnets: &Located<Subnets>,
    types: &[TypeSpec],
) {
    match family {
        AmiFamily::Windows(_) => {
            d.error(at, "`efa` is not supported on Windows nodes").help = Some(
                "EFA's OS-bypass does not work on Windows; use `AmazonLinux2023` or `Bottlerocket`"
                    .into(),
            );
            return;
        }
        AmiFamily::AmazonLinux2
            if matches!(
                spec.ami.as_ref().map(|a| &a.value),
                None | Some(Ami::Recommended)
            ) =>
        {
            d.error(at, "the EKS-optimized `AmazonLinux2` AMI has no EFA driver")
                .help = Some(format!(
                "use `amiFamily: AmazonLinux2023` (its images install the EFA software), or a custom `ami` that has it (family set at line {})",
                family_at.line
            ));
            return;
        }
        _ => {}
    }
    if let Some(requirements) = &spec.instance_requirements {
        d.error(
            requirements.span,
            "`efa` needs instance types by name, not `instanceRequirements`",
        )
        .help = Some(
            "attribute-based selection could choose types without an EFA; list EFA-capable types in `instanceTypes`".into(),
        );
    }
    for instance_type in types {
        if instance_info(&instance_type.name.value).is_some()
            && !supports_efa(&instance_type.name.value)
        {
            let message = format!(
                "`{}` has no Elastic Fabric Adapter",
                instance_type.name.value
            );
            d.error(instance_type.name.span, message).help = Some(
                "EFA is on the largest sizes of network- and GPU-heavy families (`c6in.32xlarge`, `p5.48xlarge`, `g6e.48xlarge`, ...); see data/efa/instance-types.txt".into(),
            );
        }
    }
    if let Some(single) = &spec.instance_type
        && instance_info(&single.value).is_some()
        && !supports_efa(&single.value)
    {
        let message = format!("`{}` has no Elastic Fabric Adapter", single.value);
        d.error(single.span, message).help = Some(
            "EFA is on the largest sizes of network- and GPU-heavy families (`c6in.32xlarge`, `p5.48xlarge`, `g6e.48xlarge`, ...); see data/efa/instance-types.txt".into(),
        );
    }
    if spec.subnets.is_none() {
        // Missing subnets are reported on their own.
        return;
    }
    let one_zone = match &subnets.value {
        Subnets::List(list) => list.len() == 1 || spec.per_az.as_ref().is_some_and(|p| p.value),
        _ => false,
    };
    if !one_zone {
        d.error(
            subnets.span,
            "an `efa` group launches in one subnet: list one, or set `perAz: true`",
        )
        .help = Some(
            "its nodes share a cluster placement group, which lives in one Availability Zone"
                .into(),
        );
    }
}

/// A field also written under `lifecycle`, its older place: either
/// spelling, not both.
fn one_spelling<T: Clone>(d: &mut Decoder, field: &str, top: &Opt<T>, old: &Opt<T>) -> Opt<T> {
    match (top, old) {
        (Some(top), Some(_)) => {
            let message = format!("`{field}` and `lifecycle.{field}` are both set");
            d.error(top.span, message).help = Some(format!("keep `{field}`"));
            None
        }
        (top, old) => top.as_ref().or(old.as_ref()).cloned(),
    }
}
