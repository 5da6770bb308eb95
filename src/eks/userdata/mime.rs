//! The MIME `multipart/mixed` envelope of Amazon Linux user data.

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

/// Wraps parts in a `multipart/mixed` document whose boundary occurs in
/// none of them.
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
            json!({ "contentType": p.content_type, "body": body })
        })
        .collect();
    render_template(
        MIME_TEMPLATE,
        &json!({ "boundary": boundary, "parts": parts }),
    )
}

pub(super) const SHELL_CONTENT_TYPE: &str = "text/x-shellscript; charset=\"utf-8\"";
pub(super) const NODECONFIG_CONTENT_TYPE: &str = "application/node.eks.aws";
