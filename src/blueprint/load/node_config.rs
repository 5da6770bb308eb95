//! A node group's `nodeConfig`: a fragment of nodeadm's `NodeConfig`
//! `spec` that AL2023 nodes get merged into the one eksynth generates.
//! Checked against nodeadm's API (`upstream::node_config`), each problem located
//! at its key or value; a value eksynth generates itself (the cluster's
//! fields, `maxPods`, the `kubelet` section's settings, `instanceStore`'s
//! strategy) may not be given a different one here.

use serde_json::{Value as Json, json};

use super::node_group::GroupSpec;
use super::raw::{locate, to_json};
use crate::blueprint::AmiFamily;
use crate::blueprint::decode::Decoder;
use crate::source::Span;
use crate::upstream::kubelet_config::{self, Segment};
use crate::upstream::node_config;

/// The cluster fields of the generated `spec` (or of the one EKS adds for
/// a managed group on an EKS AMI).
const GENERATED_CLUSTER: &[&str] = &["name", "apiServerEndpoint", "certificateAuthority", "cidr"];

/// Checks the group's `nodeConfig` and returns it as JSON, or `None` when
/// it is absent or wrong (every mistake reported).
pub(super) fn check_node_config(
    d: &mut Decoder,
    spec: &GroupSpec,
    family: AmiFamily,
    is_managed: bool,
) -> Option<Json> {
    let node = spec.node_config.as_ref()?;
    let key_at = spec
        .written
        .iter()
        .find(|(f, _)| *f == "nodeConfig")
        .map_or(node.span, |(_, s)| *s);
    if family != AmiFamily::AmazonLinux2023 {
        d.error(
            key_at,
            format!(
                "`nodeConfig` is nodeadm's, which only `AmazonLinux2023` nodes run; this group is `{}`",
                family.name()
            ),
        )
        .help = Some("use `kubelet` for kubelet settings, which every family takes".into());
        return None;
    }
    let value = to_json(d, "nodeConfig", node)?;
    let problems = node_config::check(&value);
    for problem in &problems {
        let unknown = problem.message == "unknown field" || problem.message.starts_with("unknown ");
        let span = locate(node, &problem.path, unknown);
        let message = format!("`nodeConfig.{}`: {}", problem.path_text(), problem.message);
        d.error(span, message).help = problem.help.clone();
    }
    if !problems.is_empty() {
        return None;
    }
    if is_managed && value.pointer("/featureGates/InstanceIdNodeName") == Some(&Json::Bool(true)) {
        let path = [
            Segment::Key("featureGates".into()),
            Segment::Key("InstanceIdNodeName".into()),
        ];
        d.error(
            locate(node, &path, true),
            "`nodeConfig.featureGates.InstanceIdNodeName` names nodes after their instance ID, which a managed group's nodes cannot join with",
        )
        .help = Some(
            "EKS grants a managed group's role an `EC2_LINUX` access entry, whose username is the node's private DNS name; use a self-managed group (`nodeGroups`), whose role eksynth grants an `EC2` access entry".into(),
        );
        return None;
    }
    if !check_max_pods_expression(d, spec, node, &value) {
        return None;
    }
    // What eksynth generates, with stand-ins for the cluster's values: a
    // user value differs from a stand-in, so giving one is a conflict.
    let mut config = serde_json::Map::new();
    if let Some(max_pods) = &spec.max_pods {
        config.insert("maxPods".into(), json!(max_pods.value));
    }
    for (key, value) in &spec.kubelet {
        config.insert(key.value.clone(), value.clone());
    }
    let cluster: serde_json::Map<String, Json> = GENERATED_CLUSTER
        .iter()
        .map(|f| (f.to_string(), Json::String(format!("\u{0}generated {f}"))))
        .collect();
    let mut generated = json!({"cluster": cluster, "kubelet": {"config": config}});
    if spec.instance_store.is_some() {
        generated["instance"] = json!({"localStorage": {"strategy": "RAID0"}});
    }
    let (merged, conflicts) = node_config::merge(&generated, &value);
    check_kubelet_together(d, node, &config, &merged);
    for conflict in &conflicts {
        let span: Span = locate(node, &conflict.path, true);
        let path = conflict.path_text();
        let help = if path.starts_with("cluster.") {
            "eksynth writes it from the blueprint's `cluster` section; remove it here".to_string()
        } else if path.starts_with("instance.") {
            "the group's `instanceStore` sets it; set it once".to_string()
        } else if path == "kubelet.config.maxPods" {
            "the group's `maxPods` sets it; set it once".to_string()
        } else {
            format!(
                "the group's `kubelet` section sets it to {}; set it once",
                conflict.generated
            )
        };
        d.error(
            span,
            format!("`nodeConfig.{path}` conflicts with a value eksynth generates"),
        )
        .help = Some(help);
    }
    // Lists merge item by item, so a second nameserver list would not
    // conflict above: it would join the group's, which it must not.
    let dns_twice =
        spec.cluster_dns.is_some() && value.pointer("/kubelet/config/clusterDNS").is_some();
    if dns_twice {
        let path = ["kubelet", "config", "clusterDNS"].map(|k| Segment::Key(k.into()));
        d.error(
            locate(node, &path, true),
            "`nodeConfig.kubelet.config.clusterDNS` conflicts with the group's `clusterDNS`",
        )
        .help = Some("the group's `clusterDNS` sets it; set it once".into());
    }
    (conflicts.is_empty() && !dns_twice).then_some(value)
}

