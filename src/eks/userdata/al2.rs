//! Amazon Linux 2 and Canonical's Ubuntu images: one shell part around
//! `/etc/eks/bootstrap.sh`, in MIME. Canonical's script takes AL2's flags
//! (all but `--local-disks`, which the loader refuses on Ubuntu); kubelet is
//! the `kubelet-eks` snap there, so settings bootstrap.sh has no flag for are
//! merged after it and the snap restarted.

use serde_json::{Value, json};

use super::kubelet::Prepared;
use super::mime::{Part, SHELL_CONTENT_TYPE, extra_parts, mime};
use super::quote::to_json;
use super::shell::{has_shell_steps, shell_data};
use super::templates::{AL2_JOIN_TEMPLATE, AL2_TEMPLATE, render_template};
use super::{
    Bootstrap, Field, Mode, UserDataError, UserDataInput, bootstrap_arguments, refuse_fields,
    unique_marker, unsupported,
};

/// Kubelet settings that AL2's bootstrap passes as flags rather than through
/// kubelet-config.json.
const AL2_FLAG_SETTINGS: &[(&str, &str)] = &[
    ("imageGCHighThresholdPercent", "--image-gc-high-threshold"),
    ("imageGCLowThresholdPercent", "--image-gc-low-threshold"),
];

fn al2_bootstrap_data(input: &UserDataInput, prepared: &Prepared) -> Result<Value, UserDataError> {
    // On an EKS AMI in a managed group EKS writes the bootstrap.sh call, so
    // every kubelet setting goes through kubelet-config.json.
    let run = input.mode != Mode::ManagedEksAmi;
    let mut args = prepared.kubelet_flags();
    let mut config = serde_json::Map::new();
    for (key, value) in &prepared.kubelet {
        match AL2_FLAG_SETTINGS.iter().find(|(k, _)| k == key) {
            Some((_, flag)) if run => {
                let text = match value {
                    Value::Number(n) => n.to_string(),
                    // A placeholder for a template value.
                    Value::String(s) => s.clone(),
                    _ => {
                        return Err(UserDataError::KubeletSettingType {
                            key: (*key).to_string(),
                            expected: "a number",
                        });
                    }
                };
                args.push(format!("{flag}={text}"));
            }
            _ => {
                config.insert((*key).to_string(), (*value).clone());
            }
        }
    }
    // bootstrap.sh writes `--dns-cluster-ip` (comma-separated) into
    // kubelet-config.json; on a managed group's EKS AMI, whose bootstrap.sh
    // call is EKS's, the addresses are merged into that file after it.
    if !run && !input.cluster_dns.is_empty() {
        config.insert("clusterDNS".into(), json!(input.cluster_dns));
    }
    let dns_cluster_ip = if input.cluster_dns.is_empty() {
        input.dns_cluster_ip.clone()
    } else {
        input.cluster_dns.join(",")
    };
    let config_json = if config.is_empty() {
        String::new()
    } else {
        to_json(&Value::Object(config))
    };
    Ok(json!({
        "run": run,
        "clusterName": input.cluster_name,
        "certificateAuthority": input.certificate_authority,
        "apiServerEndpoint": input.api_server_endpoint,
        "dnsClusterIp": dns_cluster_ip,
        "serviceIpv6Cidr": input.service_ipv6_cidr,
        "maxPodsFlag": prepared.max_pods.is_some(),
        "kubeletExtraArgs": args.join(" "),
        "kubeletConfigJson": config_json,
        "extraArguments": bootstrap_arguments(input),
        "localDisks": run && input.instance_store_raid0,
    }))
}

pub(super) fn render(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    let ubuntu = input.bootstrap == Bootstrap::Ubuntu;
    refuse_fields(
        input,
        if ubuntu { "Ubuntu" } else { "AL2" },
        &[Field::BottlerocketSettings],
    )?;
    if ubuntu {
        // The held join and the disk assembly are written for Amazon Linux.
        refuse_fields(input, "Ubuntu", &[Field::WarmPool, Field::InstanceStore])?;
    }
    let mut parts: Vec<Part> = extra_parts(input).collect();
    if input.mode == Mode::ManagedEksAmi {
        const TARGET: &str =
            "a managed node group on the EKS AL2 AMI (EKS writes the bootstrap.sh call)";
        refuse_fields(input, TARGET, &[Field::BootstrapArguments])?;
        if prepared.max_pods.is_some() {
            // bootstrap.sh would overwrite it with EKS's own value.
            return Err(unsupported("maxPods", TARGET));
        }
        if !has_shell_steps(input)
            && prepared.kubelet.is_empty()
            && input.cluster_dns.is_empty()
            && !input.instance_store_raid0
        {
            if parts.is_empty() {
                return Ok(String::new());
            }
            return mime(parts);
        }
    }
    if bootstrap_arguments(input).is_some_and(|a| a.contains(['\n', '\r'])) {
        return Err(unsupported(
            "bootstrap.sh arguments with a line break",
            "AL2 (they continue the bootstrap.sh command line)",
        ));
    }
    let mut data = shell_data(input)?;
    // On an EKS AMI in a managed group EKS writes the bootstrap.sh call, so
    // the disks are assembled the way its `--local-disks` would, before it.
    data.insert(
        "setupLocalDisks".into(),
        json!(input.instance_store_raid0 && input.mode == Mode::ManagedEksAmi),
    );
    data.insert("bootstrap".into(), al2_bootstrap_data(input, prepared)?);
    data.insert("ubuntu".into(), json!(ubuntu));
    if input.warm_pool {
        // The join runs from a script of its own once the instance is in
        // service: it is written into the user data under a heredoc marker
        // that no line of it uses.
        let join = render_template(AL2_JOIN_TEMPLATE, &Value::Object(data.clone()))?;
        let eof = unique_marker("EKSYNTH_JOIN_EOF", |m| join.lines().any(|l| l == m));
        data.insert("join".into(), json!({ "script": join, "eof": eof }));
    }
    let script = render_template(AL2_TEMPLATE, &Value::Object(data))?;
    parts.push(Part::new(SHELL_CONTENT_TYPE, script));
    mime(parts)
}
