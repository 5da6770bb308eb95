//! The policy chapter of the book (`docs/src/guide/policy.md`) shows what
//! eksynth does: the files of its worked example (`docs/src/guide/policy/`)
//! are the ones it shows, the example's blueprint fails the cost-centre
//! rule at its `tags` line and passes it once tagged, and the rules a base
//! names hold the blueprint of the chapter that extends it; README shows
//! the same example.

#[path = "common/guard_findings.rs"]
mod guard_findings;

use std::path::{Path, PathBuf};
use std::process::Command;

use guard_findings::RuleFinding;

const CHAPTER: &str = "docs/src/guide/policy.md";
const EXAMPLE: &str = "docs/src/guide/policy";
const RULES: [&str; 2] = [
    "COST_CENTRE_TAG_ON_AUTO_SCALING_GROUPS",
    "COST_CENTRE_TAG_ON_MANAGED_NODE_GROUPS",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// A scratch directory, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-policy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// `eksynth validate --format json ARGS` in `dir`: its exit code and rule
/// findings, sorted, and its standard error.
fn validate(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<RuleFinding>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["validate", "--format", "json"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run eksynth");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}):\n{stderr}"));
    let mut findings = guard_findings::rule_findings(&report);
    findings.sort();
    (output.status.code(), findings, stderr)
}

/// The text of the chapter's ```yaml block that starts with `first`.
fn snippet(first: &str) -> String {
    let chapter = read(CHAPTER);
    let start = chapter
        .find(&format!("```yaml\n{first}"))
        .unwrap_or_else(|| panic!("no snippet starting `{first}`"))
        + "```yaml\n".len();
    let end = start + chapter[start..].find("```").expect("a closing fence");
    chapter[start..end].to_string()
}

#[test]
fn the_chapter_shows_the_worked_example_files_as_they_are() {
    let chapter = read(CHAPTER);
    for file in ["cost-centre.guard", "blueprint.yaml", "base.yaml"] {
        let text = read(&format!("{EXAMPLE}/{file}"));
        assert!(
            chapter.contains(&format!("\n{text}```\n")),
            "{CHAPTER} does not show {EXAMPLE}/{file} as it is"
        );
    }
}

#[test]
fn the_worked_example_fails_its_rules_at_the_blueprint_tags_line_until_tagged() {
    let blueprint = read(&format!("{EXAMPLE}/blueprint.yaml"));
    let untagged = "  tags: {team: payments}\n";
    let line = blueprint[..blueprint.find(untagged).expect("the tags line")]
        .lines()
        .count()
        + 1;
    let (code, findings, stderr) = validate(
        &root().join(EXAMPLE),
        &["--rules", "cost-centre.guard", "blueprint.yaml"],
    );
    let expected: Vec<RuleFinding> = RULES
        .iter()
        .map(|rule| RuleFinding {
            file: "blueprint.yaml".to_string(),
            rule: rule.to_string(),
            line: Some(line as u64),
        })
        .collect();
    assert_eq!(findings, expected, "{stderr}");
    assert_eq!(code, Some(1), "{stderr}");

    let dir = scratch("tagged");
    std::fs::copy(
        root().join(EXAMPLE).join("cost-centre.guard"),
        dir.join("cost-centre.guard"),
    )
    .expect("rules");
    let tagged = blueprint.replace(
        untagged,
        "  tags: {team: payments, cost-centre: \"4711\"}\n",
    );
    std::fs::write(dir.join("blueprint.yaml"), tagged).expect("blueprint");
    let (code, findings, stderr) =
        validate(&dir, &["--rules", "cost-centre.guard", "blueprint.yaml"]);
    assert_eq!((code, findings), (Some(0), vec![]), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_chapter_shows_what_validate_prints_for_the_worked_example() {
    let command = "$ eksynth validate --rules cost-centre.guard blueprint.yaml\n";
    let chapter = read(CHAPTER);
    let start = chapter
        .find(&format!("```text\n{command}"))
        .unwrap_or_else(|| panic!("{CHAPTER} shows no `{}`", command.trim_end()))
        + "```text\n".len()
        + command.len();
    let end = start + chapter[start..].find("```\n").expect("a closing fence");
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["validate", "--rules", "cost-centre.guard", "blueprint.yaml"])
        .current_dir(root().join(EXAMPLE))
        .env("NO_COLOR", "1")
        .output()
        .expect("run eksynth");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        chapter[start..end],
        printed,
        "{CHAPTER} shows another output than `{}` prints",
        command.trim_end()
    );
}

#[test]
fn the_rules_a_base_names_hold_the_blueprint_that_extends_it() {
    let dir = scratch("extends");
    std::fs::create_dir_all(dir.join("policy")).expect("policy");
    for file in ["base.yaml", "cost-centre.guard"] {
        std::fs::copy(
            root().join(EXAMPLE).join(file),
            dir.join("policy").join(file),
        )
        .expect("copy");
    }
    // The chapter's blueprint passes: it is tagged, and gives no --rules.
    let team = snippet("extends: policy/base.yaml\n");
    std::fs::write(dir.join("team.yaml"), &team).expect("blueprint");
    let (code, findings, stderr) = validate(&dir, &["team.yaml"]);
    assert_eq!((code, findings), (Some(0), vec![]), "{stderr}");

    // Without its cost centre, the base's rule fails it.
    let untagged = team.replace(", cost-centre: \"4711\"", "");
    assert_ne!(untagged, team);
    std::fs::write(dir.join("team.yaml"), &untagged).expect("blueprint");
    let (code, findings, stderr) = validate(&dir, &["team.yaml"]);
    let rules: Vec<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, [RULES[0]], "{stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_readme_shows_the_worked_example_s_rule_and_what_synth_prints() {
    let readme = read("README.md");
    let rules = read(&format!("{EXAMPLE}/cost-centre.guard"));
    let start = rules
        .find("let auto_scaling_groups")
        .expect("the Auto Scaling group rule");
    let end = start + rules[start..].find("}\n}\n").expect("the rule's end") + "}\n}\n".len();
    assert!(
        readme.contains(&format!("```text\n{}```\n", &rules[start..end])),
        "README.md does not show the Auto Scaling group rule of {EXAMPLE}/cost-centre.guard as it is"
    );

    let command = "$ eksynth synth --rules cost-centre.guard blueprint.yaml\n";
    let shown_start = readme
        .find(&format!("```text\n{command}"))
        .unwrap_or_else(|| panic!("README.md shows no `{}`", command.trim_end()))
        + "```text\n".len()
        + command.len();
    let shown_end = shown_start
        + readme[shown_start..]
            .find("```\n")
            .expect("a closing fence");
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["synth", "--rules", "cost-centre.guard", "blueprint.yaml"])
        .current_dir(root().join(EXAMPLE))
        .env("NO_COLOR", "1")
        .output()
        .expect("run eksynth");
    let printed = String::from_utf8_lossy(&output.stderr);
    let shown = &readme[shown_start..shown_end];
    assert!(
        shown.starts_with("error[G:") && printed.contains(shown),
        "README.md shows a finding `synth` does not print:\n{shown}\nit prints:\n{printed}"
    );
    assert_eq!(output.status.code(), Some(1), "{printed}");
    assert!(
        output.stdout.is_empty(),
        "synth wrote a template despite the finding"
    );
}
