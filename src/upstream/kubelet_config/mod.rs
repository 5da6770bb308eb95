//! The kubelet's configuration file (`KubeletConfiguration`,
//! `kubelet.config.k8s.io/v1beta1`): its fields and their types, the check
//! of a value against them, and what a field becomes on the families that
//! take no configuration file (a Bottlerocket setting, a Windows kubelet
//! flag).
//!
//! The data is vendored in `data/kubelet-config/` (see its README) and
//! embedded at build time. Values are JSON as the kubelet reads it: a
//! number where the kubelet wants a string is a mismatch, so a caller that
//! reads YAML, where `cpu: 1` is a number, applies [`normalize`] first.

use std::fmt;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::suggest;

mod families;
mod rules;

pub use rules::{allowed_values, check_together};

const SCHEMA_JSON: &str = include_str!("../../../data/kubelet-config/kubelet-config.schema.json");
static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(SCHEMA_JSON).expect("the embedded KubeletConfiguration schema is JSON")
});

static NAMES: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| properties(&SCHEMA).keys().map(String::as_str).collect());

/// The JSON Schema of a whole `KubeletConfiguration`: one fragment per
/// field, nested types under `definitions` (for the blueprint's schema).
pub fn schema() -> &'static Value {
    &SCHEMA
}

/// Every field name, in upstream order (for "did you mean").
pub fn names() -> &'static [&'static str] {
    &NAMES
}

/// One field of `KubeletConfiguration`.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JSON name: `evictionHard`.
    pub name: &'static str,
    /// The Go type upstream: `map[string]string`, `*metav1.Duration`.
    pub go_type: &'static str,
    /// The first paragraph of the upstream comment.
    pub description: &'static str,
    /// The field's JSON Schema fragment; `$ref`s point into [`schema`].
    pub schema: &'static Value,
}

/// The field called `name`, if `KubeletConfiguration` has one.
pub fn field(name: &str) -> Option<Field> {
    let (name, schema) = properties(&SCHEMA).get_key_value(name)?;
    let text = |key| schema.get(key).and_then(Value::as_str).unwrap_or_default();
    Some(Field {
        name,
        go_type: text("x-go-type"),
        description: text("description"),
        schema,
    })
}

// ---------------------------------------------------------------- checking

/// One step of a path into a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path as written in messages: `evictionHard.memory.available`,
/// `registerWithTaints[0].effect`.
pub fn display_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// One thing wrong with a configuration, at the path of the value (from the
/// configuration's root: the first segment is the field name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: Vec<Segment>,
    pub kind: ProblemKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// A field the type does not have; the closest known name, if any is close.
    UnknownField { suggestion: Option<&'static str> },
    /// A value of the wrong JSON type.
    WrongType {
        expected: String,
        found: &'static str,
    },
    /// A string that is not one of the allowed values.
    NotAllowed { value: String, allowed: Vec<String> },
    /// An integer outside the range of its Go type.
    OutOfRange { value: String, min: i128, max: i128 },
    /// A string that does not parse as what it stands for (a duration, a
    /// quantity).
    Malformed { value: String, expected: String },
    /// A key that needs the same key in the field `other`.
    Unpaired { other: String },
}

impl Problem {
    fn new(path: &[Segment], kind: ProblemKind) -> Problem {
        Problem {
            path: path.to_vec(),
            kind,
        }
    }

    /// The path as written in messages (see [`display_path`]).
    pub fn path_text(&self) -> String {
        display_path(&self.path)
    }

