//! The reader's errors in the user's terms: serde-saphyr words its errors
//! for the programmer calling it ("set DuplicateKeyPolicy in Options", "use
//! from_str_multiple", "budget breached: Nodes { nodes: 250001 }"); these
//! are what a blueprint's or template's author can act on.

use serde_saphyr::granit_parser::{Event, Parser};
use serde_saphyr::{Budget, Error, MessageFormatter, UserMessageFormatter};

use crate::source::Span;

/// A reader error as eksynth reports it.
pub(super) struct Worded {
    pub span: Option<Span>,
    pub message: String,
    pub label: &'static str,
    pub help: Option<String>,
}

/// How deep the YAML scanner lets flow collections (`[`, `{`) nest.
const FLOW_NESTING_LIMIT: usize = 255;

/// `error`, met while reading `text`, in the user's terms.
pub(super) fn word(text: &str, error: &Error) -> Worded {
    let error = error.without_snippet();
    let span = error
        .location()
        .filter(|location| location.line() > 0)
        .map(|location| Span::new(location.line() as usize, location.column() as usize, 1));
    let worded = |message: String, help: Option<&str>| Worded {
        span,
        message,
        label: "here",
        help: help.map(str::to_string),
    };
    match error {
        Error::DuplicateMappingKey { key, .. } => duplicate_key(text, key.as_deref(), span),
        Error::MultipleDocuments { .. } => second_document(text, span),
        Error::Budget { breach, .. } => worded(
            too_large(breach),
            Some(
                "eksynth stops reading a document past these limits, which no blueprint or template comes near",
            ),
        ),
        Error::InvalidScalar { ty, .. } => worded(
            format!("the value is not {} as its tag says", scalar_kind(ty)),
            Some("remove the tag (`!!int`, `!!float`, `!!bool`...) or write a value of that type"),
        ),
        Error::UnknownAnchor { .. } => worded(
            "this alias (`*name`) refers to no anchor (`&name`) defined before it".to_string(),
            None,
        ),
        _ => {
            let message = UserMessageFormatter.format_message(error);
            if message == "recursion limit exceeded" {
                return worded(
                    format!(
                        "the document is nested too deeply: more than {FLOW_NESTING_LIMIT} levels of `[...]` and `{{...}}`"
                    ),
                    None,
                );
            }
            let mut worded = worded(format!("invalid YAML: {message}"), None);
            if message.contains("flow mapping") || message.contains("flow sequence") {
                worded.help = Some(
                    "a `{` or `[` opened before this point is not closed: close it with its `}` or `]`"
                        .to_string(),
                );
            } else if message.contains("mapping values are not allowed")
                && colon_in_value(text, span)
            {
                worded.help = Some(
                    "the value holds `: `, which YAML reads as the start of another key: quote the value ('...' or \"...\")"
                        .to_string(),
                );
            } else if STRUCTURE_ERRORS.iter().any(|words| message.contains(words)) {
                worded.help = Some(indentation_help(text, span));
            }
            worded
        }
    }
}

/// What the YAML parser says when a line does not fit the structure around
/// it, which is most often a line indented a space or two off.
const STRUCTURE_ERRORS: &[&str] = &[
    "did not find expected",
    "mapping values are not allowed",
    "block mapping",
    "block collection",
    "block sequence",
];

/// Whether the line of `at` holds two `: `: the second is then inside the
/// first key's unquoted value.
fn colon_in_value(text: &str, at: Option<Span>) -> bool {
    at.and_then(|at| text.lines().nth(at.line.checked_sub(1)?))
        .is_some_and(|line| (line.to_string() + " ").matches(": ").count() >= 2)
}

/// Help for a line that does not fit its structure: YAML takes a line's
/// place from its indentation, so name the line above it that is indented
/// one or two spaces differently, the likely sibling.
fn indentation_help(text: &str, at: Option<Span>) -> String {
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let lines: Vec<&str> = text.lines().collect();
    let found = at.and_then(|at| {
        let here = *lines.get(at.line.checked_sub(1)?)?;
        let (depth, item) = (indent(here), here.trim_start().starts_with("- "));
        lines[..at.line - 1]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, line)| {
                let body = line.trim_start();
                !body.is_empty() && !body.starts_with('#')
            })
            .take_while(|(_, line)| indent(line) + 2 >= depth)
            .find(|(_, line)| {
                indent(line) != depth
                    && indent(line).abs_diff(depth) <= 2
                    && line.trim_start().starts_with("- ") == item
            })
            .map(|(n, line)| (at.line, depth, n + 1, indent(line)))
    });
    match found {
        Some((line, depth, above, other)) => format!(
            "YAML reads the structure from indentation: line {line} is indented {depth} spaces, line {above} above it {other}; entries of one mapping or list start in the same column"
        ),
        None => "YAML reads the structure from indentation: check that this line starts in the same column as the entries it belongs with, using spaces only".to_string(),
    }
}

/// A key written twice in one mapping, with both places.
fn duplicate_key(text: &str, key: Option<&str>, again: Option<Span>) -> Worded {
    let first = again.and_then(|again| first_occurrence(text, again));
    let name = key.map_or_else(String::new, |key| format!(" `{key}`"));
    let message = match (first, again) {
        (Some(first), Some(again)) if first.line == again.line => format!(
            "the key{name} is written twice in one mapping: at line {}, columns {} and {}",
            first.line, first.column, again.column
        ),
        (Some(first), Some(again)) => format!(
            "the key{name} is written twice in one mapping: at line {} and again at line {}",
            first.line, again.line
        ),
        _ => format!("the key{name} is written twice in one mapping"),
    };
    Worded {
        span: again,
        message,
        label: "again",
        help: Some("a mapping holds each key once: remove one of them, or merge them".to_string()),
    }
}

