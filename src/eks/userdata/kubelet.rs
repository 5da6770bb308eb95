//! What every family shares: kubelet settings checked (each once, `maxPods`
//! in one place), and labels and taints as kubelet flags.

use serde_json::Value;

use super::{Mode, Taint, UserDataError, UserDataInput};

pub(super) const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// The input checked and reduced to what every family needs.
pub(super) struct Prepared<'a> {
    pub(super) max_pods: Option<u64>,
    /// Kubelet settings other than `maxPods`, in blueprint order.
    pub(super) kubelet: Vec<(&'a str, &'a Value)>,
    pub(super) labels_flag: Option<String>,
    pub(super) taints_flag: Option<String>,
}

impl Prepared<'_> {
    /// The kubelet flags every bootstrap that takes flags gets: labels,
    /// taints and the pod limit.
    pub(super) fn kubelet_flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = [&self.labels_flag, &self.taints_flag]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        flags.extend(self.max_pods.map(|n| format!("--max-pods={n}")));
        flags
    }
}

pub(super) fn refuse(
    what: &'static str,
    value: &str,
    separators: &[char],
) -> Result<(), UserDataError> {
    match value.chars().find(|c| separators.contains(c)) {
        Some(separator) => Err(UserDataError::Separator {
            what,
            value: value.to_string(),
            separator,
        }),
        None => Ok(()),
    }
}

/// Whether labels and taints are rendered: a managed group sets them
/// through the EKS API instead (the one place that decides it).
pub(super) fn renders_labels(input: &UserDataInput) -> bool {
    input.mode == Mode::SelfManaged
}

pub(super) fn prepare(input: &UserDataInput) -> Result<Prepared<'_>, UserDataError> {
    let mut seen: Vec<&str> = Vec::new();
    let mut kubelet = Vec::new();
    let mut max_pods = input.max_pods.map(u64::from);
    for (key, value) in &input.kubelet_config {
        if seen.contains(&key.as_str()) {
            return Err(UserDataError::DuplicateKubeletSetting(key.clone()));
        }
        seen.push(key);
        if key == "maxPods" {
            // One place for maxPods: AL2 needs it as a flag (bootstrap.sh
            // would overwrite the config file's value), AL2023 in config.
            if input.max_pods.is_some() {
                return Err(UserDataError::DuplicateKubeletSetting(key.clone()));
            }
            let n = value
                .as_u64()
                .ok_or_else(|| UserDataError::KubeletSettingType {
                    key: key.clone(),
                    expected: "a non-negative integer",
                })?;
            max_pods = Some(n);
        } else {
            kubelet.push((key.as_str(), value));
        }
    }

    let mut labels = Vec::new();
    let mut taints = Vec::new();
    if renders_labels(input) {
        for label in &input.labels {
            refuse("label key", &label.key, &[',', '='])?;
            refuse("label value", &label.value, &[','])?;
            labels.push(format!("{}={}", label.key, label.value));
        }
        for taint in &input.taints {
            refuse("taint key", &taint.key, &[',', '=', ':'])?;
            if !TAINT_EFFECTS.contains(&taint.effect.as_str()) {
                return Err(UserDataError::TaintEffect {
                    key: taint.key.clone(),
                    effect: taint.effect.clone(),
                });
            }
            if let Some(value) = &taint.value {
                refuse("taint value", value, &[',', ':'])?;
            }
            taints.push(format!("{}{}", taint.key, taint_text(taint, "=")));
        }
    }

    Ok(Prepared {
        max_pods,
        kubelet,
        labels_flag: (!labels.is_empty()).then(|| format!("--node-labels={}", labels.join(","))),
        taints_flag: (!taints.is_empty())
            .then(|| format!("--register-with-taints={}", taints.join(","))),
    })
}

/// A taint without its key: `<prefix>value:Effect`, or `:Effect` when it
/// has no value.
pub(super) fn taint_text(taint: &Taint, prefix: &str) -> String {
    match &taint.value {
        Some(value) => format!("{prefix}{value}:{}", taint.effect),
        None => format!(":{}", taint.effect),
    }
}