    /// What a diagnostic says, without the path (the caller points at it).
    pub fn message(&self) -> String {
        match &self.kind {
            ProblemKind::UnknownField { .. } => "unknown field".to_string(),
            ProblemKind::WrongType { expected, found } => {
                format!("expected {expected}, found {found}")
            }
            ProblemKind::NotAllowed { value, allowed } => format!(
                "`{value}` is not one of {}",
                allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ProblemKind::OutOfRange { value, min, max } => {
                format!("{value} is outside {min} to {max}")
            }
            ProblemKind::Malformed { value, expected } => {
                format!("`{value}` is not {expected}")
            }
            ProblemKind::Unpaired { other } => {
                format!("has no matching `{other}` entry")
            }
        }
    }

    /// A hint: "did you mean", when one applies.
    pub fn help(&self) -> Option<String> {
        match &self.kind {
            ProblemKind::UnknownField {
                suggestion: Some(best),
            } => Some(format!("did you mean `{best}`?")),
            ProblemKind::NotAllowed { value, allowed } => {
                let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
                suggest::closest(value, &allowed).map(|best| format!("did you mean `{best}`?"))
            }
            ProblemKind::Unpaired { .. } => Some(
                "the kubelet refuses a soft eviction threshold without its grace period; give `evictionSoft` and `evictionSoftGracePeriod` the same signals".to_string(),
            ),
            _ => None,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path_text(), self.message())
    }
}

/// Checks one field's value. An unknown `name` is one problem; every wrong
/// value inside a known field is one problem each.
pub fn check(name: &str, value: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    let path = vec![Segment::Key(name.to_string())];
    match properties(&SCHEMA).get(name) {
        Some(schema) => {
            walk(schema, value, &path, &mut out);
            rules::check_value(name, value, &mut out);
        }
        None => out.push(Problem::new(
            &path,
            ProblemKind::UnknownField {
                suggestion: suggest::closest(name, names()),
            },
        )),
    }
    out
}

/// Checks a whole configuration (a map of field names to values).
pub fn check_config(config: &Map<String, Value>) -> Vec<Problem> {
    config
        .iter()
        .flat_map(|(name, value)| check(name, value))
        .collect()
}

/// Rewrites the numbers the field's type wants as strings into strings
/// (`kubeReserved: {cpu: 1}` becomes `{"cpu": "1"}`), as a YAML author
/// means them. Nothing else changes: a boolean for a string stays a
/// mismatch, since `true` for `"true"` is more likely a mistake.
pub fn normalize(name: &str, value: &mut Value) {
    if let Some(schema) = properties(&SCHEMA).get(name) {
        normalize_at(schema, value);
    }
}

fn normalize_at(schema: &Value, value: &mut Value) {
    let schema = resolve(schema);
    match value {
        Value::Number(n) if types(schema) == ["string"] => *value = Value::String(n.to_string()),
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, inner) in map.iter_mut() {
                if let Some(s) = properties.and_then(|p| p.get(key)).or(additional) {
                    normalize_at(s, inner);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for item in items {
                    normalize_at(s, item);
                }
            }
        }
        _ => {}
    }
}

fn properties(schema: &Value) -> &Map<String, Value> {
    static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY)
}

