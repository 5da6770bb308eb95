//! The kubelet's security settings, as `KubeletConfiguration` fields (a
//! group's `kubelet`, `nodeConfig.kubelet.config`) or as command-line
//! flags (`nodeConfig.kubelet.flags`, AL2's `bootstrapArguments`): anonymous
//! requests, webhook authentication, `AlwaysAllow` authorization, the
//! read-only port and `protectKernelDefaults`. The EKS AMIs ship the safe
//! value of each; these are the ways a blueprint turns one off.

use super::hit::{Hit, get, text};
use crate::syntax::{Node, Value};

const ANONYMOUS: &str = "W5020";
const NO_WEBHOOK: &str = "W5021";
const ALWAYS_ALLOW: &str = "W5022";
const READ_ONLY_PORT: &str = "W5023";
const KERNEL_DEFAULTS: &str = "W5024";

const ANONYMOUS_HELP: &str = "leave anonymous requests off (the EKS AMIs' setting): the API server and monitoring authenticate with certificates or tokens";
const NO_WEBHOOK_HELP: &str = "leave webhook authentication on (the EKS AMIs' setting), so that the kubelet checks bearer tokens with the API server";
const ALWAYS_ALLOW_HELP: &str = "use `Webhook` (the EKS AMIs' setting): the kubelet then asks the API server whether each caller may do what it asks";
const READ_ONLY_PORT_HELP: &str = "leave it at 0, closed (the EKS AMIs' setting); metrics are served on the authenticated port 10250";
const KERNEL_DEFAULTS_HELP: &str = "leave it `true` (the EKS AMIs' setting, and the CIS Kubernetes Benchmark's): tune the kernel in `preBootstrapCommands` if a workload needs it";

/// The hits of a `KubeletConfiguration` mapping, each with its path.
pub(super) fn config(node: &Node) -> Vec<Hit> {
    node.as_map()
        .unwrap_or_default()
        .iter()
        .flat_map(|(key, value)| field(&key.name, value))
        .collect()
}

/// The hits of one top-level `KubeletConfiguration` field.
pub(super) fn field(name: &str, value: &Node) -> Vec<Hit> {
    let mut hits = Vec::new();
    match name {
        "authentication" => {
            if let Some(enabled) = get(value, &["anonymous", "enabled"])
                && matches!(enabled.value, Value::Bool(true))
            {
                hits.push(
                    Hit::new(ANONYMOUS, enabled, "`authentication.anonymous.enabled: true`: the kubelet's API (port 10250) answers requests from anyone who reaches the node, unauthenticated".into(), ANONYMOUS_HELP)
                        .under("enabled").under("anonymous"),
                );
            }
            if let Some(enabled) = get(value, &["webhook", "enabled"])
                && matches!(enabled.value, Value::Bool(false))
            {
                hits.push(
                    Hit::new(NO_WEBHOOK, enabled, "`authentication.webhook.enabled: false`: the kubelet no longer authenticates bearer tokens with the API server".into(), NO_WEBHOOK_HELP)
                        .under("enabled").under("webhook"),
                );
            }
        }
        "authorization" => {
            if let Some(mode) = get(value, &["mode"])
                && mode.as_str().is_some_and(is_always_allow)
            {
                hits.push(always_allow(mode, "`authorization.mode: AlwaysAllow`").under("mode"));
            }
        }
        "readOnlyPort" => {
            if let Some(port) = port(value) {
                hits.push(read_only_port(value, &format!("`readOnlyPort: {port}`")));
            }
        }
        "protectKernelDefaults" if matches!(value.value, Value::Bool(false)) => {
            hits.push(kernel_defaults(value, "`protectKernelDefaults: false`"));
        }
        _ => {}
    }
    hits.into_iter().map(|hit| hit.under(name)).collect()
}

