//! nodeadm's `NodeConfig` (`node.eks.aws/v1alpha1`), the configuration
//! AL2023 nodes read from their user data: the check of a `spec` fragment
//! against nodeadm's API, and its merge into the `spec` eksynth generates.
//!
//! The API is nodeadm's CRD schema, vendored in `data/nodeadm/` (see its
//! README) and embedded at build time. It is read as draft 7 with two
//! changes. Values nodeadm keeps as raw JSON
//! (`x-kubernetes-preserve-unknown-fields`: `kubelet.config`,
//! `containerd.baseRuntimeSpec`) take any value; `kubelet.config` is then
//! checked field by field against the kubelet's own types. Objects that
//! list their properties take no others: nodeadm silently drops an unknown
//! field, so a misspelt one would be a setting that never applies.

use std::sync::LazyLock;

use jsonschema::Validator;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use super::kubelet_config::{self, Segment, display_path};
use crate::suggest;

const SCHEMA_JSON: &str = include_str!("../../data/nodeadm/nodeconfig.schema.json");
const FEATURE_GATES_JSON: &str = include_str!("../../data/nodeadm/feature-gates.json");

/// The schema of `spec`, prepared as the module documentation says.
static SPEC_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let crd: Value =
        serde_json::from_str(SCHEMA_JSON).expect("the embedded NodeConfig schema is JSON");
    let mut spec = crd["properties"]["spec"].clone();
    prepare(&mut spec);
    spec
});

static VALIDATOR: LazyLock<Validator> = LazyLock::new(|| {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .offline()
        .should_validate_formats(false)
        .build(&SPEC_SCHEMA)
        .expect("the embedded NodeConfig schema compiles")
});

static FEATURE_GATES: LazyLock<Vec<String>> = LazyLock::new(|| {
    serde_json::from_str(FEATURE_GATES_JSON).expect("the embedded feature gate list is valid")
});

/// The JSON Schema of a `NodeConfig` `spec` (for the blueprint's schema).
pub fn spec_schema() -> &'static Value {
    &SPEC_SCHEMA
}

/// The feature gates nodeadm declares.
pub fn feature_gates() -> Vec<&'static str> {
    FEATURE_GATES.iter().map(String::as_str).collect()
}

fn prepare(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        *schema = Value::Object(Map::new());
        return;
    }
    if map.contains_key("properties") && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(prepare);
    }
    for key in ["additionalProperties", "items"] {
        if let Some(inner) = map.get_mut(key) {
            prepare(inner);
        }
    }
}

/// One thing wrong with a `spec` fragment, at the path of the value (from
/// `spec`: `kubelet.flags[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: Vec<Segment>,
    pub message: String,
    pub help: Option<String>,
}

impl Problem {
    /// The path as written in messages.
    pub fn path_text(&self) -> String {
        display_path(&self.path)
    }
}

/// Checks a `spec` fragment: nodeadm's API, the kubelet's types in
/// `kubelet.config`, and the names in `featureGates`. One problem per
/// mistake, in a fixed order.
pub fn check(spec: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    for error in VALIDATOR.iter_errors(spec) {
        let text = error.to_string();
        let parts = error.into_parts();
        let path = segments(spec, parts.instance_path.as_str());
        match parts.kind {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let known = property_names(&path);
                for name in unexpected {
                    let mut at = path.clone();
                    at.push(Segment::Key(name.clone()));
                    out.push(Problem {
                        path: at,
                        message: "unknown field".to_string(),
                        help: Some(suggest::did_you_mean_or_list(
                            &name,
                            &known,
                            "the fields here are",
                        )),
                    });
                }
            }
            ValidationErrorKind::Type { kind } => {
                let expected = match kind {
                    TypeKind::Single(t) => article(&t.to_string()),
                    TypeKind::Multiple(_) => text,
                };
                out.push(Problem {
                    path,
                    message: format!(
                        "expected {expected}, found {}",
                        kubelet_config::found(&parts.instance)
                    ),
                    help: None,
                });
            }
            ValidationErrorKind::Enum { options } => {
                let allowed: Vec<&str> = options
                    .as_array()
                    .map(|o| o.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let value = parts
                    .instance
                    .as_str()
                    .map_or_else(|| parts.instance.to_string(), str::to_string);
                out.push(Problem {
                    path,
                    message: format!("`{value}` is not one of {}", suggest::listed(&allowed)),
                    help: suggest::closest(&value, &allowed)
                        .map(|b| format!("did you mean `{b}`?")),
                });
            }
            _ => out.push(Problem {
                path,
                message: text,
                help: None,
            }),
        }
    }
    if let Some(Value::Object(config)) = spec.get("kubelet").and_then(|k| k.get("config")) {
        for problem in kubelet_config::check_config(config) {
            let mut path = vec![
                Segment::Key("kubelet".into()),
                Segment::Key("config".into()),
            ];
            path.extend(problem.path.iter().cloned());
            out.push(Problem {
                path,
                message: problem.message(),
                help: problem.help(),
            });
        }
    }
    if let Some(Value::Object(gates)) = spec.get("featureGates") {
        let known = feature_gates();
        for name in gates.keys().filter(|name| !known.contains(&name.as_str())) {
            out.push(Problem {
                path: vec![
                    Segment::Key("featureGates".into()),
                    Segment::Key(name.clone()),
                ],
                message: "unknown nodeadm feature gate".to_string(),
                help: Some(suggest::did_you_mean_or_list(
                    name,
                    &known,
                    "nodeadm's feature gates are",
                )),
            });
        }
    }
    out
}