/// Follows a `$ref` into the schema's `definitions`.
fn resolve(schema: &Value) -> &Value {
    match schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
        .and_then(|name| SCHEMA.get("definitions")?.get(name))
    {
        Some(target) => target,
        None => schema,
    }
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn walk(schema: &'static Value, value: &Value, path: &[Segment], out: &mut Vec<Problem>) {
    let schema = resolve(schema);
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        // The branch whose type takes the value decides; when none does,
        // the value's type is the problem.
        match branches.iter().find(|b| type_accepts(resolve(b), value)) {
            Some(branch) => walk(branch, value, path, out),
            None => out.push(Problem::new(
                path,
                ProblemKind::WrongType {
                    expected: describe(schema),
                    found: found(value),
                },
            )),
        }
        return;
    }
    if !type_accepts(schema, value) {
        out.push(Problem::new(
            path,
            ProblemKind::WrongType {
                expected: describe(schema),
                found: found(value),
            },
        ));
        return;
    }
    match value {
        Value::String(text) => check_string(schema, text, path, out),
        Value::Number(n) => {
            if types(schema).contains(&"integer") {
                let n = n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from));
                let bound = |key| schema.get(key).and_then(Value::as_i64).map(i128::from);
                let max = schema
                    .get("maximum")
                    .and_then(Value::as_u64)
                    .map(i128::from);
                if let (Some(n), Some(min), Some(max)) = (n, bound("minimum"), max)
                    && !(min..=max).contains(&n)
                {
                    out.push(Problem::new(
                        path,
                        ProblemKind::OutOfRange {
                            value: n.to_string(),
                            min,
                            max,
                        },
                    ));
                }
            }
        }
        Value::Object(map) => {
            let known = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (key, inner) in map {
                let mut at = path.to_vec();
                at.push(Segment::Key(key.clone()));
                match (known.and_then(|k| k.get(key)), additional) {
                    (Some(s), _) => walk(s, inner, &at, out),
                    (None, Some(Value::Bool(false))) => {
                        let names: Vec<&str> = known
                            .map(|k| k.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        out.push(Problem::new(
                            &at,
                            ProblemKind::UnknownField {
                                suggestion: suggest::closest(key, &names),
                            },
                        ));
                    }
                    (None, Some(s @ Value::Object(_))) => walk(s, inner, &at, out),
                    (None, _) => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let mut at = path.to_vec();
                    at.push(Segment::Index(i));
                    walk(s, item, &at, out);
                }
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

fn check_string(schema: &'static Value, text: &str, path: &[Segment], out: &mut Vec<Problem>) {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        let allowed: Vec<String> = allowed
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if !allowed.iter().any(|a| a == text) {
            out.push(Problem::new(
                path,
                ProblemKind::NotAllowed {
                    value: text.to_string(),
                    allowed,
                },
            ));
        }
        return;
    }
    let format = schema.get("format").and_then(Value::as_str);
    let valid = match format {
        Some("duration") => is_duration(text),
        Some("quantity") => is_quantity(text),
        _ => true,
    };
    if !valid {
        out.push(Problem::new(
            path,
            ProblemKind::Malformed {
                value: text.to_string(),
                expected: describe(schema),
            },
        ));
    }
}

fn type_accepts(schema: &Value, value: &Value) -> bool {
    let types = types(schema);
    if types.is_empty() {
        return true;
    }
    types.iter().any(|t| match (*t, value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    })
}

/// What a schema asks for, in words: "a duration such as `30s`".
fn describe(schema: &Value) -> String {
    let schema = resolve(schema);
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        return branches
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("duration") => return "a duration such as `30s` or `1m30s`".to_string(),
        Some("quantity") => return "a quantity such as `100Mi`, `0.5` or `2`".to_string(),
        _ => {}
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        let allowed: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        return format!("one of {}", suggest::listed(&allowed));
    }
    let words: Vec<String> = types(schema)
        .iter()
        .map(|t| match *t {
            "string" => "a string".to_string(),
            "boolean" => "true or false".to_string(),
            "integer" => "an integer".to_string(),
            "number" => "a number".to_string(),
            "array" => match schema.get("items") {
                Some(items) => format!("a list (each item {})", describe(items)),
                None => "a list".to_string(),
            },
            "object" => match schema.get("additionalProperties") {
                Some(inner @ Value::Object(_)) => {
                    format!("a mapping (each value {})", describe(inner))
                }
                _ => "a mapping".to_string(),
            },
            other => other.to_string(),
        })
        .collect();
    if words.is_empty() {
        "any value".to_string()
    } else {
        words.join(" or ")
    }
}

/// What a JSON value is, for "expected X, found Y".
pub(crate) fn found(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a decimal number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Go's `time.ParseDuration`: an optional sign, then `0` or one or more
/// decimal numbers each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`).
pub fn is_duration(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    let mut rest = rest;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after) = decimal(rest) else {
            return false;
        };
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        if !matches!(
            unit,
            "ns" | "us" | "\u{b5}s" | "\u{3bc}s" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
        rest = next;
    }
    true
}

/// `resource.Quantity`'s grammar: a signed decimal number, then a binary
/// suffix (`Ki` ... `Ei`), a decimal one (`n`, `u`, `m`, `k`, `M` ... `E`)
/// or an exponent (`e3`, `E-2`).
pub fn is_quantity(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let Some(suffix) = decimal(rest) else {
        return false;
    };
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        _ => match suffix.strip_prefix(['e', 'E']) {
            Some(exponent) => {
                let exponent = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
                decimal(exponent) == Some("")
            }
            None => false,
        },
    }
}

/// Reads `digits[.digits]` or `.digits` (at least one digit) and returns
/// what follows.
fn decimal(text: &str) -> Option<&str> {
    let int_len = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (int, rest) = text.split_at(int_len);
    let (fraction, rest) = match rest.strip_prefix('.') {
        Some(after) => {
            let len = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            after.split_at(len)
        }
        None => ("", rest),
    };
    (!int.is_empty() || !fraction.is_empty()).then_some(rest)
}

