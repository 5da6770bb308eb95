//! Amazon Linux 2023: a nodeadm `NodeConfig` and a shell part, in MIME.

use serde_json::{Value, json};

use super::kubelet::Prepared;
use super::mime::{NODECONFIG_CONTENT_TYPE, Part, SHELL_CONTENT_TYPE, extra_parts, mime};
use super::shell::{has_shell_steps, shell_data};
use super::templates::{AL2023_TEMPLATE, NODECONFIG_TEMPLATE, render_template};
use super::{Field, Mode, UserDataError, UserDataInput, refuse_fields};

/// The user's `nodeConfig` with the instance store's strategy, when the
/// group assembles it: nodeadm's `instance.localStorage.strategy: RAID0`
/// (the loader made sure the user's fragment says nothing else there).
fn with_instance_store(input: &UserDataInput) -> Option<Value> {
    if !input.instance_store_raid0 {
        return input.node_config.clone();
    }
    let mut config = input.node_config.clone().unwrap_or_else(|| json!({}));
    let slot = config
        .as_object_mut()
        .map(|spec| spec.entry("instance").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
        .map(|instance| instance.entry("localStorage").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut);
    if let Some(local_storage) = slot {
        local_storage.insert("strategy".into(), json!("RAID0"));
    }
    Some(config)
}

/// The NodeConfig's values; `None` when it would say nothing (only possible
/// without the cluster section, for a managed group on an EKS AMI). The
/// user's `nodeConfig` joins the generated values: its `kubelet.config`
/// fields and `kubelet.flags` after eksynth's, its other sections as given.
fn nodeconfig_data(input: &UserDataInput, prepared: &Prepared) -> Option<Value> {
    let mut config = Vec::new();
    if let Some(max_pods) = prepared.max_pods {
        config.push(json!({ "key": "maxPods", "value": max_pods }));
    }
    // Without `clusterDNS` nodeadm derives the DNS IP from `cluster.cidr`
    // itself; with it, the drop-in nodeadm writes for `kubelet.config`
    // replaces that derived list (also on a managed group's EKS AMI).
    if !input.cluster_dns.is_empty() {
        config.push(json!({ "key": "clusterDNS", "value": input.cluster_dns }));
    }
    for (key, value) in &prepared.kubelet {
        config.push(json!({ "key": key, "value": value }));
    }
    let mut flags: Vec<Value> = [&prepared.labels_flag, &prepared.taints_flag]
        .into_iter()
        .flatten()
        .map(|f| json!(f))
        .collect();
    let node_config = with_instance_store(input);
    let empty = serde_json::Map::new();
    let user = node_config
        .as_ref()
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let entries = |map: Option<&Value>, skip: &[&str]| -> Vec<Value> {
        map.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| json!({ "key": k, "value": v }))
            .collect()
    };
    let user_kubelet = user.get("kubelet");
    for entry in entries(user_kubelet.and_then(|k| k.get("config")), &[]) {
        if !config.iter().any(|c| c["key"] == entry["key"]) {
            config.push(entry);
        }
    }
    if let Some(Value::Array(more)) = user_kubelet.and_then(|k| k.get("flags")) {
        for flag in more {
            if !flags.contains(flag) {
                flags.push(flag.clone());
            }
        }
    }
    let kubelet_extra = entries(user_kubelet, &["config", "flags"]);
    let cluster_extra = entries(user.get("cluster"), &[]);
    let extra = entries(node_config.as_ref(), &["cluster", "kubelet"]);
    let kubelet_present = !config.is_empty() || !flags.is_empty() || !kubelet_extra.is_empty();
    let generated = input.mode != Mode::ManagedEksAmi;
    if !generated && !kubelet_present && cluster_extra.is_empty() && extra.is_empty() {
        return None;
    }
    // On an EKS AMI in a managed group EKS adds the cluster section in a
    // NodeConfig of its own.
    let cluster = if generated || !cluster_extra.is_empty() {
        json!({
            "generated": generated,
            "name": input.cluster_name,
            "apiServerEndpoint": input.api_server_endpoint,
            "certificateAuthority": input.certificate_authority,
            "cidr": input.service_ipv6_cidr.as_ref().or(input.service_ipv4_cidr.as_ref()),
            "extra": cluster_extra,
        })
    } else {
        Value::Null
    };
    Some(json!({
        "cluster": cluster,
        "kubelet": {
            "present": kubelet_present,
            "config": config,
            "flags": flags,
            "extra": kubelet_extra,
        },
        "extra": extra,
    }))
}

pub(super) fn render(input: &UserDataInput, prepared: &Prepared) -> Result<String, UserDataError> {
    refuse_fields(
        input,
        "AL2023 (nodeadm)",
        &[Field::BootstrapArguments, Field::BottlerocketSettings],
    )?;
    let mut parts = Vec::new();
    if let Some(data) = nodeconfig_data(input, prepared) {
        parts.push(Part::new(
            NODECONFIG_CONTENT_TYPE,
            render_template(NODECONFIG_TEMPLATE, &data)?,
        ));
    }
    parts.extend(extra_parts(input));
    // Without a signal there is no need for a script that does nothing.
    if input.signal.is_some() || has_shell_steps(input) {
        let data = shell_data(input)?;
        parts.push(Part::new(
            SHELL_CONTENT_TYPE,
            render_template(AL2023_TEMPLATE, &Value::Object(data))?,
        ));
    }
    if parts.is_empty() {
        return Ok(String::new());
    }
    mime(parts)
}
