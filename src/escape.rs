//! How text from the input is echoed in messages: one rule per output
//! format, so that a value, a key or a file name can never act on the
//! terminal, break a line, or turn into markup or a workflow command.
//!
//! Messages are built with the input's text as it is; each renderer applies
//! its format's rule to everything it prints that may hold input text. The
//! project's own wording holds no character these rules change, except
//! where a rule says so (Markdown).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a character must not reach a terminal as it is: control
/// characters (C0, DEL, C1: ESC starts terminal sequences, BEL rings, a line
/// break starts a line that GitHub Actions reads as a workflow command), the
/// line and paragraph separators, and the bidirectional formatting
/// characters that reorder what is shown ("Trojan Source").
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Text for a terminal (rendered diagnostics, `diff`, `explain`, the
/// command line's own messages): every unsafe character written as a
/// visible escape, `\n`, `\r`, `\t` or `\u{1b}` as Rust writes them. A
/// backslash is left as it is, so that paths and patterns read as written;
/// the rule guards the terminal, and the input keeps the exact text.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Text as a Markdown code span (GitHub-flavoured): the terminal rule,
/// then a fence of backticks longer than any run inside, with a space on
/// each side when the text starts or ends with a backtick (which would
/// otherwise join the fence). A code span shows its content literally, so
/// nothing else needs escaping; a line break (escaped here) is what would
/// end a table row or the span itself.
pub fn markdown_code(text: &str) -> String {
    let text = terminal(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Text in running Markdown (GitHub-flavoured), outside a code span: the
/// terminal rule, then a backslash before every character that can start
/// or end markup there (emphasis, links, HTML and entities, headings,
/// tables, strikethrough, code spans), so that it shows as written.
pub fn markdown_text(text: &str) -> String {
    let text = terminal(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A file name as a relative URI reference, for SARIF's
/// `artifactLocation.uri` (RFC 3986): `/` separates segments, a Windows
/// `\` becomes one, and every byte that is not an unreserved character or
/// `/` is percent-encoded (a space as `%20`, a line break as `%0A`).
pub fn uri_reference(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        match byte {
            b'\\' | b'/' => out.push('/'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(byte));
            }
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidirectional_characters_show_as_escapes_in_a_terminal() {
        assert_eq!(terminal("plain `text`"), "plain `text`");
        assert_eq!(
            terminal("a\u{1b}[31mred\u{7}\nb\tc\r"),
            "a\\u{1b}[31mred\\u{7}\\nb\\tc\\r"
        );
        assert_eq!(terminal("x\u{202E}y\u{85}"), "x\\u{202e}y\\u{85}");
        assert_eq!(terminal("nœud"), "nœud");
    }

    #[test]
    fn a_code_span_is_fenced_longer_than_the_backticks_inside() {
        assert_eq!(markdown_code("m6i.large"), "`m6i.large`");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`x"), "`` `x ``");
        assert_eq!(markdown_code("`a``"), "``` `a`` ```");
        assert_eq!(markdown_code("a|b\nc"), "`a|b\\nc`");
    }

    #[test]
    fn markup_characters_are_escaped_in_running_markdown() {
        assert_eq!(markdown_text("Nodes"), "Nodes");
        assert_eq!(
            markdown_text("Tags/*/Key_1 <b>"),
            "Tags/\\*/Key\\_1 \\<b\\>"
        );
        assert_eq!(
            markdown_text("<img src=x> *b* [l](u) a&amp;"),
            "\\<img src=x\\> \\*b\\* \\[l\\](u) a\\&amp;"
        );
    }

    #[test]
    fn a_file_name_becomes_a_relative_uri_reference() {
        assert_eq!(
            uri_reference("nodes/blueprint.yaml"),
            "nodes/blueprint.yaml"
        );
        assert_eq!(uri_reference("my nodes\\a%b.yaml"), "my%20nodes/a%25b.yaml");
        assert_eq!(uri_reference("x\ny"), "x%0Ay");
        assert_eq!(uri_reference("nœud"), "n%C5%93ud");
    }
}