pub use families::{
    BottlerocketSetting, FlagFormat, WindowsFlag, bottlerocket_key, bottlerocket_settings,
    windows_flag, windows_flags,
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(name: &str, value: Value) -> Vec<(String, ProblemKind)> {
        check(name, &value)
            .into_iter()
            .map(|p| (p.path_text(), p.kind))
            .collect()
    }

    #[test]
    fn knows_fields_with_their_go_types() {
        let max_pods = field("maxPods").expect("maxPods");
        assert_eq!(max_pods.go_type, "int32");
        assert_eq!(
            field("evictionHard").map(|f| f.go_type),
            Some("map[string]string")
        );
        assert_eq!(
            field("syncFrequency").map(|f| f.go_type),
            Some("metav1.Duration")
        );
        assert!(field("maxpods").is_none());
        assert!(
            field("apiVersion").is_none(),
            "TypeMeta belongs to the file, not a field"
        );
        assert!(names().len() > 100);
        assert!(names().contains(&"shutdownGracePeriodByPodPriority"));
    }

    #[test]
    fn accepts_values_of_the_right_types() {
        let config = json!({
            "maxPods": 110,
            "serializeImagePulls": false,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%"},
            "featureGates": {"SomeGate": true},
            "syncFrequency": "1m30s",
            "cpuCFSQuotaPeriod": "100ms",
            "memoryThrottlingFactor": 0.9,
            "podPidsLimit": -1,
            "clusterDNS": ["10.100.0.10"],
            "shutdownGracePeriodByPodPriority": [
                {"priority": 100000, "shutdownGracePeriodSeconds": 30}
            ],
            "registerWithTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-2Mi": 2}}],
            "logging": {"verbosity": 2, "flushFrequency": 5000000000_i64},
            "memorySwap": {"swapBehavior": "LimitedSwap"},
            "configMapAndSecretChangeDetectionStrategy": "Watch",
        });
        let Value::Object(config) = config else {
            unreachable!()
        };
        assert_eq!(check_config(&config), Vec::new());
    }

    #[test]
    fn an_unknown_field_suggests_the_closest() {
        assert_eq!(
            kinds("evictonHard", json!({})),
            vec![(
                "evictonHard".to_string(),
                ProblemKind::UnknownField {
                    suggestion: Some("evictionHard")
                }
            )]
        );
        let problems = check("podPidLimit", &json!(5));
        assert_eq!(
            problems[0].help().as_deref(),
            Some("did you mean `podPidsLimit`?")
        );
        assert_eq!(
            kinds("memorySwap", json!({"swapBehaviour": "NoSwap"})),
            vec![(
                "memorySwap.swapBehaviour".to_string(),
                ProblemKind::UnknownField {
                    suggestion: Some("swapBehavior")
                }
            )]
        );
    }

    #[test]
    fn reports_wrong_types_at_their_path() {
        let wrong = |expected: &str, found| ProblemKind::WrongType {
            expected: expected.to_string(),
            found,
        };
        assert_eq!(
            kinds("containerLogMaxSize", json!(10)),
            vec![(
                "containerLogMaxSize".into(),
                wrong("a string", "an integer")
            )]
        );
        assert_eq!(
            kinds("serializeImagePulls", json!("false")),
            vec![(
                "serializeImagePulls".into(),
                wrong("true or false", "a string")
            )]
        );
        assert_eq!(
            kinds("maxPods", json!("110")),
            vec![("maxPods".into(), wrong("an integer", "a string"))]
        );
        assert_eq!(
            kinds("maxPods", json!(1.5)),
            vec![("maxPods".into(), wrong("an integer", "a decimal number"))]
        );
        assert_eq!(
            kinds(
                "evictionHard",
                json!({"memory.available": 100, "nodefs.available": "5%"})
            ),
            vec![(
                "evictionHard.memory.available".into(),
                wrong("a string", "an integer")
            )]
        );
        assert_eq!(
            kinds("featureGates", json!({"A": "true", "B": true})),
            vec![("featureGates.A".into(), wrong("true or false", "a string"))]
        );
        assert_eq!(
            kinds("clusterDNS", json!("10.100.0.10")),
            vec![(
                "clusterDNS".into(),
                wrong("a list (each item a string)", "a string")
            )]
        );
        assert_eq!(
            kinds(
                "shutdownGracePeriodByPodPriority",
                json!([{"priority": 1, "shutdownGracePeriodSeconds": "30s"}])
            ),
            vec![(
                "shutdownGracePeriodByPodPriority[0].shutdownGracePeriodSeconds".into(),
                wrong("an integer", "a string")
            )]
        );
        assert_eq!(
            kinds("logging", json!({"flushFrequency": true})),
            vec![(
                "logging.flushFrequency".into(),
                wrong(
                    "a duration such as `30s` or `1m30s` or an integer",
                    "a boolean"
                )
            )]
        );
        assert_eq!(
            kinds("kubeReserved", json!(null)),
            vec![(
                "kubeReserved".into(),
                wrong("a mapping (each value a string)", "nothing (null)")
            )]
        );
    }

    #[test]
    fn every_mistake_is_its_own_problem() {
        let problems = check(
            "registerWithTaints",
            &json!([{"key": 1, "effect": "NoSchedul"}, {"key": "b", "efect": "NoExecute"}]),
        );
        let paths: Vec<String> = problems.iter().map(Problem::path_text).collect();
        assert_eq!(
            paths,
            [
                "registerWithTaints[0].key",
                "registerWithTaints[0].effect",
                "registerWithTaints[1].efect"
            ]
        );
        assert_eq!(
            problems[1].message(),
            "`NoSchedul` is not one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`"
        );
    }

    #[test]
    fn checks_durations_quantities_ranges_and_enums() {
        assert!(matches!(
            &kinds("syncFrequency", json!("1 minute"))[..],
            [(_, ProblemKind::Malformed { .. })]
        ));
        assert!(matches!(
            &kinds("reservedMemory", json!([{"numaNode": 0, "limits": {"memory": "1GB"}}]))[..],
            [(path, ProblemKind::Malformed { .. })] if path == "reservedMemory[0].limits.memory"
        ));
        assert_eq!(
            kinds("maxPods", json!(3_000_000_000_u64)),
            vec![(
                "maxPods".into(),
                ProblemKind::OutOfRange {
                    value: "3000000000".into(),
                    min: -2_147_483_648,
                    max: 2_147_483_647
                }
            )]
        );
        assert!(matches!(
            &kinds("imagePullCredentialsVerificationPolicy", json!("Sometimes"))[..],
            [(_, ProblemKind::NotAllowed { .. })]
        ));
    }

    #[test]
    fn duration_and_quantity_parsers_agree_with_the_schema_patterns() {
        let pattern = |format: &str| {
            let fragment = match format {
                "duration" => field("syncFrequency").map(|f| f.schema.clone()),
                _ => SCHEMA["definitions"]["MemoryReservation"]["properties"]["limits"]
                    ["additionalProperties"]
                    .clone()
                    .into(),
            };
            let mut fragment = fragment.expect("fragment");
            fragment["type"] = json!("string");
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .build(&fragment)
                .expect("the pattern compiles")
        };
        let durations = pattern("duration");
        for text in [
            "0",
            "-0",
            "1s",
            "1.5h",
            ".5m",
            "5.m",
            "1h2m3s4ms5us6ns",
            "3\u{b5}s",
            "3\u{3bc}s",
            "+2h",
            "",
            "1",
            "1d",
            "1hm",
            "1mss",
            ".",
            "s",
            "1.s",
            "1..5s",
            "ms1",
        ] {
            assert_eq!(
                is_duration(text),
                durations.is_valid(&json!(text)),
                "duration {text:?}"
            );
        }
        let quantities = pattern("quantity");
        for text in [
            "1", "100Mi", "0.5", ".5", "5.", "-1Gi", "+2k", "1e3", "1E-2", "1.5e+3", "2m", "1Ki",
            "", "Mi", "1KiB", "1GB", "1e", "1e1.5", "10%", "1 Gi", "1ki", "..5",
        ] {
            assert_eq!(
                is_quantity(text),
                quantities.is_valid(&json!(text)),
                "quantity {text:?}"
            );
        }
    }

    #[test]
    fn the_schema_compiles_as_draft_7() {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(schema())
            .expect("compiles");
        assert!(validator.is_valid(&json!({"maxPods": 110})));
        assert!(!validator.is_valid(&json!({"maxPods": "110"})));
    }

    #[test]
    fn normalize_turns_numbers_into_the_strings_a_field_wants() {
        let mut value = json!({"cpu": 1, "memory": "1Gi"});
        normalize("kubeReserved", &mut value);
        assert_eq!(value, json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(check("kubeReserved", &value), Vec::new());
        let mut flag = json!(true);
        normalize("containerLogMaxSize", &mut flag);
        assert_eq!(flag, json!(true), "booleans stay a mistake");
        let mut count = json!(5);
        normalize("containerLogMaxFiles", &mut count);
        assert_eq!(count, json!(5), "integers stay integers");
        let mut taints = json!([{"key": "k", "value": 1, "effect": "NoSchedule"}]);
        normalize("registerWithTaints", &mut taints);
        assert_eq!(taints[0]["value"], json!("1"));
    }
}
