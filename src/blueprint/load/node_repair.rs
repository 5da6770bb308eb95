//! A managed group's `nodeRepair`: EKS node auto repair, its thresholds and
//! its per-condition overrides, as `AWS::EKS::Nodegroup` `NodeRepairConfig`
//! takes them.

use super::read::{Opt, opt_bool, opt_string, opt_u32};
use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, choices};
use crate::blueprint::*;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const NODE_REPAIR_FIELDS: &[Field] = &[
    Field::new(
        "enabled",
        Ty::Boolean,
        "Node auto repair (true once the section is written)",
    )
    .default("`true`"),
    Field::new(
        "maxUnhealthyNodeThresholdCount",
        Ty::integer(1, MAX_NODES),
        "Unhealthy nodes above which repair stops",
    ),
    Field::new(
        "maxUnhealthyNodeThresholdPercentage",
        Ty::integer(1, 100),
        "Percent of unhealthy nodes above which repair stops",
    ),
    Field::new(
        "maxParallelNodesRepairedCount",
        Ty::integer(1, MAX_NODES),
        "Nodes repaired at once",
    ),
    Field::new(
        "maxParallelNodesRepairedPercentage",
        Ty::integer(1, 100),
        "Percent of unhealthy nodes repaired at once",
    ),
    Field::new(
        "overrides",
        Ty::list(&Ty::Object("repairOverride")),
        "Repair actions per condition and reason",
    ),
];
pub(in crate::blueprint) const REPAIR_OVERRIDE_FIELDS: &[Field] = &[
    Field::new(
        "nodeMonitoringCondition",
        Ty::STRING,
        "A condition the node monitoring agent reports, e.g. \
        AcceleratedHardwareReady",
    ),
    Field::new(
        "nodeUnhealthyReason",
        Ty::STRING,
        "A reason the node monitoring agent reports, e.g. NvidiaXID31Error",
    ),
    Field::new(
        "minRepairWaitTimeMins",
        Ty::integer(1, MAX_WAIT_MINUTES),
        "Minutes before a node is repaired",
    ),
    Field::new("repairAction", Ty::OneOf(|| choices(REPAIR_ACTIONS)), "")
        .long("what EKS does with such a node"),
];
pub(in crate::blueprint) const REPAIR_ACTIONS: &[(&str, RepairAction)] = &[
    ("Replace", RepairAction::Replace),
    ("Reboot", RepairAction::Reboot),
    ("NoAction", RepairAction::NoAction),
];

/// The largest count a threshold takes: a node group's `maxSize` limit.
const MAX_NODES: i64 = 10_000;
/// The longest wait an override takes, in minutes: one week.
const MAX_WAIT_MINUTES: i64 = 10_080;

/// `nodeRepair`: `enabled` defaults to true once the section is written.
pub(super) fn decode_node_repair(d: &mut Decoder, node: &Node) -> Opt<NodeRepair> {
    let mut f = d.fields("nodeRepair", node, NODE_REPAIR_FIELDS)?;
    let enabled = opt_bool(d, &mut f, "nodeRepair.", "enabled");
    let max_unhealthy = amount(
        d,
        &mut f,
        "maxUnhealthyNodeThresholdCount",
        "maxUnhealthyNodeThresholdPercentage",
    );
    let max_parallel = amount(
        d,
        &mut f,
        "maxParallelNodesRepairedCount",
        "maxParallelNodesRepairedPercentage",
    );
    let overrides = f.get("overrides").map(|n| {
        let overrides: Vec<RepairOverride> = d
            .list("nodeRepair.overrides", n)
            .iter()
            .filter_map(|o| decode_override(d, o))
            .collect();
        Located::new(overrides, n.span)
    });
    f.finish(d, "`nodeRepair`");
    let enabled_value = enabled.as_ref().is_none_or(|e| e.value);
    if let Some(enabled) = enabled.as_ref().filter(|_| !enabled_value) {
        let settings = [
            max_unhealthy.as_ref().map(|a| a.span),
            max_parallel.as_ref().map(|a| a.span),
            overrides
                .as_ref()
                .filter(|o| !o.value.is_empty())
                .map(|o| o.span),
        ];
        if let Some(at) = settings.into_iter().flatten().next() {
            d.error(
                at,
                "node repair settings are given but `nodeRepair.enabled` is false",
            )
            .help = Some(format!(
                "remove them, or set `enabled: true` (line {})",
                enabled.span.line
            ));
        }
    }
    Some(Located::new(
        NodeRepair {
            enabled: enabled_value,
            max_unhealthy: max_unhealthy.map(|a| a.value),
            max_parallel: max_parallel.map(|a| a.value),
            overrides: overrides.map(|o| o.value).unwrap_or_default(),
        },
        node.span,
    ))
}

