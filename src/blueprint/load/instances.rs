//! The instance fields of a node group: `instanceTypes` with weights,
//! `instanceRequirements` (attribute-based selection), `placementGroup`,
//! `capacityReservation` and `efa`, and the rules between them and the kind
//! of group, the family and the subnets.

use super::read::Opt;
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const INSTANCE_TYPE_FIELDS: &[Field] = &[
    Field::new("type", Ty::STRING, "An instance type").required(),
    Field::new(
        "weight",
        Ty::integer(1, MAX_WEIGHT),
        "Capacity units one instance of the type counts for (`WeightedCapacity`)",
    )
    .required(),
];
pub(in crate::blueprint) const REQUIREMENTS_FIELDS: &[Field] = &[
    Field::new(
        "architecture",
        Ty::OneOf(|| choices(ARCHITECTURES)),
        "The image's architecture (default x86_64): only matching types that run \
        it are launched",
    )
    .default("`x86_64`"),
    Field::new("vCpuCount", Ty::Object("range"), "vCPUs (required)").required(),
    Field::new("memoryMiB", Ty::Object("range"), "Memory in MiB (required)").required(),
    Field::new(
        "instanceGenerations",
        Ty::list(&Ty::OneOf(|| INSTANCE_GENERATIONS.to_vec())),
        "Instance generations (default: both)",
    ),
    Field::new(
        "excludedInstanceTypes",
        Ty::List {
            item: &Ty::pattern("^[a-z0-9.*-]{1,30}$", None),
            min: None,
            max: Some(400),
        },
        "Instance types or wildcard patterns (`t2.*`) never chosen",
    ),
];
pub(in crate::blueprint) const RANGE_FIELDS: &[Field] = &[
    Field::new("min", Ty::Integer { min: 1, max: None }, "The least").required(),
    Field::new(
        "max",
        Ty::Integer { min: 1, max: None },
        "The most (no upper bound when left out)",
    ),
];
pub(in crate::blueprint) const CAPACITY_RESERVATION_FIELDS: &[Field] = &[Field::new(
    "resourceGroupArn",
    Ty::pattern("^arn:.+:resource-groups:.*:group/.+$", None),
    "A resource group of capacity reservations",
)
.required()];
pub(in crate::blueprint) const EFA_FIELDS: &[Field] =
    &[
        Field::new("interfaces", Ty::OneOf(|| choices(EFA_INTERFACES)), "")
            .default("`efa`")
            .long(
                "the interfaces of network cards 1 and up: `efa` (EFA with ENA, each with \
    a private IP address) or `efa-only` (`InterfaceType: efa-only`: the EFA \
    device alone, which takes no IP address, as AWS recommends for GPU \
    instances with many cards such as `p5.48xlarge`). The primary interface \
    on card 0 stays EFA with ENA, which carries the node's IP traffic. Needs \
    instance types of more than one network card; a change rolls the nodes",
            ),
    ];
/// `efa.interfaces`: whether the secondary cards' EFAs are EFA-only.
pub(in crate::blueprint) const EFA_INTERFACES: &[(&str, bool)] =
    &[("efa", false), ("efa-only", true)];
pub(in crate::blueprint) const ARCHITECTURES: &[(&str, Arch)] =
    &[("x86_64", Arch::X86_64), ("arm64", Arch::Arm64)];
pub(in crate::blueprint) const INSTANCE_GENERATIONS: &[&str] = &["current", "previous"];
pub(in crate::blueprint) const ON_DEMAND_ALLOCATION_STRATEGIES: &[&str] =
    &["prioritized", "lowest-price"];
/// The upper bounds EC2 Auto Scaling accepts for `WeightedCapacity`.
const MAX_WEIGHT: i64 = 999;
/// `ExcludedInstanceTypes` holds at most 400 entries.
const MAX_EXCLUDED: usize = 400;

/// The instance types EC2 lists as supporting an Elastic Fabric Adapter
/// (vendored in `data/efa/`).
const EFA_INSTANCE_TYPES: &str = include_str!("../../../data/efa/instance-types.txt");

pub(in crate::blueprint) fn supports_efa(instance_type: &str) -> bool {
    EFA_INSTANCE_TYPES.lines().any(|line| line == instance_type)
}

