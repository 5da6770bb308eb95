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

#[test]
fn the_readme_gives_every_finding_the_level_of_its_id() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for (id, _) in eksynth::validate::FINDINGS {
        let level = eksynth::diagnostic::Severity::of_id(id).name();
        assert!(
            readme.contains(&format!("| `{id}` | {level} |")),
            "the README's findings table does not give `{id}` the level {level}"
        );
    }
}

/// The first cell of each table row in `text`, when it is code: `` | `x` | ``.
fn code_cells(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| `")?.split_once("` |"))
        .map(|(cell, _)| cell)
        .collect()
}

#[test]
fn the_readme_documents_no_finding_or_example_that_does_not_exist() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let ids: Vec<&str> = code_cells(&readme)
        .into_iter()
        .filter(|cell| {
            cell.len() == 5
                && cell.starts_with(['E', 'W', 'I'])
                && cell[1..].chars().all(|c| c.is_ascii_digit())
        })
        .collect();
    assert!(ids.len() >= 40, "the findings table was not found");
    for id in ids {
        assert!(
            eksynth::validate::FINDINGS
                .iter()
                .any(|(known, _)| *known == id),
            "the README documents `{id}`, which is no finding"
        );
    }
    let examples = readme
        .split("\n## Examples")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("an Examples section");
    let listed = code_cells(examples);
    assert!(listed.len() >= 14, "the examples table was not found");
    for name in listed {
        assert!(
            std::path::Path::new("examples").join(name).is_dir(),
            "the README lists the example `{name}`, which does not exist"
        );
    }
}

#[test]
fn the_committed_blueprint_schema_is_the_generated_one() {
    let committed =
        std::fs::read_to_string("schemas/blueprint.schema.json").expect("committed schema");
    let mut generated = serde_json::to_string_pretty(&eksynth::blueprint::schema::json_schema())
        .expect("serializes");
    generated.push('\n');
    assert_eq!(
        committed, generated,
        "regenerate with `eksynth schema > schemas/blueprint.schema.json`"
    );
}

#[test]
fn every_example_and_valid_corpus_blueprint_matches_the_schema() {
    let schema = eksynth::blueprint::schema::json_schema();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("the schema compiles");
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir("examples")
        .expect("examples")
        .map(|e| e.expect("entry").path().join("blueprint.yaml"))
        .filter(|path| path.exists())
        .collect();
    paths.extend(
        std::fs::read_dir("tests/blueprints/ok")
            .expect("corpus")
            .map(|e| e.expect("entry").path()),
    );
    // Bases that other blueprints extend: the presets and an example's.
    paths.extend(
        std::fs::read_dir("blueprints/presets")
            .expect("presets")
            .map(|e| e.expect("entry").path()),
    );
    paths.push("examples/env-base/base.yaml".into());
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable");
        let value: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn the_schema_rejects_what_the_loader_rejects_by_name() {
    let schema = eksynth::blueprint::schema::json_schema();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("compiles");
    let text =
        std::fs::read_to_string("tests/blueprints/err/unknown-field.yaml").expect("readable");
    let value: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
    assert!(!validator.is_valid(&value));
}

/// The field reference in docs/ is what the field tables the loader
/// decodes with generate. `INSTA_UPDATE=always` (as for the snapshots)
/// writes it anew instead of comparing.
#[test]
fn the_committed_field_reference_is_the_generated_one() {
    let path = "docs/blueprint-reference.md";
    let generated = eksynth::blueprint::schema::reference();
    if std::env::var("INSTA_UPDATE").is_ok_and(|update| update == "always") {
        std::fs::write(path, &generated).expect("writes the field reference");
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} differs from what the field tables in src/blueprint/ generate; \
         regenerate it with `INSTA_UPDATE=always cargo test --test docs`"
    );
}

#[test]
fn every_example_blueprint_names_the_schema_for_editors() {
    let mut blueprints: Vec<std::path::PathBuf> = std::fs::read_dir("examples")
        .expect("examples")
        .map(|e| e.expect("entry").path().join("blueprint.yaml"))
        .filter(|path| path.exists())
        .collect();
    blueprints.push("examples/env-base/base.yaml".into());
    for path in blueprints {
        let text = std::fs::read_to_string(&path).expect("readable");
        let first = text.lines().next().unwrap_or_default();
        let schema = first
            .strip_prefix("# yaml-language-server: $schema=")
            .unwrap_or_else(|| panic!("{}: first line {first:?}", path.display()));
        let target = path.parent().expect("folder").join(schema);
        assert!(target.is_file(), "{}: {schema} is no file", path.display());
    }
}