/// Where the key at `again` was first written in its mapping: the YAML
/// events are walked with each mapping's keys so far.
fn first_occurrence(text: &str, again: Span) -> Option<Span> {
    /// A mapping's keys so far, and whether the next node is a key.
    struct Mapping {
        keys: Vec<(String, Span)>,
        at_key: bool,
    }
    // `None` for a sequence.
    let mut open: Vec<Option<Mapping>> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next() {
        let here = Span::new(span.start.line(), span.start.col() + 1, span.len());
        let ended = match event {
            Event::MappingStart(..) => {
                open.push(Some(Mapping {
                    keys: Vec::new(),
                    at_key: true,
                }));
                false
            }
            Event::SequenceStart(..) => {
                open.push(None);
                false
            }
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
                true
            }
            Event::Scalar(value, ..) => {
                if let Some(Some(mapping)) = open.last_mut()
                    && mapping.at_key
                {
                    if (here.line, here.column) == (again.line, again.column) {
                        return mapping
                            .keys
                            .iter()
                            .find(|(name, _)| *name == value)
                            .map(|(_, span)| *span);
                    }
                    mapping.keys.push((value.into_owned(), here));
                }
                true
            }
            Event::Alias(_) => true,
            _ => false,
        };
        // A node ended: in a mapping, a key is followed by its value and
        // a value by the next key.
        if ended && let Some(Some(mapping)) = open.last_mut() {
            mapping.at_key = !mapping.at_key;
        }
    }
    None
}

/// A stream with a second document: at its `---` line where there is one.
fn second_document(text: &str, at: Option<Span>) -> Worded {
    let span = at.map(|at| {
        let lines: Vec<&str> = text.lines().collect();
        (1..=at.line.min(lines.len()))
            .rev()
            .find(|&line| lines[line - 1].starts_with("---"))
            .map_or(at, |line| Span::new(line, 1, 3))
    });
    let message = match span {
        Some(span) => format!(
            "a blueprint or template is one YAML document; found a second at line {}",
            span.line
        ),
        None => "a blueprint or template is one YAML document; found a second".to_string(),
    };
    Worded {
        span,
        message,
        label: "a second document",
        help: Some(
            "remove the `---` line and what follows it, or move that document into a file of its own"
                .to_string(),
        ),
    }
}

/// A limit of serde-saphyr's budget, as what the document has too much of.
fn too_large(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach;
    let limits = Budget::default();
    match breach {
        BudgetBreach::Depth { .. } => format!(
            "the document is nested too deeply: more than {} levels of lists and mappings",
            limits.max_depth
        ),
        BudgetBreach::Nodes { .. } => format!(
            "the document is too large: more than {} values (keys, scalars, lists and mappings)",
            limits.max_nodes
        ),
        BudgetBreach::ScalarBytes { .. } => format!(
            "the document is too large: more than {} MiB of text in its values",
            limits.max_total_scalar_bytes >> 20
        ),
        BudgetBreach::Events { .. } => format!(
            "the document is too large: more than {} YAML nodes and collection ends",
            limits.max_events
        ),
        BudgetBreach::Aliases { .. } => {
            format!("the document has more than {} aliases", limits.max_aliases)
        }
        BudgetBreach::Anchors { .. } => {
            format!("the document has more than {} anchors", limits.max_anchors)
        }
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "the document has {aliases} aliases for {anchors} anchors, which is how a document that expands without end is built"
        ),
        _ => "the document is too large or too deeply nested to read".to_string(),
    }
}

/// What a tag's Rust type reads as, in words.
fn scalar_kind(ty: &str) -> &'static str {
    match ty {
        "bool" | "boolean" => "a boolean",
        "f32" | "f64" | "floating point" => "a number",
        t if t.starts_with(['i', 'u']) => "an integer",
        _ => "of the type",
    }
}

#[cfg(test)]
mod tests {
    use crate::source::SourceFile;

    /// The message and line of the error reading `text`.
    fn error_of(text: &str) -> (String, Option<usize>) {
        let file = SourceFile::new("x.yaml", text.to_string());
        let error = super::super::parse_reference(&file).expect_err("an error");
        (error.message.clone(), error.span.map(|span| span.line))
    }

    #[test]
    fn reader_errors_are_said_without_the_reader_s_internals() {
        assert_eq!(
            error_of("a: {b: 1, b: 2}\n"),
            (
                "the key `b` is written twice in one mapping: at line 1, columns 5 and 11"
                    .to_string(),
                Some(1)
            )
        );
        assert_eq!(
            error_of("b: 1\nc:\n  b: 2\nb: 3\n"),
            (
                "the key `b` is written twice in one mapping: at line 1 and again at line 4"
                    .to_string(),
                Some(4)
            )
        );
        assert_eq!(
            error_of("a: 1\n--- \nb: 2\n").1,
            Some(2),
            "a second document is located at its `---` line"
        );
        assert_eq!(
            error_of("a: !!int x\n").0,
            "the value is not an integer as its tag says"
        );
        assert_eq!(
            error_of("a: !!bool maybe\n").0,
            "invalid YAML: invalid boolean (true or false expected)"
        );
        // The reader recurses once per level: a thread with the main
        // thread's stack, as the command line and its pool have.
        let (deep, _) = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| error_of(&format!("a: {}1{}\n", "[".repeat(70), "]".repeat(70))))
            .expect("a thread")
            .join()
            .expect("no panic");
        assert_eq!(
            deep,
            "the document is nested too deeply: more than 64 levels of lists and mappings"
        );
    }
}
