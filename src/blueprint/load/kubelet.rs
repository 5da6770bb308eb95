//! A node group's `kubelet` settings.

use crate::blueprint::decode::{Decoder, Located};
use crate::syntax::Node;

pub(in crate::blueprint) const KUBELET_FIELDS: &[&str] = &[
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "evictionHard",
    "kubeReserved",
    "systemReserved",
    "podPidsLimit",
    "cpuManagerPolicy",
    "containerLogMaxSize",
    "containerLogMaxFiles",
    "serializeImagePulls",
];

pub(in crate::blueprint) const CPU_MANAGER_POLICIES: &[&str] = &["none", "static"];

pub(super) fn decode_kubelet(
    d: &mut Decoder,
    node: &Node,
) -> Vec<(Located<String>, serde_json::Value)> {
    let Some(mut f) = d.fields("kubelet", node, KUBELET_FIELDS) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for field in KUBELET_FIELDS {
        let Some(value) = f.get(field) else { continue };
        let path = format!("kubelet.{field}");
        let json = match *field {
            "imageGCHighThresholdPercent" | "imageGCLowThresholdPercent" => {
                d.integer(&path, value, 0, 100).map(|v| v.value.into())
            }
            "podPidsLimit" => d
                .integer(&path, value, -1, 4_194_304)
                .map(|v| v.value.into()),
            "containerLogMaxFiles" => d.integer(&path, value, 2, 1000).map(|v| v.value.into()),
            "serializeImagePulls" => d.boolean(&path, value).map(|v| v.value.into()),
            "cpuManagerPolicy" => d
                .name_choice(&path, value, CPU_MANAGER_POLICIES)
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
    f.finish(d, "`kubelet`");
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
