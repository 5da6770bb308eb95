//! The bytes of a file as text, or where they stop being UTF-8: the line,
//! the column and the byte offset of the first byte that is not.

use std::fmt;

/// The first byte of a file that is not UTF-8, and where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotUtf8 {
    pub byte: u8,
    /// 1-indexed, as a diagnostic's.
    pub line: usize,
    /// 1-indexed, in characters, as a diagnostic's.
    pub column: usize,
    /// 0-indexed, in bytes from the start of the file.
    pub offset: usize,
}

impl fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the file is not UTF-8: byte 0x{:02x} at line {}, column {} (offset {})",
            self.byte, self.line, self.column, self.offset
        )
    }
}

impl std::error::Error for NotUtf8 {}

/// `bytes` as text, or the first byte that is not UTF-8.
pub fn text_of(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let offset = error.utf8_error().valid_up_to();
        // Everything before `offset` is UTF-8.
        let before = String::from_utf8_lossy(&bytes[..offset]);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        NotUtf8 {
            byte: bytes[offset],
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_byte_that_is_not_utf8_is_located_by_line_column_and_offset() {
        assert_eq!(text_of(b"a: 1\n".to_vec()), Ok("a: 1\n".to_string()));
        let error = text_of(b"a: 1\nb: \xc3\xa9t\xff\xfe\n".to_vec()).unwrap_err();
        assert_eq!(
            error,
            NotUtf8 {
                byte: 0xff,
                line: 2,
                column: 6,
                offset: 11
            }
        );
        assert_eq!(
            error.to_string(),
            "the file is not UTF-8: byte 0xff at line 2, column 6 (offset 11)"
        );
        // A sequence cut short by the end of the file.
        let cut = text_of(b"x\xe2\x82".to_vec()).unwrap_err();
        assert_eq!(
            (cut.byte, cut.line, cut.column, cut.offset),
            (0xe2, 1, 2, 1)
        );
    }
}
