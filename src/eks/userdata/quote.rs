//! Quoting text for where it lands: shell, JSON and YAML, PowerShell, TOML,
//! `/etc/fstab`. Placeholder marks always pass through untouched.

use std::fmt::Write as _;

use serde_json::Value;

use crate::cfn::sub;

/// Quotes `text` as one shell word. Inside single quotes nothing is special
/// but the quote itself, which is closed, escaped and reopened. Placeholder
/// marks pass through untouched.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Quotes `text` as a double-quoted string that JSON and YAML both read the
/// same way. The placeholder mark ([`sub::MARK`]) is left raw on purpose: it is
/// replaced by a CloudFormation value before anything parses the text.
pub fn double_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            sub::MARK => out.push(c),
            // Control characters, DEL and C1 must be escaped in YAML;
            // U+2028/2029 and the BOM trip up some JSON and YAML readers.
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Quotes `text` as one single-quoted PowerShell string, in which nothing
/// is special but the quote. PowerShell takes the typographic single quotes
/// (U+2018 to U+201B) for quotes too, so each of them is doubled like the
/// ASCII one; a doubled quote stands for its second character, so the text
/// reads back exactly. Placeholder marks pass through untouched.
pub fn powershell_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Quotes `text` as a TOML basic string: TOML's escapes are those of a JSON
/// string, so this is [`double_quote`] (placeholder marks stay raw there
/// too, and are replaced before anything parses the text), with every
/// non-ASCII character escaped (`\u` or `\U`): Bottlerocket user data is
/// then ASCII, which reaches the node the same whatever reads it.
pub fn toml_quote(text: &str) -> String {
    let quoted = double_quote(text);
    let mut out = String::with_capacity(quoted.len());
    for c in quoted.chars() {
        let code = u32::from(c);
        // Writing to a String cannot fail.
        let _ = match code {
            _ if c.is_ascii() => write!(out, "{c}"),
            ..=0xffff => write!(out, "\\u{code:04X}"),
            _ => write!(out, "\\U{code:08X}"),
        };
    }
    out
}

/// JSON text for `value`, with strings quoted by [`double_quote`] so that
/// placeholders survive (serde_json would escape them).
pub(super) fn to_json(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => double_quote(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(to_json).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", double_quote(k), to_json(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// Escapes one `/etc/fstab` field: whitespace separates fields and the
/// backslash starts an octal escape.
pub(super) fn fstab_field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}
