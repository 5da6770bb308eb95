//! The MIME `multipart/mixed` envelope of Amazon Linux user data, and how
//! a part that carries non-ASCII text reaches the node intact.
//!
//! cloud-init parses user data from text, and a part without a
//! `Content-Transfer-Encoding` then comes out of Python's `email` package
//! with every non-ASCII character turned into an escape or a lone
//! surrogate: the shell part handler cannot write the script, the
//! cloud-config part is not YAML, and the part is dropped (however its
//! charset is declared, `8bit` included). A part declared
//! `Content-Transfer-Encoding: base64` is decoded to its exact bytes. So a
//! part whose text is not all ASCII is sent base64, and one that is stays
//! as it is, readable in the template.

use serde_json::{Value, json};

use super::templates::{MIME_TEMPLATE, render_template};
use super::{UserDataError, UserDataInput, unique_marker};

/// A MIME part: its content type and body.
pub(super) struct Part {
    content_type: String,
    body: String,
}

impl Part {
    pub(super) fn new(content_type: &str, body: String) -> Part {
        Part {
            content_type: content_type.to_string(),
            body,
        }
    }
}

/// The user's parts, each declared UTF-8 like eksynth's own.
pub(super) fn extra_parts(input: &UserDataInput) -> impl Iterator<Item = Part> + '_ {
    input.user_data_parts.iter().map(|part| Part {
        content_type: format!("{}; charset=\"utf-8\"", part.content_type),
        body: part.content.clone(),
    })
}

/// Marks the body of a part that is sent base64, at both ends, in rendered
/// text: CloudFormation encodes it (`Fn::Base64`), after filling in its
/// template values. Blueprint text cannot contain the mark: the loader
/// refuses control characters in strings.
pub const ENCODED: char = '\u{2}';

/// One piece of rendered user data: text as it is, or text that is sent
/// base64 ([`ENCODED`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'t> {
    Text(&'t str),
    Base64(&'t str),
}

/// The pieces of rendered user data, in order; empty pieces are left out.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    text.split(ENCODED)
        .enumerate()
        .filter(|(_, piece)| !piece.is_empty())
        .map(|(i, piece)| match i % 2 {
            0 => Piece::Text(piece),
            _ => Piece::Base64(piece),
        })
        .collect()
}

/// Wraps parts in a `multipart/mixed` document whose boundary occurs in
/// none of them. A part whose text is not all ASCII is declared
/// `Content-Transfer-Encoding: base64` and its body marked [`ENCODED`].
pub(super) fn mime(parts: Vec<Part>) -> Result<String, UserDataError> {
    let boundary = unique_marker("==EKSYNTH_BOUNDARY==", |b| {
        parts.iter().any(|p| p.body.contains(b))
    });
    let parts: Vec<Value> = parts
        .into_iter()
        .map(|p| {
            let mut body = p.body;
            if !body.ends_with('\n') {
                body.push('\n');
            }
            let base64 = !body.is_ascii();
            if base64 {
                body = format!("{ENCODED}{body}{ENCODED}");
            }
            json!({ "contentType": p.content_type, "base64": base64, "body": body })
        })
        .collect();
    render_template(
        MIME_TEMPLATE,
        &json!({ "boundary": boundary, "parts": parts }),
    )
}

pub(super) const SHELL_CONTENT_TYPE: &str = "text/x-shellscript; charset=\"utf-8\"";
pub(super) const NODECONFIG_CONTENT_TYPE: &str = "application/node.eks.aws";