/// The network cards of each EFA-capable instance type, `<type> <count>` a
/// line (vendored in `data/efa/`).
const EFA_NETWORK_CARDS: &str = include_str!("../../../data/efa/network-cards.txt");

/// How many network cards an EFA-capable type has: each can carry one EFA.
/// 1 for a type the vendored table does not list.
pub(in crate::blueprint) fn network_cards(instance_type: &str) -> u32 {
    EFA_NETWORK_CARDS
        .lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(name, _)| *name == instance_type)
        .and_then(|(_, count)| count.parse().ok())
        .unwrap_or(1)
}

/// One `instanceTypes` item: a type, and its weight when written as
/// `{type, weight}`.
#[derive(Clone)]
pub(super) struct TypeSpec {
    pub(super) name: Located<String>,
    pub(super) weight: Option<Located<u32>>,
}

/// `instanceTypes`: each item a type name or `{type, weight}`. `None` when
/// an item did not decode (reported), so that the list is not also
/// reported as missing.
pub(super) fn decode_instance_types(d: &mut Decoder, node: &Node) -> Opt<Vec<TypeSpec>> {
    let Value::Seq(items) = &node.value else {
        d.wrong_type("instanceTypes", node, "a list");
        return None;
    };
    let mut types = Vec::new();
    let mut ok = true;
    for item in items {
        let decoded = match &item.value {
            Value::Map(_) => decode_weighted(d, item),
            _ => d
                .string("instanceTypes", item)
                .map(|name| TypeSpec { name, weight: None }),
        };
        match decoded {
            Some(spec) => types.push(spec),
            None => ok = false,
        }
    }
    ok.then(|| Located::new(types, node.span))
}

fn decode_weighted(d: &mut Decoder, node: &Node) -> Option<TypeSpec> {
    let mut f = d.fields("instanceTypes", node, INSTANCE_TYPE_FIELDS)?;
    let name = f
        .get("type")
        .and_then(|n| d.string("instanceTypes.type", n));
    let (min, max) = f.range("weight");
    let weight = f
        .get("weight")
        .and_then(|n| d.integer("instanceTypes.weight", n, min, max))
        .map(|w| Located::new(w.value as u32, w.span));
    let reported = f.finish(d, "an `instanceTypes` item");
    let Some(name) = name else {
        if !f.given("type") && reported.is_empty() {
            d.error(node.span, "missing field `type` in an `instanceTypes` item")
                .help = Some("write the item as `{type: m6i.large, weight: 2}`".into());
        }
        return None;
    };
    if weight.is_none() && !f.given("weight") {
        d.error(
            node.span,
            "an `instanceTypes` item written as a mapping has no `weight`",
        )
        .help = Some(format!(
            "add `weight: 1` (to {MAX_WEIGHT}), or write the type alone: `- {}`",
            name.value
        ));
        return None;
    }
    Some(TypeSpec { name, weight })
}

