//! The provider schemas embedded in the binary: every resource type of
//! cfn-lint's us-east-1 provider, in `schemas/resources.zip`.
//!
//! Each schema is deflated on its own in that archive, so one type is
//! inflated without touching the others; the types eksynth's own templates
//! use are stored uncompressed, so that compiling a blueprint inflates
//! nothing. `schemas/index.rs`, written by
//! `schemas/refresh.sh` with the archive, says where each type's deflated
//! bytes are: finding a type is a binary search in a static table, and a
//! type no template uses costs nothing more. The archive's own zip
//! directory is for people (`unzip -l`), never read here.

use std::borrow::Cow;

use miniz_oxide::inflate::decompress_slice_iter_to_slice;

static ARCHIVE: &[u8] = include_bytes!("../../../schemas/resources.zip");

/// `(type, offset of its data in ARCHIVE, length there, inflated length,
/// deflated or stored)`, sorted by type.
static INDEX: &[(&str, usize, usize, usize, bool)] = include!("../../../schemas/index.rs");

/// The embedded types, sorted.
pub(super) fn types() -> impl Iterator<Item = &'static str> {
    INDEX.iter().map(|(name, ..)| *name)
}

/// How many types are embedded.
pub(super) fn len() -> usize {
    INDEX.len()
}

/// The type's place in the index, if it is embedded.
pub(super) fn position(resource_type: &str) -> Option<usize> {
    INDEX
        .binary_search_by(|(name, ..)| (*name).cmp(resource_type))
        .ok()
}

/// The schema text of the type at `position`, inflated if need be. `Err`
/// only if the archive and its index disagree, which `tests/schema.rs`
/// rules out.
pub(super) fn text(position: usize) -> Result<Cow<'static, str>, String> {
    let (name, offset, length, inflated, deflated) = INDEX[position];
    let input = ARCHIVE
        .get(offset..offset + length)
        .ok_or_else(|| format!("the embedded schema of `{name}` lies outside the archive"))?;
    if !deflated {
        return std::str::from_utf8(input)
            .map(Cow::Borrowed)
            .map_err(|_| format!("the embedded schema of `{name}` is not UTF-8"));
    }
    let mut output = vec![0; inflated];
    match decompress_slice_iter_to_slice(&mut output, std::iter::once(input), false, true) {
        Ok(written) if written == inflated => {}
        _ => return Err(format!("the embedded schema of `{name}` does not inflate")),
    }
    String::from_utf8(output)
        .map(Cow::Owned)
        .map_err(|_| format!("the embedded schema of `{name}` is not UTF-8"))
}
