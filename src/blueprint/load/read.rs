//! The small readers the sections share: an optional field of a given
//! type, a duration, a missing field's error.

use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::rules;
use crate::source::Span;
use crate::syntax::Node;

/// A field that may be left out, with where it was written.
pub(super) type Opt<T> = Option<Located<T>>;

/// The first character of a span: a mapping's own span runs to its end.
pub(super) fn first_column(span: Span) -> Span {
    Span { len: 1, ..span }
}

pub(super) fn missing(d: &mut Decoder, span: Span, field: &str, context: &str, help: &str) {
    let message = format!("missing field `{field}` in {context}");
    let diagnostic = d.error(span, message);
    diagnostic.help = Some(format!("add {help}"));
}

/// An integer field, within the range its declaration gives.
pub(super) fn opt_u32(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<u32> {
    let node = fields.get(field)?;
    let (min, max) = fields.range(field);
    d.integer(&format!("{prefix}{field}"), node, min, max)
        .map(|v| Located::new(v.value as u32, v.span))
}

pub(super) fn opt_bool(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<bool> {
    let node = fields.get(field)?;
    d.boolean(&format!("{prefix}{field}"), node)
}

pub(super) fn opt_string(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<String> {
    let node = fields.get(field)?;
    d.string(&format!("{prefix}{field}"), node)
}

pub(super) fn opt_strings(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    prefix: &str,
    field: &str,
) -> Opt<Vec<String>> {
    let node = fields.get(field)?;
    let items = d.string_list(&format!("{prefix}{field}"), node)?;
    Some(Located::new(
        items.into_iter().map(|s| s.value).collect(),
        node.span,
    ))
}

/// An optional list of EC2 IDs of `kind` (`subnet`, `sg`), each checked
/// where it is written.
pub(super) fn opt_ec2_ids(
    d: &mut Decoder,
    fields: &mut Fields<'_>,
    prefix: &str,
    field: &str,
    kind: &str,
) -> Opt<Vec<String>> {
    let node = fields.get(field)?;
    let items = d.string_list(&format!("{prefix}{field}"), node)?;
    let what = match kind {
        "sg" => "security group",
        other => other,
    };
    for item in &items {
        if !crate::blueprint::rules::is_ec2_id(kind, &item.value) {
            d.error(item.span, format!("`{}` is not a {what} ID", item.value))
                .help = Some(format!("{what} IDs look like `{kind}-0123456789abcdef0`"));
        }
    }
    Some(Located::new(
        items.into_iter().map(|s| s.value).collect(),
        node.span,
    ))
}

pub(super) fn duration(
    d: &mut Decoder,
    field: &str,
    node: &Node,
    min: u64,
    max: u64,
) -> Opt<String> {
    let text = d.string(field, node)?;
    match rules::iso_duration_seconds(&text.value) {
        Some(seconds) if (min..=max).contains(&seconds) => Some(text),
        Some(seconds) => {
            let message =
                format!("`{field}` is {seconds} seconds; it must be between {min} and {max}");
            d.error(text.span, message);
            None
        }
        None => {
            let message = format!("`{field}` `{}` is not an ISO 8601 duration", text.value);
            d.error(text.span, message).help = Some("write it like `PT15M` or `PT1H30M`".into());
            None
        }
    }
}
