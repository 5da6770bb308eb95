//! The YAML emitter: short-form intrinsic tags, YAML 1.1-safe quoting.
//!
//! The template's [`Template::layout`] is first lowered into a small tree of
//! YAML nodes ([`Node`]) that serde-saphyr serializes. serde-saphyr decides quoting: it quotes
//! every string a YAML 1.1 reader would take for something else (`yes`,
//! `on`, `12:30`, `0x1F`, dates...), which keeps the output safe for older
//! tooling that still speaks YAML 1.1.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_saphyr::{LitStr, Tagged};

use super::expr::Expr;
use super::template::Template;

/// How many markers are tried before giving up on plain `Fn::` keys.
const MARKER_ATTEMPTS: usize = 8;

/// Emits a template as YAML with short-form intrinsics (`!Ref`, `!Sub`...).
pub fn emit(template: &Template) -> String {
    // serde-saphyr double-quotes every mapping key that contains `:`, so a
    // long-form intrinsic would come out as `"Fn::Sub": ...`. The
    // conventional spelling is the plain `Fn::Sub:`, so long-form keys are
    // written with a marker that serializes as a plain key and is then
    // replaced. The replacement is only trusted when the marker occurs
    // exactly as often as it was written, i.e. no user string contains it;
    // otherwise another marker is tried, and in the end the quoted keys are
    // kept, which mean the same.
    let layout = template.layout();
    for attempt in 0..MARKER_ATTEMPTS {
        let marker = format!("__eksynth_long_form_{attempt}__");
        let mut lower = Lower::new(Some(&marker));
        let tree = lower.expr(&layout, true);
        if let Some(text) = serialize(&tree)
            && text.matches(marker.as_str()).count() == lower.marked_keys
        {
            return text.replace(marker.as_str(), "Fn::");
        }
    }
    let tree = Lower::new(None).expr(&layout, true);
    // The tree only holds strings, numbers and collections, which
    // serde-saphyr always serializes; JSON is valid YAML, so it is the
    // fallback should that ever change.
    serialize(&tree).unwrap_or_else(|| super::json::emit(template))
}

fn serialize(tree: &Node<'_>) -> Option<String> {
    let options = serde_saphyr::ser_options! {
        prefer_block_scalars: false,
        indent_step: 2,
    };
    let mut text = serde_saphyr::to_string_with_options(tree, options).ok()?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Some(text)
}

/// A YAML node ready for serde-saphyr.
enum Node<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(Cow<'a, str>, Node<'a>)>),
    /// A short-form intrinsic: the tag without its `!`, and the argument.
    Tagged(&'static str, Box<Node<'a>>),
}

/// True when a string is written as a `|` literal block. Block scalars are
/// only used for text with line breaks; text ending in two or more line
/// breaks would need keep chomping (`|+`), whose trailing blank lines are
/// easy to lose when editing and could end the document with blank lines,
/// so that rare case stays double-quoted.
fn is_block_text(s: &str) -> bool {
    s.contains('\n') && !s.ends_with("\n\n") && s != "\n"
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Bool(b) => serializer.serialize_bool(*b),
            Node::Int(i) => serializer.serialize_i64(*i),
            Node::Float(f) => serializer.serialize_f64(*f),
            Node::Str(s) if is_block_text(s) => LitStr(s).serialize(serializer),
            Node::Str(s) => serializer.serialize_str(s),
            Node::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
            Node::Tagged(tag, value) => {
                Tagged(&**value, Some(format!("!{tag}"))).serialize(serializer)
            }
        }
    }
}

/// Lowers the model into [`Node`]s, counting the marked long-form keys.
struct Lower<'m> {
    /// Written instead of `Fn::` in long-form keys, when set.
    marker: Option<&'m str>,
    marked_keys: usize,
}

fn str_node(s: &str) -> Node<'_> {
    Node::Str(Cow::Borrowed(s))
}

