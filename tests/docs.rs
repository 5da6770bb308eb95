//! The README documents what the code does: every finding ID, every
//! example.

#[test]
fn every_finding_id_is_documented_in_the_readme() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let missing: Vec<&str> = eksynth::validate::FINDINGS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !readme.contains(&format!("| `{id}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "finding IDs missing from the README: {missing:?}"
    );
}

#[test]
fn every_example_is_listed_in_the_readme() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for entry in std::fs::read_dir("examples").expect("examples") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        assert!(
            readme.contains(&format!("| `{name}` |")),
            "example `{name}` is not in the README"
        );
    }
}
