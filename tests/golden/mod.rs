//! What the golden blueprint tests share: a blueprint read under its path
//! from the crate root, and compiled when it must have no error.

use std::path::Path;
use std::sync::Arc;

use eksynth::compile::{CompileError, Compiled, compile};
use eksynth::source::SourceFile;

/// A blueprint named by its path from the crate root, so that messages are
/// stable and relative `extends` resolve.
pub fn load(path: &Path) -> Arc<SourceFile> {
    let text = std::fs::read_to_string(path).expect("test blueprint is readable");
    let root = std::env::current_dir().expect("current dir");
    let name = path.strip_prefix(&root).unwrap_or(path);
    SourceFile::new(name.display().to_string(), text)
}

/// The blueprint at `path` compiled, and its diagnostics rendered; fails
/// the test when it has an error.
pub fn compile_clean(path: &Path) -> (Compiled, Vec<String>) {
    let compiled = match compile(&load(path)) {
        Ok(compiled) => compiled,
        Err(CompileError::Blueprint(diagnostics)) => {
            let rendered: Vec<String> = diagnostics.iter().map(|d| d.render()).collect();
            panic!(
                "{} should compile:\n{}",
                path.display(),
                rendered.join("\n")
            );
        }
        Err(error) => panic!("{}: {error}", path.display()),
    };
    let rendered: Vec<String> = compiled.diagnostics.iter().map(|d| d.render()).collect();
    assert!(
        !compiled.has_errors(),
        "{} has errors:\n{}",
        path.display(),
        rendered.join("\n")
    );
    (compiled, rendered)
}