/// A JSON pointer into `value` as segments: a number indexes a list.
fn segments(value: &Value, pointer: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut node = Some(value);
    for raw in pointer.split('/').skip(1) {
        let key = raw.replace("~1", "/").replace("~0", "~");
        let index = match node {
            Some(Value::Array(_)) => key.parse::<usize>().ok(),
            _ => None,
        };
        match index {
            Some(i) => {
                node = node.and_then(|n| n.get(i));
                out.push(Segment::Index(i));
            }
            None => {
                node = node.and_then(|n| n.get(&key));
                out.push(Segment::Key(key));
            }
        }
    }
    out
}

/// The property names the schema lists at `path` (for "did you mean").
fn property_names(path: &[Segment]) -> Vec<&'static str> {
    let mut node: &'static Value = &SPEC_SCHEMA;
    for segment in path {
        let next = match segment {
            Segment::Key(key) => node
                .get("properties")
                .and_then(|p| p.get(key))
                .or_else(|| node.get("additionalProperties")),
            Segment::Index(_) => node.get("items"),
        };
        match next {
            Some(next) => node = next,
            None => return Vec::new(),
        }
    }
    node.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn article(kind: &str) -> String {
    match kind {
        "object" => "a mapping".to_string(),
        "array" => "a list".to_string(),
        "boolean" => "true or false".to_string(),
        "integer" => "an integer".to_string(),
        other => format!("a {other}"),
    }
}

// ------------------------------------------------------------------ merging

/// A value the user's fragment gives at a path where the generated `spec`
/// has another. The generated one is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub path: Vec<Segment>,
    pub generated: Value,
    pub user: Value,
}

impl Conflict {
    /// The path as written in messages.
    pub fn path_text(&self) -> String {
        display_path(&self.path)
    }
}

/// Merges a user's `spec` fragment into the generated one. Mappings merge
/// key by key; lists are joined, the generated items first and the user's
/// after them (as nodeadm appends `kubelet.flags`), an item already there
/// once; anything else the user gives where the generated `spec` has a
/// different value is a conflict, and the generated value stays.
pub fn merge(generated: &Value, user: &Value) -> (Value, Vec<Conflict>) {
    let mut conflicts = Vec::new();
    let merged = merge_at(generated, user, &mut Vec::new(), &mut conflicts);
    (merged, conflicts)
}

