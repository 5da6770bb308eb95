//! Blueprints that compile with warnings, as data: every file in
//! `blueprints/warn/` gets exactly its golden warnings, and at least one
//! with a finding ID, which `validate --strict` fails on.

mod golden;

#[test]
fn warning_blueprints_get_their_golden_warnings() {
    insta::glob!("blueprints/warn/*.yaml", |path| {
        let (compiled, rendered) = golden::compile_clean(path);
        assert!(
            compiled.diagnostics.iter().any(|d| d.code.is_some()),
            "{} has no warning with a finding ID",
            path.display()
        );
        insta::assert_snapshot!(rendered.join("\n"));
    });
}
