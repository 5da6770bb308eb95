//! Source files, how they are read, and the spans that point into them.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The most bytes eksynth reads from one input: 16 MiB, sixteen times the
/// largest template CloudFormation accepts (1 MB from S3). The bound keeps
/// a mistaken input (a device, a log file) from filling the memory.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Why an input could not be read; the message is the reason alone,
/// for the caller to say which input.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    #[error("it is larger than {} MiB, the most eksynth reads", MAX_INPUT_BYTES >> 20)]
    TooLarge,
}

/// Reads the bytes of a regular file of at most [`MAX_INPUT_BYTES`].
/// Anything else is refused before it is opened: opening a FIFO waits for
/// a writer, and a device such as `/dev/zero` never ends.
pub fn read_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    check_regular(&std::fs::metadata(path)?)?;
    let file = File::open(path)?;
    // The file may have been replaced between the two looks.
    check_regular(&file.metadata()?)?;
    read_capped(file)
}

/// Reads standard input, at most [`MAX_INPUT_BYTES`] of it.
pub fn read_stdin() -> Result<Vec<u8>, ReadError> {
    read_capped(io::stdin().lock())
}

fn check_regular(metadata: &std::fs::Metadata) -> Result<(), ReadError> {
    let file_type = metadata.file_type();
    if !file_type.is_file() {
        return Err(ReadError::NotAFile(kind_of(file_type)));
    }
    if metadata.len() > MAX_INPUT_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(())
}

/// Reads to the end, or one byte past the cap: files such as those of
/// `/proc` say they are empty and are not.
fn read_capped(reader: impl Read) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// What a file that is not a regular file is, for messages.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// A named piece of input text: a blueprint, a template, or standard input.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// The byte offset where each line starts, found on first use: each
    /// diagnostic asks for its lines (and the template reader for the line
    /// of a tag it reports), so scanning the text from its start each time
    /// would make reporting many findings quadratic.
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
            line_starts: OnceLock::new(),
        })
    }

    /// The text of a 1-indexed line, without its line ending; `""` past
    /// the end.
    pub fn line_text(&self, line: usize) -> &str {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|at| at + 1))
                .collect()
        });
        let index = line.saturating_sub(1);
        let Some(&start) = starts.get(index) else {
            return "";
        };
        let end = starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        self.text[start..end].trim_end_matches('\r')
    }
}

/// A location in a source file: 1-indexed line and column (counted in
/// characters) and the length of the marked text in characters. `file`
/// says which file when several are read together (a blueprint and the
/// bases it extends): 0 is the file named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub line: usize,
    pub column: usize,
    pub len: usize,
    pub file: u32,
}

impl Span {
    pub fn new(line: usize, column: usize, len: usize) -> Span {
        Span {
            line,
            column,
            len,
            file: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SourceFile;

    /// Line `n` is what `str::lines` gives as its `n`th, without a `\r`:
    /// with CRLF endings, a trailing newline or none, blank lines, and
    /// past the end.
    #[test]
    fn line_text_is_the_nth_line_without_its_ending() {
        for text in ["", "a", "a\n", "a\r\nb\r\n", "a\n\nc", "x\ny\r", "\n\n"] {
            let file = SourceFile::new("t", text);
            for line in 0..6 {
                let expected = text
                    .lines()
                    .nth(line.max(1) - 1)
                    .unwrap_or("")
                    .trim_end_matches('\r');
                assert_eq!(file.line_text(line), expected, "{text:?} line {line}");
            }
        }
    }
}
