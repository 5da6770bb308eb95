//! Bottlerocket settings that give up the host's protections: a host
//! container with root access to the host (`superpowered`, which the admin
//! container is unless told otherwise), and kernel lockdown turned off.
//! The settings reference of the Bottlerocket documentation
//! (bottlerocket.dev, `settings.host-containers` and `settings.kernel`).

use super::hit::{Hit, get};
use crate::syntax::{Node, Value};

const SUPERPOWERED: &str = "W5025";
const NO_LOCKDOWN: &str = "W5026";

const SUPERPOWERED_HELP: &str = "reach nodes through the control container (SSM) and enable the admin container only while debugging a node; a host container of your own can run with `superpowered: false`";

/// The hits of a group's `bottlerocket.settings` mapping, each with its
/// path below `settings`.
pub(super) fn settings(settings: &Node) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (name, container) in get(settings, &["host-containers"])
        .and_then(Node::as_map)
        .unwrap_or_default()
    {
        let name = &name.name;
        let superpowered = get(container, &["superpowered"]);
        let enabled = get(container, &["enabled"]);
        if let Some(flag) = superpowered.filter(|s| matches!(s.value, Value::Bool(true))) {
            hits.push(
                Hit::new(
                    SUPERPOWERED,
                    flag,
                    format!("`host-containers.{name}.superpowered: true` gives the host container root access to the node"),
                    SUPERPOWERED_HELP,
                )
                .under("superpowered")
                .under(name)
                .under("host-containers"),
            );
        } else if name == "admin"
            && superpowered.is_none()
            && let Some(flag) = enabled.filter(|e| matches!(e.value, Value::Bool(true)))
        {
            hits.push(
                Hit::new(
                    SUPERPOWERED,
                    flag,
                    "`host-containers.admin.enabled: true` runs the admin container on every node, superpowered (root access to the node) as Bottlerocket makes it".into(),
                    SUPERPOWERED_HELP,
                )
                .under("enabled")
                .under(name)
                .under("host-containers"),
            );
        }
    }
    if let Some(lockdown) = get(settings, &["kernel", "lockdown"])
        && lockdown
            .as_str()
            .is_some_and(|mode| mode.eq_ignore_ascii_case("none"))
    {
        hits.push(
            Hit::new(
                NO_LOCKDOWN,
                lockdown,
                "`kernel.lockdown: none` lets root on the node change the running kernel (load unsigned modules, write kernel memory)".into(),
                "leave `integrity` (Bottlerocket's default), or choose `confidentiality`",
            )
            .under("lockdown")
            .under("kernel"),
        );
    }
    hits
}
