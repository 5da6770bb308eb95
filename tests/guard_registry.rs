//! The vendored AWS Guard Rules Registry selection
//! (`data/guard-rules-registry/`) over every example: the rules are the
//! ones `selection.txt` lists, `expected.txt` says for each of them which
//! example templates fail it and why, `eksynth validate --rules` finds
//! exactly those failures, template by template, and `refresh.sh`
//! re-creates the vendored files from a commit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[path = "common/guard_findings.rs"]
mod guard_findings;

const REGISTRY: &str = "data/guard-rules-registry";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The vendored rule files' names, sorted.
fn rule_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(REGISTRY).join("rules"))
        .expect("the vendored rules")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

/// The names of the rules the vendored files declare (`rule NAME` at the
/// start of a line), sorted.
fn rule_names() -> Vec<String> {
    let mut names: Vec<String> = rule_files()
        .iter()
        .flat_map(|file| {
            read(&format!("{REGISTRY}/rules/{file}"))
                .lines()
                .filter_map(|line| {
                    let name = line.strip_prefix("rule ")?.split_whitespace().next()?;
                    Some(name.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names
}

/// One rule's entry of `expected.txt`.
#[derive(Default)]
struct Expected {
    /// Why the rule fails where it fails, or why it passes everywhere.
    why: String,
    /// The example templates that fail it.
    fails: BTreeSet<String>,
}

/// `expected.txt`: `rule NAME` starts an entry, whose `why ...` lines say
/// why and whose `fails PATH` lines name the templates that fail it;
/// comments (`#`) and blank lines are skipped.
fn expected() -> BTreeMap<String, Expected> {
    let text = read(&format!("{REGISTRY}/expected.txt"));
    let mut entries: BTreeMap<String, Expected> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let at = format!("{REGISTRY}/expected.txt:{}", index + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("rule ") {
            assert!(
                entries
                    .insert(name.to_string(), Expected::default())
                    .is_none(),
                "{at}: {name} twice"
            );
            current = Some(name.to_string());
            continue;
        }
        let name = current
            .as_ref()
            .unwrap_or_else(|| panic!("{at}: no rule yet"));
        let entry = entries.get_mut(name).expect("the current rule");
        if let Some(why) = line.strip_prefix("why ") {
            entry.why = format!("{} {why}", entry.why).trim().to_string();
        } else if let Some(path) = line.strip_prefix("fails ") {
            assert!(root().join(path).is_file(), "{at}: no template {path}");
            assert!(entry.fails.insert(path.to_string()), "{at}: {path} twice");
        } else {
            panic!("{at}: expected `rule`, `why` or `fails`, found `{line}`");
        }
    }
    entries
}

/// Every example file that is a template (not a blueprint, a base or a
/// parameters file), as `.ci/run` finds them: a YAML file with a line
/// `AWSTemplateFormatVersion...`.
fn example_templates() -> Vec<String> {
    let mut templates = Vec::new();
    for example in std::fs::read_dir(root().join("examples")).expect("examples") {
        let example = example.expect("entry").path();
        for file in std::fs::read_dir(&example).expect("an example") {
            let file = file.expect("entry").path();
            let is_yaml = file.extension().is_some_and(|ext| ext == "yaml");
            if is_yaml
                && std::fs::read_to_string(&file)
                    .expect("readable")
                    .lines()
                    .any(|line| line.starts_with("AWSTemplateFormatVersion"))
            {
                let relative = file.strip_prefix(root()).expect("under the root");
                templates.push(relative.display().to_string());
            }
        }
    }
    templates.sort();
    templates
}

#[test]
fn the_vendored_rules_are_the_selection() {
    let mut selected: Vec<String> = read(&format!("{REGISTRY}/selection.txt"))
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|path| {
            let name = path.rsplit('/').next().expect("a file name");
            name.to_string()
        })
        .collect();
    selected.sort();
    assert_eq!(rule_files(), selected);
    for file in [
        "LICENSE",
        "NOTICE",
        "README.md",
        "refresh.sh",
        "failures.sh",
    ] {
        assert!(root().join(REGISTRY).join(file).is_file(), "{file}");
    }
}

#[test]
fn every_vendored_rule_has_an_expected_outcome_and_a_reason() {
    let expected = expected();
    let names = rule_names();
    assert!(names.len() >= 30, "the rules were not found: {names:?}");
    let listed: Vec<&String> = expected.keys().collect();
    assert_eq!(listed, names.iter().collect::<Vec<_>>());
    for (name, entry) in &expected {
        assert!(!entry.why.is_empty(), "{name} says no why");
    }
}

#[test]
fn every_example_template_fails_exactly_the_registry_rules_expected_of_it() {
    let templates = example_templates();
    assert!(
        templates.len() >= 20,
        "the templates were not found: {templates:?}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["validate", "--format", "json", "--rules"])
        .arg(format!("{REGISTRY}/rules"))
        .args(&templates)
        .current_dir(root())
        .output()
        .expect("run eksynth");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}):\n{stderr}"));
    let found: BTreeSet<(String, String)> = guard_findings::rule_findings(&report)
        .into_iter()
        .map(|finding| (finding.file, finding.rule))
        .collect();
    let expected: BTreeSet<(String, String)> = expected()
        .into_iter()
        .flat_map(|(rule, entry)| {
            entry
                .fails
                .into_iter()
                .map(move |template| (template, rule.clone()))
        })
        .collect();
    let unexpected: Vec<_> = found.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&found).collect();
    assert!(
        unexpected.is_empty() && missing.is_empty(),
        "failures expected.txt does not list: {unexpected:#?}\nlisted failures not found: {missing:#?}\n{stderr}"
    );
    // Findings fail validate: exit 1 when a rule failed, 0 when none did.
    let code = if expected.is_empty() { 0 } else { 1 };
    assert_eq!(output.status.code(), Some(code), "{stderr}");
}

/// Runs `git ARGS` in `dir`.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("git");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Commits what is staged in `dir`, whoever runs the tests.
fn commit_staged(dir: &Path, message: &str) {
    git(
        dir,
        &[
            "-c",
            "user.name=eksynth",
            "-c",
            "user.email=eksynth@example.com",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-qm",
            message,
        ],
    );
}

/// `refresh.sh` re-creates the vendored files byte for byte from a commit:
/// here a repository holding the selected paths with the vendored texts,
/// read through `GUARD_RULES_REGISTRY_GIT` as from a clone of the
/// registry. A selected path the commit lacks fails the refresh and leaves
/// the vendored rules as they were.
#[test]
fn the_refresh_script_re_creates_the_selection_from_a_commit() {
    let scratch =
        std::env::temp_dir().join(format!("eksynth-guard-refresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let registry = scratch.join("registry");
    let vendored = scratch.join("vendored");
    std::fs::create_dir_all(&vendored).expect("scratch");
    let here = root().join(REGISTRY);
    for line in read(&format!("{REGISTRY}/selection.txt")).lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.rsplit('/').next().expect("a file name");
        let path = registry.join(line);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
        std::fs::copy(here.join("rules").join(name), path).expect("rule");
    }
    for file in ["LICENSE", "NOTICE"] {
        std::fs::copy(here.join(file), registry.join(file)).expect("licence");
    }
    git(&registry, &["init", "-q"]);
    git(&registry, &["add", "-A"]);
    commit_staged(&registry, "rules");
    let commit = git(&registry, &["rev-parse", "HEAD"]);
    for file in ["README.md", "selection.txt", "refresh.sh"] {
        std::fs::copy(here.join(file), vendored.join(file)).expect("copy");
    }
    let refresh = |commit: &str| {
        Command::new("bash")
            .arg(vendored.join("refresh.sh"))
            .arg(commit)
            .env("GUARD_RULES_REGISTRY_GIT", registry.join(".git"))
            .output()
            .expect("refresh.sh")
    };
    let output = refresh(&commit);
    assert!(output.status.success(), "{output:?}");
    let mut files: Vec<String> = std::fs::read_dir(vendored.join("rules"))
        .expect("the refreshed rules")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    files.sort();
    assert_eq!(files, rule_files());
    for file in &files {
        assert_eq!(
            std::fs::read(vendored.join("rules").join(file)).expect("refreshed"),
            std::fs::read(here.join("rules").join(file)).expect("vendored"),
            "{file}"
        );
    }
    for file in ["LICENSE", "NOTICE"] {
        assert_eq!(
            std::fs::read(vendored.join(file)).expect("refreshed"),
            std::fs::read(here.join(file)).expect("vendored")
        );
    }

    // A commit without one of the selected rules changes nothing.
    let first = files.first().expect("a rule");
    let missing = read(&format!("{REGISTRY}/selection.txt"))
        .lines()
        .find(|line| line.ends_with(&format!("/{first}")))
        .expect("its path")
        .to_string();
    git(&registry, &["rm", "-q", &missing]);
    commit_staged(&registry, "one rule fewer");
    let output = refresh(&git(&registry, &["rev-parse", "HEAD"]));
    assert!(!output.status.success(), "{output:?}");
    assert!(vendored.join("rules").join(first).is_file());
    assert_eq!(
        std::fs::read_dir(&vendored)
            .expect("vendored")
            .filter(|entry| entry
                .as_ref()
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .starts_with(".refresh"))
            .count(),
        0,
        "the staging folder is left behind"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
