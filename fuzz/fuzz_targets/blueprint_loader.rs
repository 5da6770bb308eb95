//! Blueprint text in, a template or diagnostics out, and never a panic.
//!
//! Any UTF-8 input goes through `blueprint::load` and the whole `compile`
//! pipeline. The target also checks the contracts around them:
//!
//! - a rejected blueprint comes with at least one error, and every
//!   diagnostic renders;
//! - `compile` never accepts what `load` rejects, and lowering has no
//!   internal error;
//! - a synthesized template is deterministic and reads back unchanged from
//!   both YAML and JSON.

#![no_main]

use eksynth::blueprint;
use eksynth::cfn::{json, read, yaml};
use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = SourceFile::new("fuzz.yaml", text);

    let loaded = blueprint::load(&file);
    if let Err(diagnostics) = &loaded {
        assert!(
            diagnostics.iter().any(|d| d.is_error()),
            "load failed without an error diagnostic: {diagnostics:?}"
        );
        for diagnostic in diagnostics {
            assert!(!diagnostic.render().is_empty());
        }
    }

    match (loaded, compile(&file)) {
        (Ok(_), Ok(compiled)) => {
            // Validation findings become diagnostics located in the blueprint.
            for diagnostic in &compiled.diagnostics {
                assert!(!diagnostic.render().is_empty());
            }
            for stack in compiled.stacks {
                let template = stack.template;
                assert_eq!(stack.text, yaml::emit(&template));
                let yaml_text = yaml::emit(&template);
                assert_eq!(
                    yaml_text,
                    yaml::emit(&template),
                    "YAML emit is not deterministic"
                );
                let back = read::read(&SourceFile::new("out.yaml", yaml_text.as_str()));
                assert!(
                    matches!(&back, Ok(t) if *t == template),
                    "synthesized template does not read back from YAML:\n{yaml_text}"
                );
                let json_text = json::emit(&template);
                let back = read::read(&SourceFile::new("out.json", json_text.as_str()));
                assert!(
                    matches!(&back, Ok(t) if *t == template),
                    "synthesized template does not read back from JSON:\n{json_text}"
                );
            }
        }
        // `compile` checks what `load` cannot (suppression IDs, the rule
        // files `rules:` names), so it may reject a blueprint that loads,
        // but only with an error.
        (_, Err(CompileError::Blueprint(diagnostics) | CompileError::Policy(diagnostics))) => {
            assert!(
                diagnostics.iter().any(|d| d.is_error()),
                "compile failed without an error diagnostic: {diagnostics:?}"
            );
            for diagnostic in &diagnostics {
                assert!(!diagnostic.render().is_empty());
            }
        }
        (_, Err(CompileError::Internal(error))) => panic!("internal error: {error}"),
        (Err(diagnostics), Ok(_)) => {
            panic!("compile accepted what load rejected: {diagnostics:?}")
        }
    }
});
