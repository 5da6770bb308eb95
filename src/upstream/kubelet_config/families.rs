//! What a `KubeletConfiguration` field becomes on the families that take no
//! configuration file: a Bottlerocket `settings.kubernetes` key, or a
//! kubelet command-line flag for Windows (`Start-EKSBootstrap.ps1` writes
//! the configuration file itself, so flags are the only way in).

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

const WINDOWS_JSON: &str = include_str!("../../../data/kubelet-config/windows-flags.json");
const BOTTLEROCKET_JSON: &str =
    include_str!("../../../data/kubelet-config/bottlerocket-settings.json");

static WINDOWS: LazyLock<Vec<WindowsFlag>> = LazyLock::new(|| {
    #[derive(Deserialize)]
    struct File {
        flags: Vec<WindowsFlag>,
    }
    let file: File =
        serde_json::from_str(WINDOWS_JSON).expect("the embedded Windows flag list is valid");
    file.flags
});

static BOTTLEROCKET: LazyLock<Vec<BottlerocketSetting>> = LazyLock::new(|| {
    #[derive(Deserialize)]
    struct File {
        settings: Vec<BottlerocketSetting>,
    }
    let file: File = serde_json::from_str(BOTTLEROCKET_JSON)
        .expect("the embedded Bottlerocket setting list is valid");
    file.settings
});

/// The Bottlerocket setting of a field (or a field inside a struct field).
#[derive(Debug, Clone, Deserialize)]
pub struct BottlerocketSetting {
    /// The field's path: `maxPods`, `memorySwap.swapBehavior`.
    pub field: String,
    /// The full setting name: `settings.kubernetes.max-pods`.
    pub setting: String,
    /// Where Bottlerocket takes less than the kubelet does.
    pub note: Option<String>,
}

impl BottlerocketSetting {
    /// The key inside `[settings.kubernetes]`: `max-pods`.
    pub fn key(&self) -> &str {
        self.setting
            .strip_prefix("settings.kubernetes.")
            .unwrap_or(&self.setting)
    }
}

/// The Bottlerocket setting of the field at `path` (`maxPods`,
/// `memorySwap.swapBehavior`), if Bottlerocket has one.
pub fn bottlerocket_key(path: &str) -> Option<&'static BottlerocketSetting> {
    BOTTLEROCKET.iter().find(|s| s.field == path)
}

/// How a Windows kubelet flag's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagFormat {
    /// `--flag=value`
    Scalar,
    /// `--flag=a,b,c`
    List,
    /// `--flag=k1=v1,k2=v2`
    Map,
    /// `--flag=k1<v1,k2<v2`
    MapLangle,
    /// `--flag=k1=v1 --flag=k2=v2`: the value is not split at commas.
    MapRepeated,
    /// `--flag=k1:v1,k1:v2`
    MultimapColon,
    /// `--flag=<numaNode>:<resource>=<quantity>,...` once per NUMA node.
    ReservedMemory,
    /// `--flag=<key>=<value>:<effect>,...`
    Taints,
    /// `--flag=<filePattern>=<verbosity>,...`
    Vmodule,
}

/// The kubelet command-line flag of a field.
#[derive(Debug, Clone, Deserialize)]
pub struct WindowsFlag {
    /// The field's path: `maxPods`, `authentication.anonymous.enabled`.
    pub field: String,
    /// `--max-pods`
    pub flag: String,
    pub format: FlagFormat,
}

/// The kubelet flag of the field at `path`, if the kubelet has one.
pub fn windows_flag(path: &str) -> Option<&'static WindowsFlag> {
    WINDOWS.iter().find(|f| f.field == path)
}

/// The settings a field's value becomes: the field itself when it has a
/// setting, else, for a struct field, each of its fields that has one. The
/// error lists the paths that have none (one each).
pub fn bottlerocket_settings<'v>(
    name: &str,
    value: &'v Value,
) -> Result<Vec<(&'static BottlerocketSetting, &'v Value)>, Vec<String>> {
    mapped(name, value, &|path| bottlerocket_key(path), &|path| {
        BOTTLEROCKET.iter().any(|s| is_inside(&s.field, path))
    })
}

