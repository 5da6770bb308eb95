//! The whole pipeline for one blueprint: load, check, lower.

use std::sync::Arc;

use crate::blueprint;
use crate::cfn::Template;
use crate::diagnostic::Diagnostic;
use crate::eks;
use crate::source::SourceFile;

/// A synthesized template and the warnings about its blueprint.
#[derive(Debug)]
pub struct Compiled {
    pub template: Template,
    pub warnings: Vec<Diagnostic>,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The blueprint has errors; all diagnostics found are here.
    #[error("the blueprint has errors")]
    Blueprint(Vec<Diagnostic>),
    #[error(transparent)]
    Internal(#[from] eks::Error),
}

pub fn compile(file: &Arc<SourceFile>) -> Result<Compiled, CompileError> {
    let loaded = blueprint::load(file).map_err(CompileError::Blueprint)?;
    let template = eks::lower(&loaded.blueprint)?;
    Ok(Compiled {
        template,
        warnings: loaded.warnings,
    })
}
