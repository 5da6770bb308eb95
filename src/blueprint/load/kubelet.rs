//! A node group's `kubelet` settings: any `KubeletConfiguration` field.
//! The ten fields eksynth has always typed keep their own rules (ranges,
//! the GC thresholds' order); every other field is checked against the
//! kubelet's own types (`upstream::kubelet_config`), each problem located at its
//! key or value.

use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty, declares, range};
use crate::syntax::{Node, Value};
use crate::upstream::kubelet_config::{self, ProblemKind};

use super::raw::{locate, to_json};

/// Fields eksynth writes itself, with the blueprint field that sets them.
pub(in crate::blueprint) const GENERATED: &[(&str, &str)] = &[
    ("maxPods", "set the group's `maxPods` instead"),
    (
        "clusterDNS",
        "set the group's `clusterDNS` instead (by default eksynth derives it from the service CIDR)",
    ),
];

/// The fields with rules of their own (the JSON Schema lists them with
/// those rules); every other `KubeletConfiguration` field is accepted too.
pub(in crate::blueprint) const KUBELET_FIELDS: &[Field] = &[
    Field::new(
        "imageGCHighThresholdPercent",
        Ty::integer(0, 100),
        "Percent",
    ),
    Field::new("imageGCLowThresholdPercent", Ty::integer(0, 100), "Percent"),
    Field::new("evictionHard", Ty::StringMap, "Kubelet resource map"),
    Field::new("kubeReserved", Ty::StringMap, "Kubelet resource map"),
    Field::new("systemReserved", Ty::StringMap, "Kubelet resource map"),
    Field::new("podPidsLimit", Ty::integer(-1, 4_194_304), "PIDs per pod"),
    Field::new(
        "cpuManagerPolicy",
        Ty::OneOf(|| cpu_manager_policies().to_vec()),
        "",
    )
    .long("the kubelet's CPU manager policy"),
    Field::new("containerLogMaxSize", Ty::STRING, "e.g. 10Mi"),
    Field::new("containerLogMaxFiles", Ty::integer(2, 1000), "Files"),
    Field::new(
        "serializeImagePulls",
        Ty::Boolean,
        "Pull one image at a time",
    ),
];

/// The CPU manager's policies, as the kubelet knows them.
fn cpu_manager_policies() -> &'static [&'static str] {
    kubelet_config::allowed_values("cpuManagerPolicy").unwrap_or_default()
}

pub(super) fn decode_kubelet(
    d: &mut Decoder,
    node: &Node,
) -> Vec<(Located<String>, serde_json::Value)> {
    let Value::Map(entries) = &node.value else {
        d.wrong_type("kubelet", node, "a mapping");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in entries {
        // `field:` with no value means "not set", as everywhere else.
        if matches!(value.value, Value::Null) {
            continue;
        }
        let field = key.name.as_str();
        let path = format!("kubelet.{field}");
        if !declares(KUBELET_FIELDS, field) {
            if let Some(json) = decode_other(d, key, value) {
                out.push((Located::new(field.to_string(), key.span), json));
            }
            continue;
        }
        let json = match field {
            "imageGCHighThresholdPercent"
            | "imageGCLowThresholdPercent"
            | "podPidsLimit"
            | "containerLogMaxFiles" => {
                let (min, max) = range(KUBELET_FIELDS, field);
                d.integer(&path, value, min, max).map(|v| v.value.into())
            }
            "serializeImagePulls" => d.boolean(&path, value).map(|v| v.value.into()),
            "cpuManagerPolicy" => d
                .name_choice(&path, value, cpu_manager_policies())
                .map(|v| v.value.into()),
            "containerLogMaxSize" => d.string(&path, value).map(|v| v.value.into()),
            _ => {
                let pairs = d.string_map(&path, value);
                Some(serde_json::Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.value, v.value.into()))
                        .collect(),
                ))
            }
        };
        if let Some(json) = json {
            out.push((Located::new(field.to_string(), value.span), json));
        }
    }
    let percent = |name: &str| {
        out.iter()
            .find(|(k, _)| k.value == name)
            .and_then(|(k, v)| Some((k.span, v.as_i64()?)))
    };
    if let (Some((_, high)), Some((span, low))) = (
        percent("imageGCHighThresholdPercent"),
        percent("imageGCLowThresholdPercent"),
    ) && low >= high
    {
        let message = format!(
            "`kubelet.imageGCLowThresholdPercent` ({low}) must be lower than `imageGCHighThresholdPercent` ({high})"
        );
        d.error(span, message);
    }
    out
}