/// The kubelet flags a field's value becomes, as for
/// [`bottlerocket_settings`].
pub fn windows_flags<'v>(
    name: &str,
    value: &'v Value,
) -> Result<Vec<(&'static WindowsFlag, &'v Value)>, Vec<String>> {
    mapped(name, value, &|path| windows_flag(path), &|path| {
        WINDOWS.iter().any(|f| is_inside(&f.field, path))
    })
}

fn is_inside(field: &str, path: &str) -> bool {
    field
        .strip_prefix(path)
        .is_some_and(|rest| rest.starts_with('.'))
}

fn mapped<'v, T: 'static>(
    path: &str,
    value: &'v Value,
    lookup: &dyn Fn(&str) -> Option<&'static T>,
    has_inner: &dyn Fn(&str) -> bool,
) -> Result<Vec<(&'static T, &'v Value)>, Vec<String>> {
    if let Some(target) = lookup(path) {
        return Ok(vec![(target, value)]);
    }
    let Value::Object(map) = value else {
        return Err(vec![path.to_string()]);
    };
    if !has_inner(path) {
        return Err(vec![path.to_string()]);
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (key, inner) in map {
        match mapped(&format!("{path}.{key}"), inner, lookup, has_inner) {
            Ok(more) => found.extend(more),
            Err(more) => missing.extend(more),
        }
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing)
    }
}

impl WindowsFlag {
    /// The command-line arguments for a value of the field (already
    /// checked with [`check`]); `None` when the value does not have the
    /// flag's shape.
    pub fn args(&self, value: &Value) -> Option<Vec<String>> {
        let flag = &self.flag;
        let one = |text: String| Some(vec![format!("{flag}={text}")]);
        let pairs = |separator: &str| -> Option<Vec<String>> {
            value
                .as_object()?
                .iter()
                .map(|(k, v)| Some(format!("{k}{separator}{}", scalar(v)?)))
                .collect()
        };
        match self.format {
            FlagFormat::Scalar => one(scalar(value)?),
            FlagFormat::List => one(value
                .as_array()?
                .iter()
                .map(scalar)
                .collect::<Option<Vec<_>>>()?
                .join(",")),
            FlagFormat::Map => one(pairs("=")?.join(",")),
            FlagFormat::MapLangle => one(pairs("<")?.join(",")),
            FlagFormat::MapRepeated => Some(
                pairs("=")?
                    .into_iter()
                    .map(|pair| format!("{flag}={pair}"))
                    .collect(),
            ),
            FlagFormat::MultimapColon => {
                let mut out = Vec::new();
                for (k, values) in value.as_object()? {
                    for v in values.as_array()? {
                        out.push(format!("{k}:{}", scalar(v)?));
                    }
                }
                one(out.join(","))
            }
            FlagFormat::ReservedMemory => value
                .as_array()?
                .iter()
                .map(|item| {
                    let node = scalar(item.get("numaNode")?)?;
                    let limits = item
                        .get("limits")?
                        .as_object()?
                        .iter()
                        .map(|(k, v)| Some(format!("{k}={}", scalar(v)?)))
                        .collect::<Option<Vec<_>>>()?;
                    Some(format!("{flag}={node}:{}", limits.join(",")))
                })
                .collect(),
            FlagFormat::Taints => one(value
                .as_array()?
                .iter()
                .map(|taint| {
                    let key = taint.get("key")?.as_str()?;
                    let value = taint.get("value").and_then(Value::as_str).unwrap_or("");
                    let effect = taint.get("effect")?.as_str()?;
                    Some(format!("{key}={value}:{effect}"))
                })
                .collect::<Option<Vec<_>>>()?
                .join(",")),
            FlagFormat::Vmodule => one(value
                .as_array()?
                .iter()
                .map(|item| {
                    let pattern = item.get("filePattern")?.as_str()?;
                    Some(format!("{pattern}={}", scalar(item.get("verbosity")?)?))
                })
                .collect::<Option<Vec<_>>>()?
                .join(",")),
        }
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SCHEMA, resolve};
    use super::*;
    use serde_json::json;

