//! Windows: a `<powershell>` script around `Start-EKSBootstrap.ps1`.

use serde_json::{Value, json};

use super::kubelet::{Prepared, refuse};
use super::templates::{WINDOWS_TEMPLATE, render_template};
use super::{Field, Mode, Signal, UserDataError, UserDataInput, refuse_fields, unsupported};
use crate::upstream::kubelet_config;

/// How a kubelet setting becomes a flag for `-KubeletExtraArgs`.
#[derive(Clone, Copy)]
enum FlagKind {
    Scalar,
    /// A map, as `key<separator>value` pairs joined by commas.
    Map(char),
}

/// Kubelet settings as flags: `Start-EKSBootstrap.ps1` writes the kubelet
/// configuration file itself, so flags are the only way in.
const WINDOWS_FLAGS: &[(&str, &str, FlagKind)] = &[
    (
        "imageGCHighThresholdPercent",
        "--image-gc-high-threshold",
        FlagKind::Scalar,
    ),
    (
        "imageGCLowThresholdPercent",
        "--image-gc-low-threshold",
        FlagKind::Scalar,
    ),
    ("podPidsLimit", "--pod-max-pids", FlagKind::Scalar),
    (
        "containerLogMaxFiles",
        "--container-log-max-files",
        FlagKind::Scalar,
    ),
    (
        "containerLogMaxSize",
        "--container-log-max-size",
        FlagKind::Scalar,
    ),
    ("cpuManagerPolicy", "--cpu-manager-policy", FlagKind::Scalar),
    (
        "serializeImagePulls",
        "--serialize-image-pulls",
        FlagKind::Scalar,
    ),
    ("evictionHard", "--eviction-hard", FlagKind::Map('<')),
    ("kubeReserved", "--kube-reserved", FlagKind::Map('=')),
    ("systemReserved", "--system-reserved", FlagKind::Map('=')),
];

fn flag_scalar(key: &str, value: &Value) -> Result<String, UserDataError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(UserDataError::KubeletSettingType {
            key: key.to_string(),
            expected: "a string, number or boolean",
        }),
    }
}

fn windows_kubelet_args(prepared: &Prepared) -> Result<String, UserDataError> {
    let mut args = prepared.kubelet_flags();
    for (key, value) in &prepared.kubelet {
        let Some((_, flag, kind)) = WINDOWS_FLAGS.iter().find(|(k, _, _)| k == key) else {
            let none = || {
                unsupported(
                    format!("kubelet setting `{key}`"),
                    "Windows (no kubelet flag is known for it)",
                )
            };
            for (flag, value) in kubelet_config::windows_flags(key, value).map_err(|_| none())? {
                args.extend(flag.args(value).ok_or_else(none)?);
            }
            continue;
        };
        let text = match kind {
            FlagKind::Scalar => flag_scalar(key, value)?,
            FlagKind::Map(separator) => {
                let Value::Object(map) = value else {
                    return Err(UserDataError::KubeletSettingType {
                        key: (*key).to_string(),
                        expected: "a map",
                    });
                };
                let mut pairs = Vec::with_capacity(map.len());
                for (k, v) in map {
                    let v = flag_scalar(&format!("{key}.{k}"), v)?;
                    refuse("kubelet map key", k, &[',', '=', *separator])?;
                    refuse("kubelet map value", &v, &[',', '=', *separator])?;
                    pairs.push(format!("{k}{separator}{v}"));
                }
                if pairs.is_empty() {
                    continue;
                }
                pairs.join(",")
            }
        };
        args.push(format!("{flag}={text}"));
    }
    // The EKS script splits its -KubeletExtraArgs at spaces.
    for arg in &args {
        if let Some(separator) = arg.chars().find(|c| c.is_whitespace()) {
            return Err(UserDataError::Separator {
                what: "kubelet argument",
                value: arg.clone(),
                separator,
            });
        }
    }
    Ok(args.join(" "))
}

pub(super) fn render(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "Windows",
        &[
            Field::WarmPool,
            Field::EfsMounts,
            Field::BlockPodImds,
            Field::BootstrapArguments,
            Field::UserDataParts,
            Field::BottlerocketSettings,
            Field::InstanceStore,
        ],
    )?;
    let post_bootstrap = input
        .signal
        .as_ref()
        .map_or(&[][..], |s| s.post_bootstrap_commands.as_slice());
    // EC2Launch runs the text up to the first closing tag.
    if let Some(command) = input
        .pre_bootstrap_commands
        .iter()
        .chain(post_bootstrap)
        .find(|c| c.to_ascii_lowercase().contains("</powershell"))
    {
        return Err(unsupported(
            format!("the command `{command}`"),
            "Windows (it contains `</powershell`, which would end the user data)",
        ));
    }
    let bootstrap = if input.mode == Mode::ManagedEksAmi {
        const TARGET: &str = "a managed node group on the EKS Windows AMI (EKS runs the bootstrap)";
        if prepared.max_pods.is_some() {
            return Err(unsupported("maxPods", TARGET));
        }
        if let Some((key, _)) = prepared.kubelet.first() {
            return Err(unsupported(format!("kubelet setting `{key}`"), TARGET));
        }
        if !input.cluster_dns.is_empty() {
            return Err(unsupported("clusterDNS", TARGET));
        }
        if input.pre_bootstrap_commands.is_empty() {
            return Ok(String::new());
        }
        Value::Null
    } else {
        json!({
            "clusterName": input.cluster_name,
            "apiServerEndpoint": input.api_server_endpoint,
            "certificateAuthority": input.certificate_authority,
            "serviceCidr": input.service_ipv4_cidr,
            "dnsClusterIp": windows_dns_cluster_ip(input)?,
            "kubeletExtraArgs": windows_kubelet_args(prepared)?,
        })
    };
    let signal = input.signal.as_ref().map_or(Value::Null, Signal::data);
    render_template(
        WINDOWS_TEMPLATE,
        &json!({
            "preBootstrapCommands": input.pre_bootstrap_commands,
            "commands": !input.pre_bootstrap_commands.is_empty() || !post_bootstrap.is_empty(),
            "bootstrap": bootstrap,
            "signal": signal,
        }),
    )
}

/// `-DNSClusterIP`: the group's one `clusterDNS` address, or the DNS IP of
/// the service CIDR. The script takes a single address (the loader refuses
/// several).
fn windows_dns_cluster_ip(input: &UserDataInput) -> Result<&str, UserDataError> {
    match input.cluster_dns.as_slice() {
        [] => Ok(&input.dns_cluster_ip),
        [one] => Ok(one),
        _ => Err(unsupported(
            "several `clusterDNS` addresses",
            "Windows (`-DNSClusterIP` takes one)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed kubelet fields are written by this module's own table; the
    /// flags of every other field come from the vendored list, which must
    /// name the typed ones alike.
    #[test]
    fn the_typed_kubelet_flags_are_the_vendored_ones() {
        for (field, flag, _) in WINDOWS_FLAGS {
            assert_eq!(
                kubelet_config::windows_flag(field).map(|f| f.flag.as_str()),
                Some(*flag),
                "{field}"
            );
        }
    }
}
