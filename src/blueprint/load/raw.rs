//! Values the loader passes through as written (`kubelet` settings beyond
//! the typed ones, `nodeConfig`): the syntax tree turned into JSON for the
//! `eks` checkers, and a checker's path turned back into the node it names,
//! so that each problem is located at the exact key or value.

use serde_json::{Map, Number, Value as Json};

use crate::blueprint::decode::Decoder;
use crate::source::Span;
use crate::syntax::{Node, Value};
use crate::upstream::kubelet_config::Segment;

/// The node as JSON; `None` (reported) for a tagged node, since these
/// values are data, not CloudFormation intrinsics.
pub(super) fn to_json(d: &mut Decoder, field: &str, node: &Node) -> Option<Json> {
    if node.tag.is_some() {
        d.error(
            node.span,
            format!("`{field}` takes plain values, not tags such as `!Ref`"),
        )
        .help = Some("write the value itself; these settings are not CloudFormation".into());
        return None;
    }
    Some(match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(f) => match Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None => {
                d.error(node.span, format!("`{field}` must be a finite number"));
                return None;
            }
        },
        Value::String(s) => Json::String(s.clone()),
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(to_json(d, field, item)?);
            }
            Json::Array(out)
        }
        Value::Map(entries) => {
            let mut out = Map::new();
            for (key, value) in entries {
                out.insert(key.name.clone(), to_json(d, field, value)?);
            }
            Json::Object(out)
        }
    })
}

/// Where `path` points inside `node`: the value it names, or with `at_key`
/// the key that names it (for an unknown field). Falls back to the deepest
/// node the path reaches.
pub(super) fn locate(node: &Node, path: &[Segment], at_key: bool) -> Span {
    let mut here = node;
    for (i, segment) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        match (segment, &here.value) {
            (Segment::Key(name), Value::Map(entries)) => {
                let Some((key, value)) = entries.iter().find(|(k, _)| &k.name == name) else {
                    return here.span;
                };
                if last && at_key {
                    return key.span;
                }
                here = value;
            }
            (Segment::Index(n), Value::Seq(items)) => match items.get(*n) {
                Some(item) => here = item,
                None => return here.span,
            },
            _ => return here.span,
        }
    }
    here.span
}