/// The rules between kubelet fields over the merged `kubelet.config`,
/// for what `nodeConfig` adds: a problem the `kubelet` section has alone
/// was reported at that section already.
fn check_kubelet_together(
    d: &mut Decoder,
    node: &crate::syntax::Node,
    section: &serde_json::Map<String, Json>,
    merged: &Json,
) {
    let Some(Json::Object(config)) = merged.pointer("/kubelet/config") else {
        return;
    };
    let reported = kubelet_config::check_together(section);
    for problem in kubelet_config::check_together(config) {
        if reported.contains(&problem) {
            continue;
        }
        let mut path = vec![
            Segment::Key("kubelet".into()),
            Segment::Key("config".into()),
        ];
        path.extend(problem.path.iter().cloned());
        let message = format!(
            "`nodeConfig.kubelet.config.{}`: {}",
            problem.path_text(),
            problem.message()
        );
        d.error(locate(node, &path, true), message).help = problem.help();
    }
}

/// nodeadm's `kubelet.maxPodsExpression` computes `maxPods` only when no
/// `maxPods` is set: beside the group's `maxPods` (or one in
/// `kubelet.config`) it would be silently ignored (`awslabs/amazon-eks-ami`,
/// `nodeadm/doc/api.md` and `nodeadm/doc/examples.md`). False when it is
/// such a pair, reported at the expression.
fn check_max_pods_expression(
    d: &mut Decoder,
    spec: &GroupSpec,
    node: &crate::syntax::Node,
    value: &Json,
) -> bool {
    if value.pointer("/kubelet/maxPodsExpression").is_none() {
        return true;
    }
    let set_by = if spec.max_pods.is_some() {
        "the group's `maxPods`"
    } else if value.pointer("/kubelet/config/maxPods").is_some() {
        "`nodeConfig.kubelet.config.maxPods`"
    } else {
        return true;
    };
    let path = [
        Segment::Key("kubelet".into()),
        Segment::Key("maxPodsExpression".into()),
    ];
    d.error(
        locate(node, &path, true),
        format!("`nodeConfig.kubelet.maxPodsExpression` is ignored: {set_by} is set"),
    )
    .help = Some("nodeadm takes `maxPods` over the expression; keep one of them".into());
    false
}
