//! Bottlerocket: TOML settings, not a script.

use serde_json::{Value, json};

use super::kubelet::{Prepared, renders_labels, taint_text};
use super::settings_toml::{NullSetting, flatten_settings, toml_key, toml_value};
use super::templates::{BOTTLEROCKET_TEMPLATE, render_template};
use super::{
    Field, Mode, Signal, UserDataError, UserDataInput, refuse_fields, toml_quote, unsupported,
};
use crate::cfn::sub::is_placeholder;
use crate::upstream::kubelet_config;

impl From<NullSetting> for UserDataError {
    fn from(_: NullSetting) -> UserDataError {
        unsupported("a null setting", "Bottlerocket (TOML has no null)")
    }
}

/// What a Bottlerocket kubelet setting holds.
#[derive(Clone, Copy)]
enum TomlKind {
    Integer,
    String,
    /// A table of quantity strings.
    Table,
}

/// Kubelet settings and the `settings.kubernetes` names Bottlerocket gives
/// them. Bottlerocket has no `serializeImagePulls` (only
/// `max-parallel-image-pulls`), so that one is refused.
const BOTTLEROCKET_SETTINGS: &[(&str, &str, TomlKind)] = &[
    (
        "imageGCHighThresholdPercent",
        "image-gc-high-threshold-percent",
        TomlKind::Integer,
    ),
    (
        "imageGCLowThresholdPercent",
        "image-gc-low-threshold-percent",
        TomlKind::Integer,
    ),
    ("podPidsLimit", "pod-pids-limit", TomlKind::Integer),
    (
        "containerLogMaxFiles",
        "container-log-max-files",
        TomlKind::Integer,
    ),
    (
        "containerLogMaxSize",
        "container-log-max-size",
        TomlKind::String,
    ),
    ("cpuManagerPolicy", "cpu-manager-policy", TomlKind::String),
    ("evictionHard", "eviction-hard", TomlKind::Table),
    ("kubeReserved", "kube-reserved", TomlKind::Table),
    ("systemReserved", "system-reserved", TomlKind::Table),
];

/// The bootstrap command that assembles the instance store: `apiclient
/// ephemeral-storage init` makes one RAID 0 array of the NVMe instance
/// store disks (Bottlerocket 1.22 and later), and `bind` mounts it over
/// the directories of the container runtime, kubelet and pod logs. Named
/// to run before any other bootstrap command, on every boot (the instance
/// store is blank after a stop and start), and essential: a node without
/// its storage does not boot (bottlerocket.dev, "Bootstrap Commands" and
/// `settings.bootstrap-commands`).
pub(super) const INSTANCE_STORE_COMMAND: &str = "000-eksynth-instance-store";

fn instance_store_commands() -> Result<(String, Vec<(String, String)>), UserDataError> {
    let commands = json!([
        ["apiclient", "ephemeral-storage", "init"],
        [
            "apiclient",
            "ephemeral-storage",
            "bind",
            "--dirs",
            "/var/lib/containerd",
            "/var/lib/kubelet",
            "/var/log/pods"
        ]
    ]);
    Ok((
        format!("bootstrap-commands.{}", toml_key(INSTANCE_STORE_COMMAND)),
        vec![
            ("commands".into(), toml_value(&commands)?),
            ("essential".into(), "true".into()),
            ("mode".into(), toml_quote("always")),
        ],
    ))
}

fn toml_scalar(key: &str, value: &Value, kind: TomlKind) -> Result<String, UserDataError> {
    let mismatch = |expected| UserDataError::KubeletSettingType {
        key: key.to_string(),
        expected,
    };
    match (kind, value) {
        (TomlKind::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        (TomlKind::Integer, Value::String(s)) if is_placeholder(s) => Ok(s.clone()),
        (TomlKind::Integer, _) => Err(mismatch("an integer")),
        (TomlKind::String, Value::String(s)) => Ok(toml_quote(s)),
        (TomlKind::String, _) => Err(mismatch("a string")),
        (TomlKind::Table, _) => Err(mismatch("a map")),
    }
}

/// The entries of one TOML table: each key with its value written as TOML.
type Entries = Vec<(String, String)>;

/// What a Bottlerocket node's user data sets, in the order it is written.
#[derive(Default)]
struct Settings {
    /// The leaves of `settings.kubernetes`.
    kubernetes: Entries,
    /// The tables inside `settings.kubernetes`, each by its name.
    tables: Vec<(String, Entries)>,
    /// Every other table, by its path under `settings`.
    settings: Vec<(String, Entries)>,
}

pub(super) fn render(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "Bottlerocket (its user data is settings, not a script)",
        &[
            Field::WarmPool,
            Field::PreBootstrapCommands,
            Field::PostBootstrapCommands,
            Field::UserDataParts,
            Field::EfsMounts,
            Field::BlockPodImds,
            Field::BootstrapArguments,
        ],
    )?;
    let full = input.mode != Mode::ManagedEksAmi;
    let mut settings = Settings {
        kubernetes: cluster_settings(input, prepared, full),
        ..Settings::default()
    };
    for (key, value) in &prepared.kubelet {
        settings.kubelet_setting(key, value)?;
    }
    if renders_labels(input) {
        settings.node_labels(input)?;
        settings.node_taints(input);
    }
    settings.user_settings(&input.bottlerocket_settings)?;
    if input.instance_store_raid0 {
        settings.settings.push(instance_store_commands()?);
    }
    settings.render(full, input.signal.as_ref())
}

