//! No input makes eksynth panic: arbitrary text, and real blueprints cut,
//! spliced and corrupted, all end in a template or in diagnostics.

use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;
use proptest::prelude::*;

const SEED: &str = include_str!("../examples/staging-unmanaged/blueprint.yaml");

/// Compiles and checks the outcome is well-formed: errors come with at
/// least one error diagnostic that renders.
fn compile_without_panic(text: String) {
    let file = SourceFile::new("fuzz.yaml", text);
    match compile(&file) {
        Ok(_) => {}
        Err(CompileError::Blueprint(diagnostics)) => {
            assert!(diagnostics.iter().any(|d| d.is_error()));
            for diagnostic in &diagnostics {
                assert!(!diagnostic.render().is_empty());
            }
        }
        Err(CompileError::Internal(error)) => panic!("internal error: {error}"),
    }
}

/// Fragments that exercise YAML structure and the blueprint's own fields.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(": ".to_string()),
        Just("\n  - ".to_string()),
        Just("{".to_string()),
        Just("]".to_string()),
        Just("!Ref ".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        Just("<<: *a\n".to_string()),
        Just("\t".to_string()),
        Just("~".to_string()),
        Just("maxSize: -1\n".to_string()),
        Just("minSize: 99999999999999999999\n".to_string()),
        Just("labels: {a: [1]}\n".to_string()),
        Just("taints: [{}]\n".to_string()),
        Just("\u{1}".to_string()),
        Just("é✓".to_string()),
        "[a-zA-Z0-9 :.\\-\\n]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        compile_without_panic(text);
    }

    #[test]
    fn truncated_blueprints_never_panic(cut in 0usize..SEED.len()) {
        let mut end = cut;
        while !SEED.is_char_boundary(end) {
            end -= 1;
        }
        compile_without_panic(SEED[..end].to_string());
    }

    #[test]
    fn corrupted_blueprints_never_panic(
        edits in proptest::collection::vec((0usize..SEED.len(), fragment(), 0usize..8), 1..6)
    ) {
        let mut text = SEED.to_string();
        for (at, fragment, remove) in edits {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + remove).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(at..end, &fragment);
        }
        compile_without_panic(text);
    }

    #[test]
    fn deleting_any_line_never_panics(line in 0usize..60) {
        let text: Vec<&str> = SEED.lines().collect();
        let kept: Vec<&str> = text.iter().enumerate().filter(|(i, _)| *i != line).map(|(_, l)| *l).collect();
        compile_without_panic(kept.join("\n"));
    }
}
