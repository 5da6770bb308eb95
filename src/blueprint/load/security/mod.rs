//! Insecure settings a blueprint writes: the kubelet's authentication,
//! authorization and ports, Bottlerocket's host containers and kernel
//! lockdown, node-role permissions and trust, and boot commands that turn
//! IMDSv1 back on. Each is a warning with a finding ID of its own
//! (`W5020`-`W5030`), at the value that asks for it, so that
//! `validate --strict` fails on it and a suppression accepts it with a
//! reason.
//!
//! The check reads the composed syntax tree (the bases of `extends` and
//! `--set` merged in), so each setting is reported in the file and at the
//! line where it is written: in a group, in `defaults` (unless every group
//! replaces it), or in an override's value. The lowered template is not
//! read: the kubelet's settings reach it inside user data, where their
//! origin is lost.

mod bottlerocket;
mod hit;
mod iam;
mod kubelet;
mod user_data;

use hit::{Hit, get};

use crate::blueprint::decode::Decoder;
use crate::source::Span;
use crate::syntax::{Node, Value};

/// Reports every insecure setting of the composed blueprint as a warning.
pub(super) fn check(d: &mut Decoder, root: &Node) {
    let groups: Vec<&Node> = ["nodeGroups", "managedNodeGroups"]
        .iter()
        .filter_map(|list| get(root, &[list]))
        .filter_map(Node::as_seq)
        .flatten()
        .collect();
    let mut hits = Vec::new();
    for group in &groups {
        hits.extend(group_hits(group));
    }
    if let Some(defaults) = get(root, &["defaults"]) {
        // A setting of `defaults` that every group replaces reaches no
        // node, nor do Bottlerocket settings where no group runs it.
        let family = |group: &Node| {
            get(group, &["amiFamily"])
                .or_else(|| get(defaults, &["amiFamily"]))
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        hits.extend(group_hits(defaults).into_iter().filter(|hit| {
            let path: Vec<&str> = hit.path.iter().map(String::as_str).collect();
            groups.iter().any(|group| {
                get(group, &path).is_none()
                    && (path.first() != Some(&"bottlerocket")
                        || family(group).as_deref() == Some("Bottlerocket"))
            })
        }));
    }
    for item in get(root, &["overrides"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        hits.extend(override_hits(item));
    }
    for hit in hits {
        let span = hit
            .line
            .as_ref()
            .and_then(|(index, line)| line_in_block(d, hit.span, *index, line))
            .unwrap_or(hit.span);
        let warning = d.warning(span, hit.message);
        warning.code = Some(hit.id);
        warning.help = Some(hit.help.to_string());
    }
}

/// The insecure settings of one group entry (or of `defaults`), each with
/// its path from the entry down to where `defaults` is merged: the key of
/// a `kubelet` field, a `nodeConfig` or Bottlerocket setting's own path
/// (they merge key by key), the field of a list or string (replaced whole).
fn group_hits(group: &Node) -> Vec<Hit> {
    let mut hits = Vec::new();
    if let Some(entries) = get(group, &["kubelet"]).and_then(Node::as_map) {
        for (key, value) in entries {
            hits.extend(
                kubelet::field(&key.name, value)
                    .into_iter()
                    .map(|hit| Hit {
                        path: vec![key.name.clone()],
                        ..hit
                    })
                    .map(|hit| hit.under("kubelet")),
            );
        }
    }
    if let Some(config) = get(group, &["nodeConfig", "kubelet", "config"]) {
        hits.extend(
            kubelet::config(config)
                .into_iter()
                .map(|hit| hit.under("config").under("kubelet").under("nodeConfig")),
        );
    }
    if let Some(flags) = get(group, &["nodeConfig", "kubelet", "flags"]).and_then(Node::as_seq) {
        hits.extend(kubelet::flags(flags).into_iter().map(|hit| Hit {
            path: vec!["nodeConfig".into(), "kubelet".into(), "flags".into()],
            ..hit
        }));
    }
    if let Some(arguments) = get(group, &["bootstrapArguments"]) {
        hits.extend(
            kubelet::flags(std::slice::from_ref(arguments))
                .into_iter()
                .map(|hit| Hit {
                    path: vec!["bootstrapArguments".into()],
                    ..hit
                }),
        );
    }
    if let Some(settings) = get(group, &["bottlerocket", "settings"]) {
        hits.extend(
            bottlerocket::settings(settings)
                .into_iter()
                .map(|hit| hit.under("settings").under("bottlerocket")),
        );
    }
    for field in ["extraManagedPolicies", "policyStatements"] {
        let Some(items) = get(group, &["iam", field]).and_then(Node::as_seq) else {
            continue;
        };
        for item in items {
            let found = match field {
                "extraManagedPolicies" => iam::managed_policy(item).into_iter().collect(),
                _ => iam::statement(item),
            };
            hits.extend(found.into_iter().map(|hit| Hit {
                path: vec!["iam".into(), field.into()],
                ..hit
            }));
        }
    }
    for field in ["preBootstrapCommands", "postBootstrapCommands"] {
        for command in get(group, &[field])
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            hits.extend(user_data::text(command).map(|hit| Hit {
                path: vec![field.into()],
                ..hit
            }));
        }
    }
    for part in get(group, &["userDataParts"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some(content) = get(part, &["content"]) {
            hits.extend(user_data::text(content).map(|hit| Hit {
                path: vec!["userDataParts".into()],
                ..hit
            }));
        }
    }
    hits
}

/// The insecure settings an override's value writes into a generated
/// resource, judged by where they land (the override's path, then the
/// keys inside its value): managed policy ARNs, policy statements, trust
/// policy principals and user data, whatever the resource.
fn override_hits(item: &Node) -> Vec<Hit> {
    let (Some(path), Some(value)) = (get(item, &["path"]), get(item, &["value"])) else {
        return Vec::new();
    };
    let Some(path) = path.as_str() else {
        return Vec::new();
    };
    let mut at: Vec<String> = path.split('.').map(str::to_string).collect();
    let mut hits = Vec::new();
    walk(value, &mut at, &mut hits);
    hits
}

/// Judges `node`, written at the resource path `at`, and what it holds.
fn walk(node: &Node, at: &mut Vec<String>, hits: &mut Vec<Hit>) {
    let names: Vec<&str> = at.iter().map(String::as_str).collect();
    let ends = |tail: &[&str]| names.ends_with(tail);
    let in_document = |document: &str| names.contains(&document);
    let last_is_index = names.last().is_some_and(|s| s.parse::<usize>().is_ok());
    let before_index = if last_is_index {
        &names[..names.len() - 1]
    } else {
        &names[..]
    };
    if before_index.ends_with(&["ManagedPolicyArns"]) && last_is_index {
        hits.extend(iam::managed_policy(node));
        return;
    }
    if before_index.ends_with(&["Statement"]) && node.as_map().is_some() {
        if in_document("AssumeRolePolicyDocument") {
            hits.extend(iam::trust_statement(node));
        } else {
            hits.extend(iam::statement(node));
        }
        return;
    }
    if in_document("AssumeRolePolicyDocument")
        && (ends(&["Principal"]) || ends(&["Principal", "AWS"]))
    {
        hits.extend(iam::principal(node));
        return;
    }
    if in_document("UserData") {
        hits.extend(user_data::strings(node));
        return;
    }
    match &node.value {
        Value::Map(entries) => {
            for (key, value) in entries {
                at.push(key.name.clone());
                walk(value, at, hits);
                at.pop();
            }
        }
        Value::Seq(items) => {
            for (index, item) in items.iter().enumerate() {
                at.push(index.to_string());
                walk(item, at, hits);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The span of line `index` (`line`) of a literal block scalar (`|`)
/// whose text starts at `block`: its lines are the file's, after the
/// block's indentation. `None` for the first line (the block's own span
/// starts there), and when the file's line is not the indentation and
/// `line` (a folded or quoted string, whose lines are not the file's).
fn line_in_block(d: &Decoder, block: Span, index: usize, line: &str) -> Option<Span> {
    if index == 0 || line.is_empty() {
        return None;
    }
    let file = d.files.get(block.file as usize)?;
    let at = block.line + index;
    let indent = block.column.saturating_sub(1);
    let written = file.line_text(at).trim_end_matches('\r');
    let (before, rest) = written.split_at_checked(written.char_indices().nth(indent)?.0)?;
    (before.trim().is_empty() && rest == line).then(|| Span {
        line: at,
        column: block.column,
        len: line.chars().count(),
        file: block.file,
    })
}