/// `instanceRequirements`, checked whole: both ranges are required, as
/// EC2 Auto Scaling requires them. `at` is where its key is written, which
/// locates the section.
pub(super) fn decode_requirements(
    d: &mut Decoder,
    node: &Node,
    at: Span,
) -> Opt<InstanceRequirements> {
    let mut f = d.fields("instanceRequirements", node, REQUIREMENTS_FIELDS)?;
    let p = "instanceRequirements.";
    let arch = f
        .get("architecture")
        .and_then(|n| d.choice("instanceRequirements.architecture", n, ARCHITECTURES));
    let vcpu = f
        .get("vCpuCount")
        .and_then(|n| decode_range(d, &format!("{p}vCpuCount"), n, 1, 4_096));
    // The largest instances have 32 TiB of memory.
    let memory = f
        .get("memoryMiB")
        .and_then(|n| decode_range(d, &format!("{p}memoryMiB"), n, 1, 33_554_432));
    let generations = f.get("instanceGenerations").and_then(|n| {
        let items = d.list("instanceRequirements.instanceGenerations", n);
        let chosen: Vec<String> = items
            .iter()
            .filter_map(|item| {
                d.name_choice(
                    "instanceRequirements.instanceGenerations",
                    item,
                    INSTANCE_GENERATIONS,
                )
            })
            .map(|c| c.value.to_string())
            .collect();
        (chosen.len() == items.len()).then_some(chosen)
    });
    let excluded = f.get("excludedInstanceTypes").and_then(|n| {
        let patterns = d.string_list("instanceRequirements.excludedInstanceTypes", n)?;
        let mut ok = true;
        for pattern in &patterns {
            // EC2's pattern for the entries: 1 to 30 characters of lower
            // case letters, digits, `.`, `-` and the `*` wildcard.
            let valid = (1..=30).contains(&pattern.value.len())
                && pattern.value.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '*')
                });
            if !valid {
                ok = false;
                let message = format!(
                    "`{}` is not an instance type or a wildcard pattern",
                    pattern.value
                );
                d.error(pattern.span, message).help =
                    Some("write a type (`m5.8xlarge`) or a pattern with `*` (`t2.*`, `*6g*`), at most 30 characters".into());
            }
        }
        if patterns.len() > MAX_EXCLUDED {
            ok = false;
            d.error(
                patterns[MAX_EXCLUDED].span,
                format!("more than {MAX_EXCLUDED} excluded instance types"),
            )
            .help = Some("EC2 Auto Scaling accepts at most 400; use wildcard patterns".into());
        }
        ok.then(|| patterns.into_iter().map(|p| p.value).collect::<Vec<_>>())
    });
    let reported = f.finish(d, "`instanceRequirements`");
    for (field, value, example) in [
        (
            "vCpuCount",
            vcpu.is_some(),
            "`vCpuCount: {min: 2, max: 16}`",
        ),
        ("memoryMiB", memory.is_some(), "`memoryMiB: {min: 4096}`"),
    ] {
        if !value && !f.given(field) && !reported.contains(&field) {
            let message = format!("missing field `{field}` in `instanceRequirements`");
            d.error(at, message).help = Some(format!(
                "add {example}: EC2 Auto Scaling requires both the vCPU and the memory range"
            ));
        }
    }
    let generations_ok = !f.given("instanceGenerations") || generations.is_some();
    let excluded_ok = !f.given("excludedInstanceTypes") || excluded.is_some();
    let arch_ok = !f.given("architecture") || arch.is_some();
    match (vcpu, memory) {
        (Some(vcpu), Some(memory)) if generations_ok && excluded_ok && arch_ok => {
            Some(Located::new(
                InstanceRequirements {
                    arch: arch.map_or(Arch::X86_64, |a| a.value),
                    vcpu: vcpu.value,
                    memory_mib: memory.value,
                    generations: generations.unwrap_or_default(),
                    excluded_instance_types: excluded.unwrap_or_default(),
                },
                at,
            ))
        }
        _ => None,
    }
}

fn decode_range(d: &mut Decoder, field: &str, node: &Node, low: i64, high: i64) -> Opt<Range> {
    let mut f = d.fields(field, node, RANGE_FIELDS)?;
    let min = f
        .get("min")
        .and_then(|n| d.integer(&format!("{field}.min"), n, low, high));
    let max = f
        .get("max")
        .and_then(|n| d.integer(&format!("{field}.max"), n, low, high));
    f.finish(d, &format!("`{field}`"));
    let Some(min) = min else {
        if !f.given("min") {
            d.error(node.span, format!("missing field `min` in `{field}`"))
                .help = Some("add `min`; `max` may be left out for no upper bound".into());
        }
        return None;
    };
    if f.given("max") && max.is_none() {
        return None;
    }
    if let Some(max) = &max
        && max.value < min.value
    {
        let message = format!(
            "`{field}.max` ({}) is lower than `{field}.min` ({})",
            max.value, min.value
        );
        d.error(max.span, message);
        return None;
    }
    Some(Located::new(
        Range {
            min: min.value as u32,
            max: max.map(|m| m.value as u32),
        },
        node.span,
    ))
}

