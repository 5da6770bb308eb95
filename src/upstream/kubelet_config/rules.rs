//! What the kubelet refuses at start beyond its configuration's types: the
//! values of its enumerated string fields, the signal names of its
//! eviction maps, and the soft eviction thresholds that need a grace
//! period. A configuration the types accept but these refuse leaves a node
//! whose kubelet exits at boot and never joins.
//!
//! Sources: kubelet's own validation (`kubernetes/kubernetes`,
//! `pkg/kubelet/apis/config/validation/validation.go`: the topology
//! manager's policy and scope, `hairpinMode`), the managers that read the
//! other policies at start (`pkg/kubelet/cm/cpumanager` and
//! `pkg/kubelet/cm/memorymanager`), the eviction signals
//! (`pkg/kubelet/eviction/api/types.go`) and the soft thresholds' grace
//! periods (`pkg/kubelet/eviction/helpers.go`, `ParseThresholdConfig`);
//! and Karpenter's kubelet validation, which pairs `evictionSoft` with
//! `evictionSoftGracePeriod` both ways (`aws/karpenter-provider-aws`,
//! `pkg/apis/v1/ec2nodeclass.go` and `kubeletconfiguration_validation.go`).

use serde_json::{Map, Value};

use super::{Problem, ProblemKind, Segment};

/// String fields that take one of a few values, and those values.
const ENUMERATED: &[(&str, &[&str])] = &[
    ("cpuManagerPolicy", &["none", "static"]),
    ("memoryManagerPolicy", &["None", "Static"]),
    (
        "topologyManagerPolicy",
        &["none", "best-effort", "restricted", "single-numa-node"],
    ),
    ("topologyManagerScope", &["container", "pod"]),
    (
        "hairpinMode",
        &["promiscuous-bridge", "hairpin-veth", "none"],
    ),
    ("cgroupDriver", &["cgroupfs", "systemd"]),
];

/// The signals an eviction threshold may name.
const EVICTION_SIGNALS: &[&str] = &[
    "memory.available",
    "allocatableMemory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "containerfs.available",
    "containerfs.inodesFree",
    "pid.available",
];

/// The maps keyed by eviction signal.
const EVICTION_MAPS: &[&str] = &[
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMinimumReclaim",
];

/// The values an enumerated field takes, if `name` is one.
pub fn allowed_values(name: &str) -> Option<&'static [&'static str]> {
    ENUMERATED
        .iter()
        .find(|(field, _)| *field == name)
        .map(|(_, values)| *values)
}

/// One field's value against the field's own rule: an enumerated field's
/// string must be one of its values. Other values pass.
pub(super) fn check_value(name: &str, value: &Value, out: &mut Vec<Problem>) {
    let (Some(allowed), Some(text)) = (allowed_values(name), value.as_str()) else {
        return;
    };
    if !allowed.contains(&text) {
        out.push(Problem::new(
            &[Segment::Key(name.to_string())],
            ProblemKind::NotAllowed {
                value: text.to_string(),
                allowed: allowed.iter().map(|a| a.to_string()).collect(),
            },
        ));
    }
}

/// The rules between fields, over a whole configuration: each eviction
/// map names known signals, and each soft threshold has a grace period
/// and each grace period a soft threshold. Problems are at the key.
pub fn check_together(config: &Map<String, Value>) -> Vec<Problem> {
    let mut out = Vec::new();
    let keys = |name: &str| -> Vec<&String> {
        config
            .get(name)
            .and_then(Value::as_object)
            .map(|map| map.keys().collect())
            .unwrap_or_default()
    };
    for map in EVICTION_MAPS {
        for signal in keys(map) {
            if !EVICTION_SIGNALS.contains(&signal.as_str()) {
                out.push(Problem::new(
                    &[Segment::Key(map.to_string()), Segment::Key(signal.clone())],
                    ProblemKind::NotAllowed {
                        value: signal.clone(),
                        allowed: EVICTION_SIGNALS.iter().map(|s| s.to_string()).collect(),
                    },
                ));
            }
        }
    }
    let soft = keys("evictionSoft");
    let grace = keys("evictionSoftGracePeriod");
    unpaired(
        &soft,
        &grace,
        "evictionSoft",
        "evictionSoftGracePeriod",
        &mut out,
    );
    unpaired(
        &grace,
        &soft,
        "evictionSoftGracePeriod",
        "evictionSoft",
        &mut out,
    );
    out
}

/// A problem for each key of `these` that `those` lacks.
fn unpaired(
    these: &[&String],
    those: &[&String],
    field: &str,
    other: &str,
    out: &mut Vec<Problem>,
) {
    for key in these.iter().filter(|key| !those.contains(key)) {
        out.push(Problem::new(
            &[
                Segment::Key(field.to_string()),
                Segment::Key(key.to_string()),
            ],
            ProblemKind::Unpaired {
                other: other.to_string(),
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn together(config: Value) -> Vec<String> {
        let Value::Object(map) = config else {
            unreachable!("a test passes an object")
        };
        check_together(&map).iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn soft_thresholds_and_grace_periods_come_in_pairs() {
        assert_eq!(
            together(json!({
                "evictionSoft": {"memory.available": "500Mi", "nodefs.available": "15%"},
                "evictionSoftGracePeriod": {"memory.available": "1m", "pid.available": "30s"}
            })),
            [
                "`evictionSoft.nodefs.available`: has no matching `evictionSoftGracePeriod` entry",
                "`evictionSoftGracePeriod.pid.available`: has no matching `evictionSoft` entry",
            ]
        );
        assert!(
            together(json!({
                "evictionSoft": {"memory.available": "500Mi"},
                "evictionSoftGracePeriod": {"memory.available": "1m"}
            }))
            .is_empty()
        );
    }

    #[test]
    fn eviction_maps_name_the_kubelets_signals() {
        assert_eq!(
            together(json!({"evictionHard": {"memory.availble": "100Mi"}})).len(),
            1
        );
        assert!(together(json!({"evictionHard": {"pid.available": "10%"}})).is_empty());
    }

    #[test]
    fn enumerated_fields_take_only_their_values() {
        let mut out = Vec::new();
        check_value("topologyManagerPolicy", &json!("single-numa"), &mut out);
        check_value("topologyManagerScope", &json!("pod"), &mut out);
        check_value("memoryManagerPolicy", &json!("static"), &mut out);
        let texts: Vec<String> = out.iter().map(|p| p.to_string()).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with("`topologyManagerPolicy`: `single-numa` is not one of"));
        assert!(texts[1].starts_with("`memoryManagerPolicy`: `static` is not one of"));
    }
}
