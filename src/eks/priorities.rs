//! The cluster autoscaler's priority expander: the
//! `cluster-autoscaler-priority-expander` ConfigMap whose regular
//! expressions match the Auto Scaling groups of the node groups that set
//! `clusterAutoscaler.priority`.
//!
//! The expander reads `data.priorities`, YAML mapping an integer priority
//! (higher wins) to a list of regular expressions matched against Auto
//! Scaling group names, from a ConfigMap of that name in the autoscaler's
//! namespace
//! (<https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/expander/priority/readme.md>).
//! Its Go regular expressions match anywhere in a name, so each one here
//! is anchored at both ends: `general` must not also match `general-spot`.

use crate::blueprint::{Blueprint, NodeGroup};

/// What each prioritized group's regular expression rests on.
pub struct Priorities {
    /// The ConfigMap, as YAML.
    pub config_map: String,
    /// The groups whose Auto Scaling group CloudFormation names after the
    /// stack, with that stack's name: their regex holds only if the stack
    /// is deployed under that name.
    pub stack_named: Vec<(String, String)>,
}

/// The ConfigMap, or `None` when no group sets a priority.
pub fn config_map(blueprint: &Blueprint) -> Option<Priorities> {
    let mut levels: Vec<(u32, Vec<String>)> = Vec::new();
    let mut stack_named = Vec::new();
    for group in &blueprint.node_groups {
        let Some(priority) = group.autoscaler_priority else {
            continue;
        };
        let stack = blueprint
            .stacks
            .get(group.stack)
            .map_or("", |s| s.name.as_str());
        if group.managed.is_none() && group.auto_scaling_group_name.is_none() {
            stack_named.push((group.name.value.clone(), stack.to_string()));
        }
        let pattern = pattern(group, stack);
        match levels.iter_mut().find(|(p, _)| *p == priority) {
            Some((_, patterns)) => patterns.push(pattern),
            None => levels.push((priority, vec![pattern])),
        }
    }
    if levels.is_empty() {
        return None;
    }
    // Highest first, as the expander tries them; groups in blueprint order.
    levels.sort_by_key(|level| std::cmp::Reverse(level.0));
    let mut priorities = String::new();
    for (priority, patterns) in &levels {
        priorities.push_str(&format!("    {priority}:\n"));
        for pattern in patterns {
            // Single quotes: a regex holds no `'`, and YAML then reads
            // `[`, `{` and `\` as they are.
            priorities.push_str(&format!("      - '{pattern}'\n"));
        }
    }
    let config_map = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-autoscaler-priority-expander\n  namespace: kube-system\ndata:\n  priorities: |\n{priorities}"
    );
    Some(Priorities {
        config_map,
        stack_named,
    })
}

/// The regular expression of one group's Auto Scaling group name.
fn pattern(group: &NodeGroup, stack: &str) -> String {
    match (&group.managed, &group.auto_scaling_group_name) {
        // EKS names a managed group's Auto Scaling group
        // `eks-<node group name>-<node group UUID>`.
        (Some(managed), _) => format!(
            "^eks-{}-[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}$",
            escape(&managed.nodegroup_name.value)
        ),
        (None, Some(name)) => format!("^{}$", escape(&name.value)),
        // CloudFormation names it `<stack>-<logical ID>-<random suffix>`.
        (None, None) => format!(
            "^{}-{}-[A-Za-z0-9]+$",
            escape(stack),
            escape(&super::autoscaling::logical_id(group))
        ),
    }
}

/// Escapes what RE2 would read as an operator; the names eksynth accepts
/// hold only `.` of them.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_operators_are_escaped() {
        assert_eq!(escape("a.b-c_d"), "a\\.b-c_d");
    }
}