/// The leaves of `settings.kubernetes` that join the node to its cluster
/// (left to EKS on its own AMI for a managed group) and cap its pods.
fn cluster_settings(input: &UserDataInput, prepared: &Prepared, full: bool) -> Entries {
    let mut kubernetes = Vec::new();
    if full {
        kubernetes.push(("cluster-name".into(), toml_quote(&input.cluster_name)));
        kubernetes.push(("api-server".into(), toml_quote(&input.api_server_endpoint)));
        kubernetes.push((
            "cluster-certificate".into(),
            toml_quote(&input.certificate_authority),
        ));
    }
    // The user data's settings win over the ones EKS writes on its own AMI,
    // so `clusterDNS` is written for every kind of group.
    if !input.cluster_dns.is_empty() {
        kubernetes.push(("cluster-dns-ip".into(), cluster_dns_ip(&input.cluster_dns)));
    } else if full {
        kubernetes.push(("cluster-dns-ip".into(), toml_quote(&input.dns_cluster_ip)));
    }
    if let Some(max_pods) = prepared.max_pods {
        kubernetes.push(("max-pods".into(), max_pods.to_string()));
    }
    kubernetes
}

/// `cluster-dns-ip`: one address as a string, which every Bottlerocket
/// release reads; several as a list, which the releases whose model types it
/// as an IP or a list of IPs read (`KubernetesClusterDnsIp`).
fn cluster_dns_ip(addresses: &[String]) -> String {
    match addresses {
        [one] => toml_quote(one),
        several => {
            let items: Vec<String> = several.iter().map(|a| toml_quote(a)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

impl Settings {
    /// One kubelet setting: a typed field under the name this module gives
    /// it, any other under the names of the vendored list.
    fn kubelet_setting(&mut self, key: &str, value: &Value) -> Result<(), UserDataError> {
        match BOTTLEROCKET_SETTINGS.iter().find(|(k, _, _)| *k == key) {
            Some((_, name, TomlKind::Table)) => {
                let entries = quantity_table(key, value)?;
                if !entries.is_empty() {
                    self.tables.push(((*name).to_string(), entries));
                }
            }
            Some((_, name, kind)) => {
                let scalar = toml_scalar(key, value, *kind)?;
                self.kubernetes.push(((*name).to_string(), scalar));
            }
            None => self.vendored_kubelet_setting(key, value)?,
        }
        Ok(())
    }

    /// A kubelet setting the vendored list maps to Bottlerocket's settings:
    /// a map becomes a table, anything else a leaf.
    fn vendored_kubelet_setting(&mut self, key: &str, value: &Value) -> Result<(), UserDataError> {
        let settings = kubelet_config::bottlerocket_settings(key, value).map_err(|_| {
            unsupported(
                format!("kubelet setting `{key}`"),
                "Bottlerocket (it has no such setting)",
            )
        })?;
        for (setting, value) in settings {
            match value {
                Value::Object(map) => {
                    let entries = map
                        .iter()
                        .map(|(k, v)| Ok((k.clone(), toml_value(v)?)))
                        .collect::<Result<Vec<_>, UserDataError>>()?;
                    if !entries.is_empty() {
                        self.tables.push((setting.key().to_string(), entries));
                    }
                }
                _ => self
                    .kubernetes
                    .push((setting.key().to_string(), toml_value(value)?)),
            }
        }
        Ok(())
    }

    /// `settings.kubernetes.node-labels`, each key once.
    fn node_labels(&mut self, input: &UserDataInput) -> Result<(), UserDataError> {
        let mut labels: Entries = Vec::new();
        for label in &input.labels {
            if labels.iter().any(|(k, _)| *k == label.key) {
                return Err(UserDataError::DuplicateLabel(label.key.clone()));
            }
            labels.push((label.key.clone(), toml_quote(&label.value)));
        }
        if !labels.is_empty() {
            self.tables.push(("node-labels".into(), labels));
        }
        Ok(())
    }

    /// `settings.kubernetes.node-taints`. One key may carry several taints
    /// (one per effect): Bottlerocket takes a list of `value:Effect`
    /// strings for it then, and a single string otherwise.
    fn node_taints(&mut self, input: &UserDataInput) {
        let mut taints: Vec<(&str, Vec<String>)> = Vec::new();
        for taint in &input.taints {
            let text = taint_text(taint, "");
            match taints.iter_mut().find(|(k, _)| *k == taint.key) {
                Some((_, values)) => values.push(text),
                None => taints.push((&taint.key, vec![text])),
            }
        }
        if taints.is_empty() {
            return;
        }
        let entries = taints
            .into_iter()
            .map(|(key, values)| {
                let value = match values.as_slice() {
                    [one] => toml_quote(one),
                    many => {
                        let items: Vec<String> = many.iter().map(|v| toml_quote(v)).collect();
                        format!("[{}]", items.join(", "))
                    }
                };
                (key.to_string(), value)
            })
            .collect();
        self.tables.push(("node-taints".into(), entries));
    }

    /// The user's settings: leaves of `kubernetes` join eksynth's table
    /// (TOML defines a table once), every other table gets its own header,
    /// the user's tables inside `kubernetes` first, beside eksynth's.
    fn user_settings(
        &mut self,
        user: &serde_json::Map<String, Value>,
    ) -> Result<(), UserDataError> {
        let mut others: Vec<(String, Entries)> = Vec::new();
        for (key, value) in user {
            match (key.as_str(), value) {
                ("kubernetes", Value::Object(table)) => {
                    for (key, value) in table {
                        match value {
                            Value::Object(inner) => flatten_settings(
                                format!("kubernetes.{}", toml_key(key)),
                                inner,
                                &mut self.settings,
                            )?,
                            value => self.kubernetes.push((toml_key(key), toml_value(value)?)),
                        }
                    }
                }
                (_, Value::Object(table)) => flatten_settings(toml_key(key), table, &mut others)?,
                (_, value) => {
                    let leaf = (toml_key(key), toml_value(value)?);
                    match others.iter_mut().find(|(path, _)| path.is_empty()) {
                        Some((_, entries)) => entries.push(leaf),
                        None => others.insert(0, (String::new(), vec![leaf])),
                    }
                }
            }
        }
        self.settings.append(&mut others);
        Ok(())
    }

    /// The user data: nothing when there is nothing to set, else the
    /// settings through the template, with the signal of a group that
    /// signals.
    fn render(self, full: bool, signal: Option<&Signal>) -> Result<String, UserDataError> {
        if self.kubernetes.is_empty() && self.tables.is_empty() && self.settings.is_empty() {
            return Ok(String::new());
        }
        let pairs = |entries: Entries| -> Vec<Value> {
            entries
                .into_iter()
                .map(|(key, value)| json!({ "key": key, "value": value }))
                .collect()
        };
        let tables: Vec<Value> = self
            .tables
            .into_iter()
            .map(|(name, entries)| json!({ "name": name, "entries": pairs(entries) }))
            .collect();
        let settings: Vec<Value> = self
            .settings
            .into_iter()
            .map(|(path, entries)| json!({ "path": path, "entries": pairs(entries) }))
            .collect();
        render_template(
            BOTTLEROCKET_TEMPLATE,
            &json!({
                "managedEksAmi": !full,
                "kubernetes": pairs(self.kubernetes),
                "tables": tables,
                "settings": settings,
                // `null` when the group does not signal.
                "signal": signal.map_or(Value::Null, Signal::data),
            }),
        )
    }
}

/// A kubelet setting that is a table of quantities (`evictionHard`):
/// Bottlerocket reads each quantity as a string.
fn quantity_table(key: &str, value: &Value) -> Result<Entries, UserDataError> {
    let Value::Object(map) = value else {
        return Err(UserDataError::KubeletSettingType {
            key: key.to_string(),
            expected: "a map",
        });
    };
    let mut entries = Vec::with_capacity(map.len());
    for (k, v) in map {
        let text = match v {
            Value::String(s) => toml_quote(s),
            Value::Number(n) => toml_quote(&n.to_string()),
            _ => {
                return Err(UserDataError::KubeletSettingType {
                    key: format!("{key}.{k}"),
                    expected: "a string",
                });
            }
        };
        entries.push((k.clone(), text));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed kubelet fields are written by this module's own table; the
    /// settings of every other field come from the vendored list, which
    /// must name the typed ones alike.
    #[test]
    fn the_typed_kubelet_settings_are_the_vendored_ones() {
        for (field, name, _) in BOTTLEROCKET_SETTINGS {
            assert_eq!(
                kubelet_config::bottlerocket_key(field).map(|s| s.key()),
                Some(*name),
                "{field}"
            );
        }
    }

    #[test]
    fn the_loader_refuses_user_settings_at_every_kubelet_setting_eksynth_writes() {
        for (_, name, _) in BOTTLEROCKET_SETTINGS {
            assert!(
                crate::blueprint::reserved_bottlerocket_setting(&["kubernetes", name]).is_some(),
                "settings.kubernetes.{name}"
            );
        }
        for name in [
            "cluster-name",
            "api-server",
            "cluster-certificate",
            "cluster-dns-ip",
            "max-pods",
            "node-labels",
            "node-taints",
        ] {
            assert!(
                crate::blueprint::reserved_bottlerocket_setting(&["kubernetes", name]).is_some(),
                "settings.kubernetes.{name}"
            );
        }
        assert!(crate::blueprint::reserved_bottlerocket_setting(&["cloudformation"]).is_some());
        assert!(
            crate::blueprint::reserved_bottlerocket_setting(&[
                "bootstrap-commands",
                INSTANCE_STORE_COMMAND
            ])
            .is_some()
        );
    }
}
