//! The user-data hatches compose like every other field: a base's
//! `defaults`, the blueprint's own `defaults`, the group and `--set`
//! overrides. Bottlerocket settings and `nodeConfig` merge table by table,
//! `kubelet` key by key; the lists
//! (`postBootstrapCommands`, `userDataParts`) are replaced whole.

use eksynth::blueprint::{Blueprint, NodeGroup, PartType, load_with};
use eksynth::source::SourceFile;
use serde_json::json;

fn load(overrides: &[(&str, &str)]) -> Blueprint {
    let path = "tests/hatches/prod.yaml";
    let text = std::fs::read_to_string(path).expect("the blueprint is readable");
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match load_with(&SourceFile::new(path, text), &overrides) {
        Ok(loaded) => loaded.blueprint,
        Err(diagnostics) => {
            let rendered: Vec<String> = diagnostics.iter().map(|d| d.render()).collect();
            panic!("{}", rendered.join("\n"));
        }
    }
}

fn group<'a>(blueprint: &'a Blueprint, name: &str) -> &'a NodeGroup {
    blueprint
        .node_groups
        .iter()
        .find(|g| g.name.value == name)
        .expect("the group")
}

#[test]
fn bottlerocket_settings_merge_table_by_table_through_extends_defaults_and_set() {
    let blueprint = load(&[
        (
            "nodeGroups.0.bottlerocket.settings.host-containers.admin.enabled",
            "false",
        ),
        ("nodeGroups.0.bottlerocket.settings.motd", "hello"),
    ]);
    let settings = serde_json::Value::Object(group(&blueprint, "br").bottlerocket_settings.clone());
    // The base's admin container, turned off by `--set`; the base's sysctl
    // and the blueprint's own side by side; the `--set` motd.
    assert_eq!(
        settings,
        json!({
            "host-containers": {"admin": {"enabled": false}},
            "kernel": {"sysctl": {"vm.max_map_count": "262144", "net.core.somaxconn": "4096"}},
            "motd": "hello",
        })
    );
    // In blueprint order: the base's tables first.
    let keys: Vec<&String> = group(&blueprint, "br")
        .bottlerocket_settings
        .keys()
        .collect();
    assert_eq!(keys, ["host-containers", "kernel", "motd"]);
}

#[test]
fn defaults_bottlerocket_settings_leave_other_families_alone() {
    let blueprint = load(&[]);
    assert!(
        group(&blueprint, "general")
            .bottlerocket_settings
            .is_empty()
    );
}

#[test]
fn hatch_lists_are_replaced_whole_by_set() {
    let blueprint = load(&[]);
    let general = group(&blueprint, "general");
    assert_eq!(general.post_bootstrap_commands, ["echo base"]);
    assert_eq!(general.user_data_parts.len(), 2);

    let blueprint = load(&[
        ("nodeGroups.1.postBootstrapCommands", "[echo one, echo two]"),
        (
            "nodeGroups.1.userDataParts",
            "[{contentType: text/cloud-boothook, content: \"#!/bin/sh\\necho set\\n\"}]",
        ),
    ]);
    let general = group(&blueprint, "general");
    assert_eq!(general.post_bootstrap_commands, ["echo one", "echo two"]);
    assert_eq!(general.user_data_parts.len(), 1);
    assert_eq!(
        general.user_data_parts[0].content_type,
        PartType::CloudBoothook
    );
    assert_eq!(general.user_data_parts[0].content, "#!/bin/sh\necho set\n");
}

#[test]
fn kubelet_fields_and_node_config_merge_through_extends_defaults_and_set() {
    let blueprint = load(&[
        ("nodeGroups.1.kubelet.shutdownGracePeriod", "45s"),
        (
            "nodeGroups.1.nodeConfig.instance.localStorage.strategy",
            "RAID0",
        ),
    ]);
    let general = group(&blueprint, "general");
    // The base's defaults, the group's own field and `--set`, in that order.
    let kubelet: Vec<&str> = general
        .kubelet_config
        .iter()
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(
        kubelet,
        [
            "evictionSoft",
            "evictionSoftGracePeriod",
            "featureGates",
            "shutdownGracePeriod"
        ]
    );
    // The group's containerd configuration and the `--set` local storage,
    // side by side in one fragment.
    let node_config = general.node_config.as_ref().expect("a nodeConfig");
    assert_eq!(
        node_config["instance"],
        json!({"localStorage": {"strategy": "RAID0"}})
    );
    assert!(
        node_config["containerd"]["config"]
            .as_str()
            .is_some_and(|c| c.contains("discard_unpacked_layers"))
    );
    // The Bottlerocket group takes the base's kubelet defaults too.
    let br: Vec<&str> = group(&blueprint, "br")
        .kubelet_config
        .iter()
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(br, ["evictionSoft", "evictionSoftGracePeriod"]);
}
