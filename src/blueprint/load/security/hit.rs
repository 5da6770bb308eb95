//! What a check finds, and the readers every check of insecure settings
//! shares.

use crate::source::Span;
use crate::syntax::Node;

/// An insecure setting: its finding ID, where it is written, what it does.
pub(super) struct Hit {
    pub(super) id: &'static str,
    pub(super) span: Span,
    pub(super) message: String,
    pub(super) help: &'static str,
    /// The path of the setting below the node its check was given, which
    /// says whether a group replaces a setting of `defaults`.
    pub(super) path: Vec<String>,
    /// The line of the node's text the setting is on (counted from 0),
    /// and that line, for a hit inside a string of several lines.
    pub(super) line: Option<(usize, String)>,
}

impl Hit {
    pub(super) fn new(id: &'static str, node: &Node, message: String, help: &'static str) -> Hit {
        Hit {
            id,
            span: node.span,
            message,
            help,
            path: Vec::new(),
            line: None,
        }
    }

    /// The hit, found at byte `offset` of `text`, the node's text.
    pub(super) fn at(mut self, text: &str, offset: usize) -> Hit {
        let index = text
            .get(..offset)
            .map_or(0, |before| before.matches('\n').count());
        self.line = text
            .split('\n')
            .nth(index)
            .map(|line| (index, line.to_string()));
        self
    }

    /// The hit, found below `key` of the node its check was given.
    pub(super) fn under(mut self, key: &str) -> Hit {
        self.path.insert(0, key.to_string());
        self
    }
}

/// The node at `path` (mapping keys) below `node`.
pub(super) fn get<'a>(node: &'a Node, path: &[&str]) -> Option<&'a Node> {
    path.iter().try_fold(node, |here, key| {
        here.as_map()?
            .iter()
            .find(|(k, _)| k.name == *key)
            .map(|(_, value)| value)
    })
}

/// The node's text when it is a plain string (untagged, or `!Sub` of a
/// string, whose `${...}` stay as written).
pub(super) fn text(node: &Node) -> Option<&str> {
    match node.tag.as_deref() {
        None | Some("!Sub") => node.as_str(),
        _ => None,
    }
}
