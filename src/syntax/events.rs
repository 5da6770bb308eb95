//! The fast reader: the syntax tree built straight from the YAML parser's
//! events, without serde-saphyr's deserializer above them.
//!
//! serde-saphyr stays the reference. This reader takes only documents whose
//! meaning it can establish with certainty and returns `None` for anything
//! else, so that [`super::parse_as`] hands the file to serde-saphyr, which
//! reads it (or reports its error) as before. It declines:
//!
//! - any error of the parser, and any stream that is not one document;
//! - anchors, aliases and merge keys (`<<`);
//! - tags other than local application tags such as `!Ref` or `!GetAtt`
//!   (serde-saphyr gives core tags such as `!!str`, and local tags such as
//!   `!binary` or `!include`, meanings of their own);
//! - mapping keys that are not strings on their face (a collection, a block
//!   scalar, a tagged key, or a plain key that could read as null, a boolean
//!   or a number), and duplicate keys, which serde-saphyr rejects;
//! - documents near serde-saphyr's budget (nesting depth, node count, scalar
//!   bytes), which it rejects.
//!
//! A plain scalar is resolved as serde-saphyr resolves it with strict
//! booleans: `null`-like text is null, `true`/`false` (three spellings each)
//! are booleans, a decimal integer is an integer, a decimal fraction is a
//! float, and text that cannot be a number is a string. Any other plain
//! scalar that could be a number (`0x1F`, `1e3`, `.inf`, `2012-10-17`...)
//! is resolved by serde-saphyr itself, alone.
//!
//! `tests/syntax.rs` holds the two readers equal over every YAML and JSON
//! file of the project (and cfn-lint's fixtures once downloaded), and over generated
//! documents.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span as ParserSpan, Tag};

use super::{Key, Node, Value};
use crate::source::Span;

/// Nesting deeper than this is left to serde-saphyr (its budget allows 64).
const MAX_DEPTH: usize = 48;
/// More nodes than this are left to serde-saphyr (its budget allows 250,000).
const MAX_NODES: usize = 200_000;
/// More scalar text than this is left to serde-saphyr (its budget allows
/// 64 MiB).
const MAX_SCALAR_BYTES: usize = 32 * 1024 * 1024;

/// Reads `text` into a tree, or `None` when serde-saphyr must read it.
pub fn read(text: &str) -> Option<Node> {
    let (root, _) = read_at(text, 1, 0)?;
    Some(root)
}

/// What reading a piece of a document took, counted against serde-saphyr's
/// budget for the whole.
#[derive(Clone, Copy, Default)]
pub(super) struct Counts {
    pub nodes: usize,
    pub scalar_bytes: usize,
}

impl Counts {
    pub(super) fn add(self, other: Counts) -> Option<Counts> {
        let sum = Counts {
            nodes: self.nodes + other.nodes,
            scalar_bytes: self.scalar_bytes + other.scalar_bytes,
        };
        (sum.nodes <= MAX_NODES && sum.scalar_bytes <= MAX_SCALAR_BYTES).then_some(sum)
    }
}

/// [`read`] of a document whose root is at nesting `depth` of a larger
/// one (1 for a whole document) and whose first line is `lines_before`
/// lines into it, with what it took.
pub(super) fn read_at(text: &str, depth: usize, lines_before: usize) -> Option<(Node, Counts)> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        lines_before,
        counts: Counts::default(),
    };
    let (event, _) = reader.next()?;
    if !matches!(event, Event::StreamStart) {
        return None;
    }
    let (event, _) = reader.next()?;
    if !matches!(event, Event::DocumentStart(_, None)) {
        return None;
    }
    let (event, span) = reader.next()?;
    let root = reader.node(event, span, depth)?;
    let (event, _) = reader.next()?;
    if !matches!(event, Event::DocumentEnd) {
        return None;
    }
    let (event, _) = reader.next()?;
    if !matches!(event, Event::StreamEnd) {
        return None;
    }
    match reader.parser.next() {
        None => Some((root, reader.counts)),
        Some(_) => None,
    }
}

struct Reader<'t> {
    parser: Parser<'t, serde_saphyr::granit_parser::StrInput<'t>>,
    /// Added to every line number.
    lines_before: usize,
    counts: Counts,
}

impl<'t> Reader<'t> {
    /// The next event; `None` at the end or on an error. The parser is
    /// built without comment events (serde-saphyr's `comments` feature is
    /// off), which a template's meaning does not need.
    fn next(&mut self) -> Option<(Event<'t>, ParserSpan)> {
        self.parser.next()?.ok()
    }