impl<'m> Lower<'m> {
    fn new(marker: Option<&'m str>) -> Lower<'m> {
        Lower {
            marker,
            marked_keys: 0,
        }
    }

    fn expr_map<'a>(&mut self, entries: &'a indexmap::IndexMap<String, Expr>) -> Node<'a> {
        Node::Map(
            entries
                .iter()
                .map(|(key, value)| (Cow::Borrowed(key.as_str()), self.expr(value, true)))
                .collect(),
        )
    }

    /// Lowers a value. `tag_allowed` is false where the node is the direct
    /// value of a tagged node: YAML allows one tag per node, so an intrinsic
    /// there is written in long form (`!Base64` + `Fn::Sub: ...`).
    fn expr<'a>(&mut self, expr: &'a Expr, tag_allowed: bool) -> Node<'a> {
        // The argument of a short form is the value of a tagged node, so it
        // must not be tagged itself; a long form's argument may be.
        let direct = !tag_allowed;
        let (name, argument) = match expr {
            Expr::Bool(b) => return Node::Bool(*b),
            Expr::Int(i) => return Node::Int(*i),
            Expr::Float(f) => return Node::Float(*f),
            Expr::String(s) => return str_node(s),
            Expr::List(items) => {
                return Node::Seq(items.iter().map(|item| self.expr(item, true)).collect());
            }
            Expr::Map(entries) => return self.expr_map(entries),
            Expr::Ref(name) => ("Ref", str_node(name)),
            Expr::GetAtt {
                resource,
                attribute,
            } => {
                // The dotted `Res.Attr` is a short-form convenience, split at
                // the first dot: a resource name with a dot of its own, and
                // the long form, take the list.
                let argument = if tag_allowed && !resource.contains('.') {
                    Node::Str(Cow::Owned(format!("{resource}.{attribute}")))
                } else {
                    Node::Seq(vec![str_node(resource), str_node(attribute)])
                };
                ("GetAtt", argument)
            }
            Expr::Sub {
                template,
                variables,
            } => {
                let argument = if variables.is_empty() {
                    str_node(template)
                } else {
                    Node::Seq(vec![str_node(template), self.expr_map(variables)])
                };
                ("Sub", argument)
            }
            Expr::Base64(inner) => ("Base64", self.expr(inner, direct)),
            Expr::Join { delimiter, items } => (
                "Join",
                Node::Seq(vec![str_node(delimiter), self.expr(items, true)]),
            ),
            Expr::If {
                condition,
                then,
                otherwise,
            } => (
                "If",
                Node::Seq(vec![
                    str_node(condition),
                    self.expr(then, true),
                    self.expr(otherwise, true),
                ]),
            ),
            Expr::Select { index, list } => (
                "Select",
                Node::Seq(vec![self.expr(index, true), self.expr(list, true)]),
            ),
            Expr::Split { delimiter, source } => (
                "Split",
                Node::Seq(vec![str_node(delimiter), self.expr(source, true)]),
            ),
            Expr::GetAZs(region) => ("GetAZs", self.expr(region, direct)),
            Expr::ImportValue(name) => ("ImportValue", self.expr(name, direct)),
            Expr::FindInMap {
                map,
                top_key,
                second_key,
            } => (
                "FindInMap",
                Node::Seq(vec![
                    str_node(map),
                    self.expr(top_key, true),
                    self.expr(second_key, true),
                ]),
            ),
            Expr::Cidr { block, count, bits } => (
                "Cidr",
                Node::Seq(vec![
                    self.expr(block, true),
                    self.expr(count, true),
                    self.expr(bits, true),
                ]),
            ),
            Expr::Equals(left, right) => (
                "Equals",
                Node::Seq(vec![self.expr(left, true), self.expr(right, true)]),
            ),
            Expr::And(items) => (
                "And",
                Node::Seq(items.iter().map(|item| self.expr(item, true)).collect()),
            ),
            Expr::Or(items) => (
                "Or",
                Node::Seq(items.iter().map(|item| self.expr(item, true)).collect()),
            ),
            Expr::Not(inner) => ("Not", Node::Seq(vec![self.expr(inner, true)])),
            Expr::Condition(name) => ("Condition", str_node(name)),
        };
        // A tagged plain scalar is a string to YAML 1.1 readers (`!Base64 5`
        // gives "5"), so a number or boolean argument takes the long form.
        let typed_scalar = matches!(argument, Node::Bool(_) | Node::Int(_) | Node::Float(_));
        if tag_allowed && !typed_scalar {
            return Node::Tagged(name, Box::new(argument));
        }
        let key = match (name, self.marker) {
            ("Ref" | "Condition", _) => Cow::Borrowed(name),
            (_, Some(marker)) => {
                self.marked_keys += 1;
                Cow::Owned(format!("{marker}{name}"))
            }
            (_, None) => Cow::Owned(format!("Fn::{name}")),
        };
        Node::Map(vec![(key, argument)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_argument_of_a_tag_is_long_form() {
        let mut lower = Lower::new(None);
        let expr = Expr::base64(Expr::sub("a\nb\n"));
        let node = lower.expr(&expr, true);
        let Node::Tagged("Base64", inner) = node else {
            panic!("expected a tagged node");
        };
        assert!(matches!(*inner, Node::Map(_)));
    }
}
