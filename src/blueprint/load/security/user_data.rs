//! Boot commands that turn IMDSv1 back on: `aws ec2
//! modify-instance-metadata-options --http-tokens optional` (or Windows
//! PowerShell's `Edit-EC2InstanceMetadataOption -HttpToken optional`) run
//! from the user data undoes the launch template's `HttpTokens: required`
//! on the running instance, where no review of the template sees it.

use super::hit::Hit;
use crate::syntax::{Node, Value};

const IMDSV1: &str = "W5030";

/// The command, and its option and the value that allows IMDSv1 in
/// lowercase (PowerShell reads names in any case).
const REENABLING: &[(&str, &str, &str)] = &[
    (
        "modify-instance-metadata-options",
        "--http-tokens",
        "optional",
    ),
    ("Edit-EC2InstanceMetadataOption", "-httptoken", "optional"),
];

/// The hit of a string that runs such a command.
pub(super) fn text(node: &Node) -> Option<Hit> {
    let text = node.as_str()?;
    let (command, offset) = reenabling(text)?;
    Some(Hit::new(
        IMDSV1,
        node,
        format!(
            "`{command}` with `optional` tokens turns IMDSv1 back on when the node boots, whatever the launch template's `HttpTokens` says"
        ),
        "leave the instance metadata options to the launch template (`imds.httpTokens`); a tool that needs IMDSv1 should move to an AWS SDK that speaks IMDSv2",
    ).at(text, offset))
}

/// The hits of every string in `node` (user data written by an override,
/// inside `Fn::Base64`, `Fn::Sub` or `Fn::Join`).
pub(super) fn strings(node: &Node) -> Vec<Hit> {
    match &node.value {
        Value::String(_) => text(node).into_iter().collect(),
        Value::Seq(items) => items.iter().flat_map(strings).collect(),
        Value::Map(entries) => entries
            .iter()
            .flat_map(|(_, value)| strings(value))
            .collect(),
        _ => Vec::new(),
    }
}

/// The re-enabling command `text` runs, and where it starts.
fn reenabling(text: &str) -> Option<(&'static str, usize)> {
    let lower = text.to_ascii_lowercase();
    REENABLING.iter().find_map(|(command, option, value)| {
        lower
            .match_indices(&command.to_ascii_lowercase())
            .find_map(|(start, _)| {
                let arguments: Vec<&str> = logical_line(&lower[start..])
                    .split(|c: char| c.is_whitespace() || "=:'\"`\\".contains(c))
                    .filter(|argument| !argument.is_empty())
                    .collect();
                arguments
                    .windows(2)
                    .any(|pair| pair[0] == *option && pair[1] == *value)
                    .then_some((*command, start))
            })
    })
}

/// The text up to the end of its command line: the first line break not
/// continued by a backslash (shell) or a backtick (PowerShell).
fn logical_line(text: &str) -> &str {
    let mut end = text.len();
    let mut previous = ' ';
    for (index, c) in text.char_indices() {
        if c == '\n' && previous != '\\' && previous != '`' {
            end = index;
            break;
        }
        if !c.is_whitespace() || c == '\n' {
            previous = c;
        }
    }
    &text[..end]
}
