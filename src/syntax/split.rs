//! A large template read in pieces, side by side: the resources of a block
//! `Resources:` section are cut into runs at their keys, each run is read
//! as a document of its own by the fast reader, and the runs are put back
//! together under the rest of the template.
//!
//! The cut is made only where YAML allows no other reading. In a block
//! mapping whose keys are indented by `n` spaces, a line indented by exactly
//! `n` spaces that starts with a letter or digit starts the next key: a
//! block or plain scalar of the previous entry ends before a line that is
//! not indented more, and a quoted scalar or flow collection still open
//! across the cut leaves its run unterminated, which the fast reader
//! declines. Any piece the fast reader declines (or a key repeated across
//! runs) sends the whole document back to be read in one piece. The rest
//! of the template keeps its line numbers: the cut-out lines are left
//! blank there, and each run's lines are numbered where they were.

use super::events::{Counts, read_at, repeats_a_key};
use super::{Node, Value};

/// Files smaller than this are read in one piece: cutting costs more than
/// it saves.
pub(super) const MIN_BYTES: usize = 128 * 1024;

/// The section that is cut.
const SECTION: &str = "Resources";

/// Reads `text` in up to `pieces` runs of resources read side by side;
/// `None` when it cannot be cut or a piece is declined.
pub(super) fn read(text: &str, pieces: usize) -> Option<Node> {
    let cut = Cut::find(text, pieces)?;
    // The rest of the template keeps its line numbers: the resources'
    // lines are left blank.
    let mut rest = String::with_capacity(text.len());
    rest.push_str(&text[..cut.body.start]);
    let blank = memchr::memchr_iter(b'\n', text[cut.body.clone()].as_bytes()).count();
    rest.extend(std::iter::repeat_n('\n', blank));
    rest.push_str(&text[cut.body.end..]);

    let mut jobs: Vec<Job<'_>> = vec![Job::Rest(&rest)];
    jobs.extend(cut.runs.iter().map(|run| Job::Run {
        text: &text[run.bytes.clone()],
        first_line: run.first_line,
    }));
    let mut read = crate::parallel::map(&jobs, Job::read).into_iter();

    let (mut root, mut counts) = read.next()??;
    let mut entries = Vec::new();
    let mut span = None;
    for piece in read {
        let (node, piece_counts) = piece?;
        counts = counts.add(piece_counts)?;
        if node.tag.is_some() {
            return None;
        }
        span.get_or_insert(node.span);
        let Value::Map(run) = node.value else {
            return None;
        };
        entries.extend(run);
    }
    if repeats_a_key(&entries) {
        return None;
    }
    let Value::Map(sections) = &mut root.value else {
        return None;
    };
    let (_, resources) = sections.iter_mut().find(|(key, _)| key.name == SECTION)?;
    if resources.tag.is_some() || resources.value != Value::Null {
        return None;
    }
    *resources = Node {
        span: span?,
        tag: None,
        value: Value::Map(entries),
    };
    Some(root)
}

enum Job<'t> {
    /// The template without the resources.
    Rest(&'t str),
    /// A run of resources, whose first line is `first_line` of the file.
    Run { text: &'t str, first_line: usize },
}

impl Job<'_> {
    fn read(&self) -> Option<(Node, Counts)> {
        match self {
            Job::Rest(text) => read_at(text, 1, 0),
            Job::Run { text, first_line } => read_at(text, 2, first_line - 1),
        }
    }
}

/// Where the resources are and how they are cut.
struct Cut {
    /// The bytes of the section's entries, from its first key to the next
    /// section or the end.
    body: std::ops::Range<usize>,
    runs: Vec<Run>,
}

struct Run {
    bytes: std::ops::Range<usize>,
    /// The file's line number (from 1) of the run's first line.
    first_line: usize,
}

impl Cut {
    fn find(text: &str, pieces: usize) -> Option<Cut> {
        let bytes = text.as_bytes();
        let mut lines = lines(bytes);
        lines.find(|&(_, start, end)| {
            text[start..end]
                .trim_end_matches('\r')
                .strip_prefix(SECTION)
                .and_then(|after| after.strip_prefix(':'))
                .is_some_and(|after| after.trim_matches(' ').is_empty())
        })?;
        let mut indent = None;
        let mut keys: Vec<(usize, usize)> = Vec::new();
        let mut body_end = text.len();
        for (number, start, end) in lines {
            let line = &bytes[start..end];
            let spaces = line.iter().take_while(|&&byte| byte == b' ').count();
            let first = match line[spaces..] {
                [] | [b'#', ..] => continue,
                [b'\r', ..] if line[spaces..].iter().all(|&byte| byte == b'\r') => continue,
                [first, ..] => first,
            };
            if spaces == 0 {
                // The next section.
                body_end = start;
                break;
            }
            let indent = *indent.get_or_insert(spaces);
            if spaces < indent || first == b'\t' {
                return None;
            }
            if spaces == indent {
                if !first.is_ascii_alphanumeric() {
                    return None;
                }
                keys.push((number, start));
            }
        }
        let pieces = pieces.min(keys.len());
        if pieces < 2 {
            return None;
        }
        // Runs of about equal size, each starting at a key.
        let (_, body_start) = *keys.first()?;
        let size = (body_end - body_start).div_ceil(pieces);
        let mut runs: Vec<Run> = Vec::new();
        for &(number, start) in &keys {
            let due = runs
                .last()
                .is_none_or(|run| start - run.bytes.start >= size);
            if due {
                // A run ends with the indentation of the next key, so that
                // a scalar ending the run ends where it does in the whole
                // (a block scalar's span reaches the next token).
                if let Some(run) = runs.last_mut() {
                    run.bytes.end = start + indent?;
                }
                runs.push(Run {
                    bytes: start..body_end,
                    first_line: number,
                });
            }
        }
        // What comes before the first key (blank lines and comments) stays
        // with the rest of the template.
        Some(Cut {
            body: body_start..body_end,
            runs,
        })
    }
}

/// The lines of `bytes`: each one's number (from 1), and where it starts
/// and ends (before its `\n`).
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    let mut start = 0;
    ends.enumerate().map_while(move |(index, end)| {
        let line = (index + 1, start, end);
        start = end + 1;
        (line.1 < bytes.len()).then_some(line)
    })
}
