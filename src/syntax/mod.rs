//! The syntax tree every input is read into first: YAML (or JSON, which is
//! YAML) as nodes that keep their source span and their tag. The blueprint
//! loader and the template reader both walk this tree, so neither deals with
//! the YAML library directly.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Spanned, Tagged};

use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};

mod events;
mod split;
mod utf8;
mod wording;

pub use utf8::{NotUtf8, text_of};

/// One YAML node with its location and, for `!Ref x` and the like, its tag.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub tag: Option<String>,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

/// A mapping key: always a string here, with its own span so that an
/// unknown field can be pointed at exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub span: Span,
    pub name: String,
}

impl Node {
    /// What the node is, in words, for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Marks the node and everything below it as coming from `file_id`.
    pub fn set_file(&mut self, file_id: u32) {
        self.span.file = file_id;
        match &mut self.value {
            Value::Seq(items) => items.iter_mut().for_each(|item| item.set_file(file_id)),
            Value::Map(entries) => {
                for (key, value) in entries {
                    key.span.file = file_id;
                    value.set_file(file_id);
                }
            }
            _ => {}
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses YAML (or JSON) text into a tree. A syntax error becomes a located
/// diagnostic.
/// The error is boxed: it is rare, and a diagnostic is large.
pub fn parse(file: &Arc<SourceFile>) -> Result<Node, Box<Diagnostic>> {
    parse_as(file, 0)
}

/// Parses a file whose spans say `file_id` (see [`Span::file`]).
pub fn parse_as(file: &Arc<SourceFile>, file_id: u32) -> Result<Node, Box<Diagnostic>> {
    if file.text.trim().is_empty() {
        return Err(Box::new(
            Diagnostic::error(file, Some(Span::new(1, 1, 0)), "the file is empty").with_help(
                "a blueprint starts with `apiVersion: eksynth.io/v1` and `kind: NodeBlueprint`",
            ),
        ));
    }
    let split = (file.text.len() >= split::MIN_BYTES)
        .then(|| split::read(&file.text, PIECES))
        .flatten();
    let mut node = match split.or_else(|| events::read(&file.text)) {
        Some(node) => node,
        None => parse_reference(file)?,
    };
    if file_id != 0 {
        node.set_file(file_id);
    }
    Ok(node)
}

/// The fast reader alone: the tree of `text`, or `None` where it leaves
/// the document to serde-saphyr (see [`parse_reference`]).
pub fn parse_fast(text: &str) -> Option<Node> {
    events::read(text)
}

/// The fast reader on a large template cut into up to `pieces` runs of
/// resources read side by side, or `None` where it cannot be cut that way
/// or a piece is declined (see `split.rs`).
pub fn parse_fast_in_pieces(text: &str, pieces: usize) -> Option<Node> {
    split::read(text, pieces)
}

/// Runs of resources a large template is cut into.
const PIECES: usize = 8;

/// Parses a file with serde-saphyr alone: the reader [`parse`] uses
/// whenever its fast reader declines a document, and the reference that
/// fast reader is tested against. The spans say file 0.
pub fn parse_reference(file: &Arc<SourceFile>) -> Result<Node, Box<Diagnostic>> {
    serde_saphyr_tree(&file.text).map_err(|error| {
        let worded = wording::word(&file.text, &error);
        let mut diagnostic =
            Diagnostic::error(file, worded.span, worded.message).with_label(worded.label);
        diagnostic.help = worded.help;
        Box::new(diagnostic)
    })
}

/// The tree serde-saphyr reads from `text`, with booleans as YAML 1.2
/// spells them.
fn serde_saphyr_tree(text: &str) -> Result<Node, serde_saphyr::Error> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
    };
    serde_saphyr::from_str_with_options::<RawNode>(text, options).map(RawNode::into_node)
}

/// What serde-saphyr produces: a spanned, tagged node with raw children.
struct RawNode(Spanned<Tagged<RawValue>>);

enum RawValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<RawNode>),
    Map(Vec<(Spanned<String>, RawNode)>),
}

fn span_of<T>(spanned: &Spanned<T>) -> Span {
    let location = spanned.referenced;
    Span::new(
        location.line() as usize,
        location.column() as usize,
        location.span().len() as usize,
    )
}

impl RawNode {
    fn into_node(self) -> Node {
        let span = span_of(&self.0);
        let Tagged(value, tag) = self.0.value;
        let value = match value {
            RawValue::Null => Value::Null,
            RawValue::Bool(b) => Value::Bool(b),
            RawValue::Int(i) => Value::Int(i),
            RawValue::Float(f) => Value::Float(f),
            RawValue::String(s) => Value::String(s),
            RawValue::Seq(items) => Value::Seq(items.into_iter().map(RawNode::into_node).collect()),
            RawValue::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(key, node)| {
                        let span = span_of(&key);
                        (
                            Key {
                                span,
                                name: key.value,
                            },
                            node.into_node(),
                        )
                    })
                    .collect(),
            ),
        };
        // A scalar's span from the parser covers the value; keep at least one
        // column so that a caret is always drawn.
        let span = Span {
            len: span.len.max(1),
            ..span
        };
        Node { span, tag, value }
    }
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(RawNode(Deserialize::deserialize(deserializer)?))
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_unit<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }

    fn visit_none<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawValue, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }

    fn visit_bool<E>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<RawValue, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => RawValue::Int(i),
            Err(_) => RawValue::String(v.to_string()),
        })
    }

    fn visit_i128<E>(self, v: i128) -> Result<RawValue, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => RawValue::Int(i),
            Err(_) => RawValue::String(v.to_string()),
        })
    }

    fn visit_u128<E>(self, v: u128) -> Result<RawValue, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => RawValue::Int(i),
            Err(_) => RawValue::String(v.to_string()),
        })
    }

    fn visit_f64<E>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(RawValue::Map(entries))
    }
}