/// Each setting of a `kubelet` section with its value as written, so that
/// a rule between fields, checked once `defaults` is merged in, can point
/// into the value that is wrong.
pub(super) fn kubelet_nodes(node: &Node) -> Vec<(Located<String>, Node)> {
    let Value::Map(entries) = &node.value else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|(_, value)| !matches!(value.value, Value::Null))
        .map(|(key, value)| (Located::new(key.name.clone(), key.span), value.clone()))
        .collect()
}

/// The rules between fields (`upstream::kubelet_config::check_together`)
/// over a group's `kubelet` settings with `defaults` merged in, each
/// problem at the key that is wrong; fields that did not decode were
/// reported already and are left out.
pub(super) fn check_kubelet_together(
    d: &mut Decoder,
    decoded: &[(Located<String>, serde_json::Value)],
    nodes: &[(Located<String>, Node)],
) {
    let config: serde_json::Map<String, serde_json::Value> = decoded
        .iter()
        .map(|(key, value)| (key.value.clone(), value.clone()))
        .collect();
    for problem in kubelet_config::check_together(&config) {
        let Some(kubelet_config::Segment::Key(field)) = problem.path.first() else {
            continue;
        };
        let Some((_, value)) = nodes.iter().find(|(key, _)| &key.value == field) else {
            continue;
        };
        let span = locate(value, &problem.path[1..], true);
        let message = format!("`kubelet.{}`: {}", problem.path_text(), problem.message());
        d.error(span, message).help = problem.help();
    }
}

/// A field without rules of its own: known to the kubelet, not one eksynth
/// writes, and of the kubelet's type. Numbers written for strings
/// (`cpu: 1`) are taken as the strings they stand for.
fn decode_other(
    d: &mut Decoder,
    key: &crate::syntax::Key,
    value: &Node,
) -> Option<serde_json::Value> {
    let name = key.name.as_str();
    if let Some((_, help)) = GENERATED.iter().find(|(g, _)| *g == name) {
        d.error(key.span, format!("`kubelet.{name}` is written by eksynth"))
            .help = Some((*help).to_string());
        return None;
    }
    let mut json = to_json(d, &format!("kubelet.{name}"), value)?;
    kubelet_config::normalize(name, &mut json);
    let problems = kubelet_config::check(name, &json);
    for problem in &problems {
        // The path starts with the field's name; the value node is below it.
        let inner = &problem.path[1..];
        let unknown = matches!(problem.kind, ProblemKind::UnknownField { .. });
        let span = if problem.path.len() == 1 && unknown {
            key.span
        } else {
            locate(value, inner, unknown)
        };
        let message = match problem.kind {
            ProblemKind::UnknownField { .. } => format!(
                "unknown field `{}` in `kubelet` (KubeletConfiguration v1beta1)",
                problem.path_text()
            ),
            _ => format!("`kubelet.{}`: {}", problem.path_text(), problem.message()),
        };
        let diagnostic = d.error(span, message);
        diagnostic.help = problem.help();
    }
    problems.is_empty().then_some(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields with rules of their own, and those eksynth writes, are
    /// fields of the kubelet's own `KubeletConfiguration`.
    #[test]
    fn every_typed_and_generated_field_is_a_kubelet_field() {
        let generated = GENERATED.iter().map(|(name, _)| *name);
        for name in KUBELET_FIELDS
            .iter()
            .map(|field| field.name)
            .chain(generated)
        {
            assert!(kubelet_config::field(name).is_some(), "{name}");
        }
    }
}