fn merge_at(
    generated: &Value,
    user: &Value,
    path: &mut Vec<Segment>,
    conflicts: &mut Vec<Conflict>,
) -> Value {
    match (generated, user) {
        (Value::Object(g), Value::Object(u)) => {
            let mut out = g.clone();
            for (key, value) in u {
                let merged = match g.get(key) {
                    Some(existing) => {
                        path.push(Segment::Key(key.clone()));
                        let merged = merge_at(existing, value, path, conflicts);
                        path.pop();
                        merged
                    }
                    None => value.clone(),
                };
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(g), Value::Array(u)) => {
            let mut out = g.clone();
            for item in u {
                if !out.contains(item) {
                    out.push(item.clone());
                }
            }
            Value::Array(out)
        }
        (g, u) if g == u => g.clone(),
        (g, u) => {
            conflicts.push(Conflict {
                path: path.clone(),
                generated: g.clone(),
                user: u.clone(),
            });
            g.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(spec: Value) -> Vec<(String, String, Option<String>)> {
        check(&spec)
            .into_iter()
            .map(|p| (p.path_text(), p.message, p.help))
            .collect()
    }

    #[test]
    fn accepts_what_nodeadm_accepts() {
        let spec = json!({
            "cluster": {"enableOutpost": true, "id": "abc"},
            "containerd": {
                "config": "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\ndiscard_unpacked_layers = false\n",
                "baseRuntimeSpec": {"process": {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]}}
            },
            "instance": {
                "localStorage": {"strategy": "RAID0", "mountPath": "/mnt/k8s-disks", "disabledMounts": ["PodLogs"]},
                "environment": {"default": {"HTTP_PROXY": "http://proxy:3128"}},
                "network": {"nameservers": ["10.0.0.2"], "domains": ["example.internal"]}
            },
            "kubelet": {
                "config": {"maxPods": 58, "evictionHard": {"memory.available": "100Mi"}},
                "flags": ["--node-labels=team=a"],
                "maxPodsExpression": "default_enis * (ips_per_eni - 1) + 2"
            },
            "featureGates": {"InstanceIdNodeName": true, "FastImagePull": false}
        });
        assert_eq!(problems(spec), Vec::new());
    }

    #[test]
    fn rejects_a_wrong_type_at_its_path() {
        assert_eq!(
            problems(json!({"kubelet": {"flags": "--v=2"}})),
            vec![(
                "kubelet.flags".into(),
                "expected a list, found a string".into(),
                None
            )]
        );
        assert_eq!(
            problems(json!({"kubelet": {"flags": ["--v=2", 3]}})),
            vec![(
                "kubelet.flags[1]".into(),
                "expected a string, found an integer".into(),
                None
            )]
        );
        assert_eq!(
            problems(json!({"featureGates": {"FastImagePull": "true"}})),
            vec![(
                "featureGates.FastImagePull".into(),
                "expected true or false, found a string".into(),
                None
            )]
        );
        assert_eq!(
            problems(json!({"containerd": {"config": {"version": 2}}})),
            vec![(
                "containerd.config".into(),
                "expected a string, found a mapping".into(),
                None
            )]
        );
    }

    #[test]
    fn rejects_an_unknown_enum_value() {
        assert_eq!(
            problems(json!({"instance": {"localStorage": {"strategy": "RAID5"}}})),
            vec![(
                "instance.localStorage.strategy".into(),
                "`RAID5` is not one of `RAID0`, `RAID10`, `Mount`".into(),
                Some("did you mean `RAID0`?".into())
            )]
        );
    }

    #[test]
    fn an_unknown_field_is_located_with_a_suggestion() {
        assert_eq!(
            problems(json!({"instance": {"localStorage": {"stratgy": "RAID0"}}})),
            vec![(
                "instance.localStorage.stratgy".into(),
                "unknown field".into(),
                Some("did you mean `strategy`?".into())
            )]
        );
        assert_eq!(
            problems(json!({"kubelt": {}})),
            vec![(
                "kubelt".into(),
                "unknown field".into(),
                Some("did you mean `kubelet`?".into())
            )]
        );
    }

    #[test]
    fn kubelet_config_is_checked_against_the_kubelet_types() {
        assert_eq!(
            problems(json!({"kubelet": {"config": {"maxPods": "58", "evictonHard": {}}}})),
            vec![
                (
                    "kubelet.config.maxPods".into(),
                    "expected an integer, found a string".into(),
                    None
                ),
                (
                    "kubelet.config.evictonHard".into(),
                    "unknown field".into(),
                    Some("did you mean `evictionHard`?".into())
                ),
            ]
        );
    }

    #[test]
    fn an_unknown_feature_gate_is_an_error() {
        assert_eq!(
            problems(json!({"featureGates": {"FastImagePul": true}})),
            vec![(
                "featureGates.FastImagePul".into(),
                "unknown nodeadm feature gate".into(),
                Some("did you mean `FastImagePull`?".into())
            )]
        );
    }

    #[test]
    fn merge_keeps_the_generated_values_and_reports_conflicts() {
        let generated = json!({
            "cluster": {"name": "prod", "apiServerEndpoint": "https://x", "cidr": "10.100.0.0/16"},
            "kubelet": {"config": {"maxPods": 110}, "flags": ["--node-labels=a=b"]}
        });
        let user = json!({
            "cluster": {"name": "prod", "cidr": "172.20.0.0/16", "enableOutpost": true},
            "kubelet": {
                "config": {"maxPods": 58, "podPidsLimit": 4096},
                "flags": ["--node-labels=a=b", "--v=2"]
            },
            "instance": {"localStorage": {"strategy": "RAID0"}}
        });
        let (merged, conflicts) = merge(&generated, &user);
        assert_eq!(
            merged,
            json!({
                "cluster": {"name": "prod", "apiServerEndpoint": "https://x", "cidr": "10.100.0.0/16", "enableOutpost": true},
                "kubelet": {"config": {"maxPods": 110, "podPidsLimit": 4096}, "flags": ["--node-labels=a=b", "--v=2"]},
                "instance": {"localStorage": {"strategy": "RAID0"}}
            })
        );
        let paths: Vec<String> = conflicts.iter().map(Conflict::path_text).collect();
        assert_eq!(paths, ["cluster.cidr", "kubelet.config.maxPods"]);
        assert_eq!(conflicts[0].generated, json!("10.100.0.0/16"));
        assert_eq!(conflicts[0].user, json!("172.20.0.0/16"));
    }

    #[test]
    fn merge_reports_a_mapping_given_for_a_value() {
        let (_, conflicts) = merge(
            &json!({"kubelet": {"config": {"maxPods": 110}}}),
            &json!({"kubelet": {"config": {"maxPods": {"value": 5}}}}),
        );
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].path_text(), "kubelet.config.maxPods");
    }

    #[test]
    fn the_spec_schema_keeps_nodeadm_s_fields() {
        let names = property_names(&[]);
        for name in [
            "cluster",
            "containerd",
            "instance",
            "kubelet",
            "featureGates",
        ] {
            assert!(names.contains(&name), "{name}");
        }
        let cluster = property_names(&[Segment::Key("cluster".into())]);
        assert_eq!(
            cluster,
            [
                "apiServerEndpoint",
                "certificateAuthority",
                "cidr",
                "enableOutpost",
                "id",
                "name"
            ]
        );
        assert!(feature_gates().contains(&"FastImagePull"));
    }
}