/// The hits of kubelet flags written in `items`, strings of one or more
/// arguments each (a flag's value may be the next argument, in the next
/// item). The arguments are the words a shell makes of the text, each
/// split again at spaces, so that the flags inside
/// `--kubelet-extra-args '...'` are read too. Flag names are read as the
/// kubelet reads them: `_` for `-`, and a boolean flag alone is `true`.
pub(super) fn flags(items: &[Node]) -> Vec<Hit> {
    let arguments: Vec<(String, &Node, &str, usize)> = items
        .iter()
        .filter_map(|item| Some((text(item)?, item)))
        .flat_map(|(text, item)| {
            words(text).into_iter().flat_map(move |(word, start)| {
                word.split_whitespace()
                    .map(|argument| {
                        let within = argument.as_ptr() as usize - word.as_ptr() as usize;
                        (argument.to_string(), item, text, start + within)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut hits = Vec::new();
    for (index, (argument, item, text, offset)) in arguments.iter().enumerate() {
        let Some(flag) = argument.strip_prefix("--") else {
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name.replace('_', "-"), Some(value)),
            None => (flag.replace('_', "-"), None),
        };
        // A flag that takes a value reads the next argument when it has
        // none of its own; a boolean flag never does.
        let next = || {
            inline.or_else(|| {
                arguments
                    .get(index + 1)
                    .map(|(next, ..)| next.as_str())
                    .filter(|next| !next.starts_with('-'))
            })
        };
        let boolean = || inline.map_or(Some(true), parse_bool);
        let written = format!("`{argument}`");
        // The flag and its value, as written.
        let with_value = |value: &str| match inline {
            Some(_) => written.clone(),
            None => format!("`{argument} {value}`"),
        };
        let found = match name.as_str() {
            "anonymous-auth" if boolean() == Some(true) => Some(Hit::new(
                ANONYMOUS,
                item,
                format!(
                    "{written}: the kubelet's API (port 10250) answers requests from anyone who reaches the node, unauthenticated"
                ),
                ANONYMOUS_HELP,
            )),
            "authentication-token-webhook" if boolean() == Some(false) => Some(Hit::new(
                NO_WEBHOOK,
                item,
                format!(
                    "{written}: the kubelet no longer authenticates bearer tokens with the API server"
                ),
                NO_WEBHOOK_HELP,
            )),
            "authorization-mode" => next()
                .filter(|mode| is_always_allow(mode))
                .map(|mode| always_allow(item, &with_value(mode))),
            "read-only-port" => next()
                .filter(|port| port.parse::<u32>().is_ok_and(|p| p != 0))
                .map(|port| read_only_port(item, &with_value(port))),
            "protect-kernel-defaults" if boolean() == Some(false) => {
                Some(kernel_defaults(item, &written))
            }
            _ => None,
        };
        hits.extend(found.map(|hit| hit.at(text, *offset)));
    }
    hits
}

fn always_allow(node: &Node, written: &str) -> Hit {
    Hit::new(
        ALWAYS_ALLOW,
        node,
        format!(
            "{written}: the kubelet lets every caller it admits run commands in pods, read their logs and list them"
        ),
        ALWAYS_ALLOW_HELP,
    )
}

fn read_only_port(node: &Node, written: &str) -> Hit {
    Hit::new(
        READ_ONLY_PORT,
        node,
        format!(
            "{written} opens the kubelet's read-only port, which serves pod specifications and metrics without authentication"
        ),
        READ_ONLY_PORT_HELP,
    )
}

fn kernel_defaults(node: &Node, written: &str) -> Hit {
    Hit::new(
        KERNEL_DEFAULTS,
        node,
        format!(
            "{written}: the kubelet changes kernel settings that differ from its own defaults instead of refusing to start"
        ),
        KERNEL_DEFAULTS_HELP,
    )
}

/// The words of `text` as a shell splits it, each with the byte where it
/// starts: quotes group what they hold and are dropped, backslashes
/// (escapes, line continuations) are dropped.
fn words(text: &str) -> Vec<(String, usize)> {
    let mut words = Vec::new();
    let mut current: Option<(String, usize)> = None;
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices() {
        match quote {
            Some(open) if c == open => quote = None,
            Some(_) => current.get_or_insert_with(|| (String::new(), at)).0.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                current.get_or_insert_with(|| (String::new(), at));
            }
            None if c.is_whitespace() => words.extend(current.take()),
            None if c == '\\' => {}
            None => current.get_or_insert_with(|| (String::new(), at)).0.push(c),
        }
    }
    words.extend(current);
    words
}

/// `AlwaysAllow`, the kubelet's authorization mode that allows everything
/// (it also takes a comma-separated list of modes).
fn is_always_allow(mode: &str) -> bool {
    mode.split(',').any(|m| m.trim() == "AlwaysAllow")
}

/// A port other than 0 (closed), written as a number or a string.
fn port(node: &Node) -> Option<i64> {
    let port = match &node.value {
        Value::Int(port) => *port,
        Value::String(text) => text.parse().ok()?,
        _ => return None,
    };
    (port != 0).then_some(port)
}

/// A boolean as Go's `strconv.ParseBool` reads it, which the kubelet's
/// flags use.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_are_split_as_a_shell_splits_them() {
        let text = "--kubelet-extra-args '--a=1 --b=2' --c=\"x y\" \\\n  --d";
        let found: Vec<(String, usize)> = words(text);
        let expected = [
            ("--kubelet-extra-args", 0),
            ("--a=1 --b=2", 21),
            ("--c=x y", 35),
            ("--d", 49),
        ];
        assert_eq!(found.len(), expected.len(), "{found:?}");
        for ((word, at), (want, want_at)) in found.iter().zip(expected) {
            assert_eq!((word.as_str(), *at), (want, want_at));
        }
    }
}
