//! Blueprints that compile with warnings, as data: every file in
//! `blueprints/warn/` gets exactly its golden warnings, and at least one
//! with a finding ID, which `validate --strict` fails on.

use std::path::Path;

use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;

/// A blueprint named by its path from the crate root, so that messages are
/// stable and relative `extends` resolve.
fn load(path: &Path) -> std::sync::Arc<SourceFile> {
    let text = std::fs::read_to_string(path).expect("test blueprint is readable");
    let root = std::env::current_dir().expect("current dir");
    let name = path.strip_prefix(&root).unwrap_or(path);
    SourceFile::new(name.display().to_string(), text)
}

#[test]
fn warning_blueprints_get_their_golden_warnings() {
    insta::glob!("blueprints/warn/*.yaml", |path| {
        let file = load(path);
        let compiled = match compile(&file) {
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
        assert!(
            compiled.diagnostics.iter().any(|d| d.code.is_some()),
            "{} has no warning with a finding ID",
            path.display()
        );
        insta::assert_snapshot!(rendered.join("\n"));
    });
}