/// `capacityReservation`: `open`, `none`, a reservation ID, or
/// `{resourceGroupArn}`.
pub(super) fn decode_capacity_reservation(
    d: &mut Decoder,
    field: &str,
    node: &Node,
) -> Opt<CapacityReservation> {
    if let Value::Map(_) = node.value {
        let mut f = d.fields(field, node, CAPACITY_RESERVATION_FIELDS)?;
        let arn = f
            .get("resourceGroupArn")
            .and_then(|n| d.string(&format!("{field}.resourceGroupArn"), n));
        let reported = f.finish(d, &format!("`{field}`"));
        let arn = match arn {
            Some(arn) => arn,
            None => {
                if !f.given("resourceGroupArn") && reported.is_empty() {
                    d.error(
                        node.span,
                        format!("missing field `resourceGroupArn` in `{field}`"),
                    );
                }
                return None;
            }
        };
        // `arn:<partition>:resource-groups:<region>:<account>:group/<name>`,
        // where the partition, region and account may be pseudo parameters.
        let plain = arn
            .value
            .replace("${AWS::Partition}", "aws")
            .replace("${AWS::Region}", "region")
            .replace("${AWS::AccountId}", "account");
        let parts: Vec<&str> = plain.splitn(6, ':').collect();
        let ok = parts.len() == 6
            && parts[0] == "arn"
            && parts[2] == "resource-groups"
            && parts[5]
                .strip_prefix("group/")
                .is_some_and(|n| !n.is_empty());
        if !ok {
            let message = format!("`{}` is not a resource group ARN", arn.value);
            d.error(arn.span, message).help = Some(
                "resource group ARNs look like `arn:${AWS::Partition}:resource-groups:eu-west-1:123456789012:group/gpu-reservations`".into(),
            );
            return None;
        }
        return Some(Located::new(
            CapacityReservation::ResourceGroup(arn.value),
            node.span,
        ));
    }
    let text = d.string(field, node)?;
    let reservation = match text.value.as_str() {
        "open" => CapacityReservation::Open,
        "none" => CapacityReservation::None,
        id if is_reservation_id(id) => CapacityReservation::Id(id.to_string()),
        other => {
            d.error(text.span, format!("`{field}` cannot be `{other}`")).help = Some(
                "write `open`, `none`, a reservation ID like `cr-0123456789abcdef0`, or `{resourceGroupArn: arn:…}`".into(),
            );
            return None;
        }
    };
    Some(Located::new(reservation, text.span))
}

/// `cr-` and 17 lower case hexadecimal digits.
pub(super) fn is_reservation_id(id: &str) -> bool {
    id.strip_prefix("cr-").is_some_and(|hex| {
        hex.len() == 17
            && hex
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    })
}

/// `efa`: `true`/`false`, or `{interfaces}`, which turns EFA on; the
/// second value is whether the secondary cards' interfaces are EFA-only.
pub(super) fn decode_efa(d: &mut Decoder, node: &Node) -> (Opt<bool>, Opt<bool>) {
    if !matches!(node.value, Value::Map(_)) {
        return (d.boolean("efa", node), None);
    }
    let Some(mut f) = d.fields("efa", node, EFA_FIELDS) else {
        return (None, None);
    };
    let efa_only = f
        .get("interfaces")
        .and_then(|n| d.choice("efa.interfaces", n, EFA_INTERFACES));
    f.finish(d, "`efa`");
    (Some(Located::new(true, node.span)), efa_only)
}

/// EC2 placement group names: 1 to 255 ASCII characters.
pub(super) fn check_placement_group_name(d: &mut Decoder, name: &Located<String>) -> bool {
    let ok = (1..=255).contains(&name.value.len()) && name.value.is_ascii();
    if !ok {
        d.error(
            name.span,
            format!("`{}` is not a placement group name", name.value),
        )
        .help = Some("placement group names are 1 to 255 ASCII characters".into());
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_efa_list_is_sorted_instance_types() {
        let lines: Vec<&str> = EFA_INSTANCE_TYPES.lines().collect();
        assert!(lines.len() > 100, "{} EFA instance types", lines.len());
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        for line in &lines {
            assert!(
                crate::blueprint::instances::instance_info(line).is_some(),
                "{line}"
            );
        }
        assert!(supports_efa("p5.48xlarge"));
        assert!(supports_efa("c6in.32xlarge"));
        assert!(!supports_efa("m6i.large"));
        assert!(!supports_efa("p5.48"));
    }

    #[test]
    fn weighted_capacity_becomes_the_fewest_instances_that_make_it() {
        use crate::blueprint::instance_count;
        assert_eq!(instance_count(4, &[]), 4);
        assert_eq!(instance_count(4, &[1, 2, 2]), 2);
        assert_eq!(instance_count(5, &[1, 2]), 3);
        assert_eq!(instance_count(0, &[4]), 0);
    }
}