/// A count or a percentage, never both (EKS refuses the pair).
fn amount(
    d: &mut Decoder,
    f: &mut crate::blueprint::decode::Fields<'_>,
    count_field: &str,
    percentage_field: &str,
) -> Opt<Amount> {
    let count = opt_u32(d, f, "nodeRepair.", count_field);
    let percentage = opt_u32(d, f, "nodeRepair.", percentage_field);
    match (count, percentage) {
        (Some(count), None) => Some(Located::new(Amount::Count(count.value), count.span)),
        (None, Some(pct)) => Some(Located::new(Amount::Percentage(pct.value), pct.span)),
        (Some(_), Some(pct)) => {
            d.error(
                pct.span,
                format!("`nodeRepair` sets both `{count_field}` and `{percentage_field}`"),
            )
            .help = Some("keep one of them".into());
            None
        }
        (None, None) => None,
    }
}

fn decode_override(d: &mut Decoder, node: &Node) -> Option<RepairOverride> {
    if !matches!(node.value, Value::Map(_)) {
        d.wrong_type("nodeRepair.overrides", node, "a mapping").help = Some(
            "write `{nodeMonitoringCondition: AcceleratedHardwareReady, nodeUnhealthyReason: NvidiaXID31Error, minRepairWaitTimeMins: 10, repairAction: Reboot}`"
                .into(),
        );
        return None;
    }
    let mut f = d.fields("nodeRepair.overrides", node, REPAIR_OVERRIDE_FIELDS)?;
    let prefix = "nodeRepair.overrides.";
    let condition = opt_string(d, &mut f, prefix, "nodeMonitoringCondition");
    let reason = opt_string(d, &mut f, prefix, "nodeUnhealthyReason");
    let wait = opt_u32(d, &mut f, prefix, "minRepairWaitTimeMins");
    let action = f
        .get("repairAction")
        .and_then(|n| d.choice("nodeRepair.overrides.repairAction", n, REPAIR_ACTIONS));
    // EKS takes an override only with all four values.
    let missing: Vec<&str> = REPAIR_OVERRIDE_FIELDS
        .iter()
        .map(|field| field.name)
        .filter(|field| !f.given(field))
        .collect();
    f.finish(d, "a `nodeRepair` override");
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
        d.error(
            node.span,
            format!("a `nodeRepair` override needs {}", names.join(", ")),
        )
        .help = Some("EKS takes an override only with all four of its values".into());
        return None;
    }
    let non_empty = |d: &mut Decoder, value: Located<String>, field: &str| {
        if value.value.is_empty() {
            d.error(value.span, format!("`{prefix}{field}` is empty"));
            return None;
        }
        Some(value.value)
    };
    let condition = non_empty(d, condition?, "nodeMonitoringCondition");
    let reason = non_empty(d, reason?, "nodeUnhealthyReason");
    Some(RepairOverride {
        condition: condition?,
        reason: reason?,
        min_wait_minutes: wait?.value,
        action: action?.value,
    })
}
