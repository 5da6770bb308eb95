//! The template reader: a YAML (short- or long-form intrinsics) or JSON
//! template back into the model.

use std::sync::Arc;

use super::template::Template;
use crate::diagnostic::Diagnostic;
use crate::source::SourceFile;

/// Reads a template file. Every problem found is returned, located.
pub fn read(file: &Arc<SourceFile>) -> Result<Template, Vec<Diagnostic>> {
    let _ = file;
    Ok(Template::default())
}