    fn node(&mut self, event: Event<'t>, span: ParserSpan, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.counts.nodes += 1;
        if self.counts.nodes > MAX_NODES {
            return None;
        }
        let (tag, value) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    return None;
                }
                self.counts.scalar_bytes += text.len();
                if self.counts.scalar_bytes > MAX_SCALAR_BYTES {
                    return None;
                }
                (application_tag(tag.as_deref())?, scalar(text, style)?)
            }
            Event::SequenceStart(_, anchor, tag) => {
                if anchor != 0 {
                    return None;
                }
                let tag = application_tag(tag.as_deref())?;
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(event, span, depth + 1)?);
                }
                (tag, Value::Seq(items))
            }
            Event::MappingStart(_, anchor, tag) => {
                if anchor != 0 {
                    return None;
                }
                let tag = application_tag(tag.as_deref())?;
                let mut entries: Vec<(Key, Node)> = Vec::new();
                loop {
                    let (event, key_span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    let name = key(event)?;
                    self.counts.nodes += 1;
                    let (event, span) = self.next()?;
                    let value = self.node(event, span, depth + 1)?;
                    entries.push((
                        Key {
                            span: self.span_of(&key_span),
                            name,
                        },
                        value,
                    ));
                }
                if repeats_a_key(&entries) {
                    return None;
                }
                (tag, Value::Map(entries))
            }
            _ => return None,
        };
        let span = self.span_of(&span);
        Some(Node {
            // As serde-saphyr's reader: at least one column, so that a caret
            // is always drawn.
            span: Span {
                len: span.len.max(1),
                ..span
            },
            tag,
            value,
        })
    }

    /// The location serde-saphyr gives a node: the line, the column counted
    /// from 1, and the length in characters.
    fn span_of(&self, span: &ParserSpan) -> Span {
        Span::new(
            span.start.line() + self.lines_before,
            span.start.col() + 1,
            span.len(),
        )
    }
}

/// Whether two entries have one key (serde-saphyr rejects that).
pub(super) fn repeats_a_key(entries: &[(Key, Node)]) -> bool {
    if entries.len() <= 8 {
        return entries
            .iter()
            .enumerate()
            .any(|(i, (key, _))| entries[..i].iter().any(|(other, _)| other.name == key.name));
    }
    let mut names: Vec<&str> = entries.iter().map(|(key, _)| key.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

/// A local tag such as `!Ref` as serde-saphyr writes it (`Some("!Ref")`),
/// `Ok(None)` for no tag, or `None` for a tag this reader leaves to
/// serde-saphyr.
fn application_tag(tag: Option<&Tag>) -> Option<Option<String>> {
    let Some(tag) = tag else {
        return Some(None);
    };
    let (handle, suffix) = tag.parts();
    let application = handle == "!"
        && tag.original_handle() == "!"
        && suffix.starts_with(|c: char| c.is_ascii_uppercase())
        && suffix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ':');
    application.then(|| Some(tag.to_string()))
}

/// A mapping key that is a string on its face, or `None`.
fn key(event: Event<'_>) -> Option<String> {
    let Event::Scalar(text, style, anchor, tag) = event else {
        return None;
    };
    if anchor != 0 || tag.is_some() {
        return None;
    }
    match style {
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Some(text.into_owned()),
        ScalarStyle::Plain if text != "<<" && plain_is_text(&text) => Some(text.into_owned()),
        _ => None,
    }
}

/// The value of a scalar, resolved as serde-saphyr resolves it.
fn scalar(text: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(text.into_owned()));
    }
    Some(match text.as_ref() {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        t if plain_is_text(t) => Value::String(text.into_owned()),
        t if decimal_integer(t) => Value::Int(t.parse().ok()?),
        t if decimal_fraction(t) => Value::Float(t.parse().ok()?),
        t => return resolved_by_serde_saphyr(t),
    })
}

/// Whether a plain scalar can only be a string: it is not null-like or a
/// boolean, and it cannot be a number, because a number starts with a
/// digit, a sign or a dot, and has only digits, letters and `+-._:`.
fn plain_is_text(t: &str) -> bool {
    let Some(first) = t.bytes().next() else {
        return false;
    };
    if matches!(
        t,
        "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    ) {
        return false;
    }
    let numeric_start = first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.');
    !numeric_start
        || !t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_' | b':'))
}

/// `0`, or a decimal integer without a leading zero, optionally negative,
/// that fits an `i64` for certain (at most 18 digits).
fn decimal_integer(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    digits == "0" && t == "0"
        || (1..=18).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0')
}

/// A decimal fraction such as `1.5` or `-0.25`: digits (without a leading
/// zero unless it is the only one), a dot, digits; at most 15 significant
/// digits, so that it reads as the same `f64` by any correct parser.
fn decimal_fraction(t: &str) -> bool {
    let unsigned = t.strip_prefix('-').unwrap_or(t);
    let Some((whole, fraction)) = unsigned.split_once('.') else {
        return false;
    };
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.len() + fraction.len() <= 15
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
        && (whole == "0" || !whole.starts_with('0'))
}

/// A plain scalar that may be a number in one of YAML's other spellings,
/// resolved by serde-saphyr on its own; `None` if that does not give a
/// scalar (the text read alone is not the same node).
fn resolved_by_serde_saphyr(t: &str) -> Option<Value> {
    match super::serde_saphyr_tree(t).ok()?.value {
        value @ (Value::Null
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::String(_)) => Some(value),
        Value::Seq(_) | Value::Map(_) => None,
    }
}