    #[test]
    fn bottlerocket_settings_descend_into_struct_fields() {
        let value = json!({"swapBehavior": "NoSwap"});
        let settings = bottlerocket_settings("memorySwap", &value).expect("mapped");
        assert_eq!(settings.len(), 1);
        assert_eq!(
            settings[0].0.setting,
            "settings.kubernetes.memory-swap-behavior"
        );
        assert_eq!(settings[0].1, &json!("NoSwap"));
        assert_eq!(
            bottlerocket_settings("logging", &json!({"verbosity": 2, "format": "json"}))
                .map(|s| s.len()),
            Err(vec!["logging.format".to_string()])
        );
        assert!(bottlerocket_key("serializeImagePulls").is_none());
        assert_eq!(
            bottlerocket_settings("serializeImagePulls", &json!(false)).map(|s| s.len()),
            Err(vec!["serializeImagePulls".to_string()])
        );
    }

    #[test]
    fn every_mapped_path_is_a_field() {
        fn exists(path: &str) -> bool {
            let mut node = &*SCHEMA;
            for part in path.split('.') {
                match resolve(node).get("properties").and_then(|p| p.get(part)) {
                    Some(next) => node = next,
                    None => return false,
                }
            }
            true
        }
        for setting in BOTTLEROCKET.iter() {
            assert!(exists(&setting.field), "{}", setting.field);
            assert!(setting.setting.starts_with("settings.kubernetes."));
        }
        for flag in WINDOWS.iter() {
            assert!(exists(&flag.field), "{}", flag.field);
            assert!(flag.flag.starts_with("--"));
        }
    }

    #[test]
    fn windows_flags_are_written_in_their_format() {
        let args = |path: &str, value: Value| {
            windows_flag(path)
                .and_then(|f| f.args(&value))
                .expect("a flag")
        };
        assert_eq!(args("maxPods", json!(29)), ["--max-pods=29"]);
        assert_eq!(
            args(
                "evictionHard",
                json!({"memory.available": "100Mi", "nodefs.available": "10%"})
            ),
            ["--eviction-hard=memory.available<100Mi,nodefs.available<10%"]
        );
        assert_eq!(
            args("kubeReserved", json!({"cpu": "100m", "memory": "1Gi"})),
            ["--kube-reserved=cpu=100m,memory=1Gi"]
        );
        assert_eq!(
            args("featureGates", json!({"A": true, "B": false})),
            ["--feature-gates=A=true,B=false"]
        );
        assert_eq!(
            args(
                "cpuManagerPolicyOptions",
                json!({"full-pcpus-only": "true", "x": "1"})
            ),
            [
                "--cpu-manager-policy-options=full-pcpus-only=true",
                "--cpu-manager-policy-options=x=1"
            ]
        );
        assert_eq!(
            args(
                "allowedUnsafeSysctls",
                json!(["net.core.somaxconn", "kernel.msg*"])
            ),
            ["--allowed-unsafe-sysctls=net.core.somaxconn,kernel.msg*"]
        );
        assert_eq!(
            args(
                "registerWithTaints",
                json!([{"key": "a", "value": "b", "effect": "NoSchedule"}, {"key": "c", "effect": "NoExecute"}])
            ),
            ["--register-with-taints=a=b:NoSchedule,c=:NoExecute"]
        );
        assert_eq!(
            args(
                "reservedMemory",
                json!([{"numaNode": 0, "limits": {"memory": "1Gi"}}])
            ),
            ["--reserved-memory=0:memory=1Gi"]
        );
        assert_eq!(
            args(
                "logging.vmodule",
                json!([{"filePattern": "kubelet*", "verbosity": 4}])
            ),
            ["--vmodule=kubelet*=4"]
        );
        assert_eq!(
            args("staticPodURLHeader", json!({"a": ["x", "y"]})),
            ["--manifest-url-header=a:x,a:y"]
        );
        let authentication = json!({"anonymous": {"enabled": false}});
        let flags = windows_flags("authentication", &authentication).expect("mapped");
        assert_eq!(flags[0].0.flag, "--anonymous-auth");
        assert_eq!(
            windows_flags("imageMaximumGCAge", &json!("1h")).map(|f| f.len()),
            Err(vec!["imageMaximumGCAge".to_string()])
        );
    }
}
