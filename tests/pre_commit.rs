//! The pre-commit hooks (`.pre-commit-hooks.yaml`): the manifest is what
//! pre-commit reads (`pre-commit validate-manifest`), and each hook, run by
//! pre-commit itself in a scratch git repository, selects the files its
//! `files` and `exclude` say, passes them or not as `pass_filenames` says,
//! passes on fresh templates and fails on a stale one or a bad blueprint,
//! and hands `args: [--rules, policies/]` to eksynth before the files.
//!
//! pre-commit builds a `language: rust` hook with `cargo install`; here the
//! hooks run as `language: system` with the same entry, pointed at the
//! eksynth this suite built through a wrapper that records its arguments.
//! pre-commit and git are needed; without pre-commit the runs are skipped
//! with a note, except under CI (`CI` set), where `.ci/run` installs it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn hooks() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).expect("manifest");
    let hooks: Value = serde_saphyr::from_str(&text).expect("the manifest is YAML");
    hooks.as_array().expect("a list of hooks").clone()
}

fn hook(id: &str) -> Value {
    hooks()
        .into_iter()
        .find(|hook| hook["id"] == id)
        .unwrap_or_else(|| panic!("no hook {id}"))
}

#[test]
fn the_manifest_declares_a_check_and_a_validate_hook_built_by_cargo() {
    let ids: Vec<String> = hooks()
        .iter()
        .map(|hook| hook["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids, ["eksynth-check", "eksynth-validate"]);
    for hook in hooks() {
        let id = &hook["id"];
        assert_eq!(hook["language"], "rust", "{id}");
        // The binary cargo installs from this package.
        let entry = hook["entry"].as_str().expect("entry");
        assert_eq!(
            entry.split_whitespace().next(),
            Some(env!("CARGO_PKG_NAME")),
            "{id}"
        );
        assert!(
            hook["name"].is_string() && hook["files"].is_string(),
            "{id}"
        );
        assert!(
            hook["pass_filenames"].is_boolean(),
            "{id}: say pass_filenames"
        );
    }
    // check is given its blueprints in args; validate the changed files.
    assert_eq!(hook("eksynth-check")["pass_filenames"], false);
    assert_eq!(hook("eksynth-validate")["pass_filenames"], true);
}

#[test]
fn pre_commit_accepts_the_manifest() {
    let Some(output) = common::run_installed(
        Command::new("pre-commit")
            .args(["validate-manifest", ".pre-commit-hooks.yaml"])
            .current_dir(root()),
        b"",
    ) else {
        return;
    };
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A YAML single-quoted scalar.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A scratch git repository with a copy of the quickstart example in
/// `nodes/`, files no hook should read, and a `.pre-commit-config.yaml`
/// whose local hooks are the manifest's, run through a wrapper of eksynth
/// that logs its arguments to `args-<hook id>`.
fn repository(name: &str) -> PathBuf {
    repository_with_args(name, &[])
}

/// A repository as `repository` makes it, with `extra` added to both
/// hooks' `args` as a user's configuration adds them. The wrapper runs
/// eksynth without the `--rules` options it logged: what the rules find is
/// the business of the tests of `--rules` itself.
fn repository_with_args(name: &str, extra: &[&str]) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("eksynth-pre-commit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("nodes")).expect("nodes");
    std::fs::create_dir_all(dir.join(".github/workflows")).expect("workflows");
    for file in ["blueprint.yaml", "quickstart.yaml"] {
        std::fs::copy(
            root().join("examples/quickstart").join(file),
            dir.join("nodes").join(file),
        )
        .expect("copy example");
    }
    std::fs::write(dir.join(".github/workflows/ci.yml"), "on: push\njobs: {}\n").expect("workflow");
    std::fs::write(dir.join("README.md"), "nodes\n").expect("readme");

    let wrapper = dir.join("eksynth-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" >> \"$(dirname \"$0\")/args-$HOOK\"\nargs=()\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --rules ]; then shift 2; else args+=(\"$1\"); shift; fi\ndone\nexec '{}' \"${{args[@]}}\"\n",
            env!("CARGO_BIN_EXE_eksynth")
        ),
    )
    .expect("wrapper");
    Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .expect("chmod");

    let mut config = String::from("repos:\n  - repo: local\n    hooks:\n");
    for hook in hooks() {
        let id = hook["id"].as_str().expect("id");
        let entry = hook["entry"].as_str().expect("entry");
        let (_, subcommand) = entry.split_once(' ').expect("eksynth SUBCOMMAND");
        let mut args: Vec<&str> = if id == "eksynth-check" {
            vec!["nodes/blueprint.yaml", "--out-dir", "nodes"]
        } else {
            vec![]
        };
        args.extend(extra);
        let args = format!("[{}]", args.join(", "));
        config.push_str(&format!(
            "      - id: {id}\n        name: {id}\n        language: system\n        entry: env HOOK={id} {} {subcommand}\n        files: {}\n        exclude: {}\n        pass_filenames: {}\n        args: {args}\n",
            wrapper.display(),
            quoted(hook["files"].as_str().expect("files")),
            quoted(hook["exclude"].as_str().unwrap_or("^$")),
            hook["pass_filenames"],
        ));
    }
    std::fs::write(dir.join(".pre-commit-config.yaml"), config).expect("config");
    git(&dir, &["init", "-q"]);
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// `pre-commit run --all-files` in `dir`, or None without pre-commit.
fn pre_commit_run(dir: &Path) -> Option<(bool, String)> {
    git(dir, &["add", "-A"]);
    let output = common::run_installed(
        Command::new("pre-commit")
            .args(["run", "--all-files", "--color", "never"])
            .current_dir(dir)
            .env("PRE_COMMIT_HOME", dir.join(".cache"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE"),
        b"",
    )?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Some((output.status.success(), text))
}

fn logged_args(dir: &Path, id: &str) -> Vec<String> {
    let mut args: Vec<String> = std::fs::read_to_string(dir.join(format!("args-{id}")))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    args.sort();
    args
}

#[test]
fn the_hooks_pass_on_fresh_templates_with_the_files_pre_commit_selects() {
    let dir = repository("fresh");
    let Some((passed, output)) = pre_commit_run(&dir) else {
        return;
    };
    assert!(passed, "{output}");
    // check: its args only, no file names.
    assert_eq!(
        logged_args(&dir, "eksynth-check"),
        ["--out-dir", "check", "nodes", "nodes/blueprint.yaml"]
    );
    // validate: the blueprint and the template, not the dot-files' YAML.
    assert_eq!(
        logged_args(&dir, "eksynth-validate"),
        ["nodes/blueprint.yaml", "nodes/quickstart.yaml", "validate"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_hooks_fail_on_a_stale_template_and_on_a_bad_blueprint() {
    let dir = repository("stale");
    let template = dir.join("nodes/quickstart.yaml");
    let text = std::fs::read_to_string(&template).expect("template");
    std::fs::write(&template, text.replacen("MaxSize", "MaxSize ", 1)).expect("stale");
    let Some((passed, output)) = pre_commit_run(&dir) else {
        return;
    };
    assert!(!passed, "{output}");
    assert!(output.contains("stale: nodes/quickstart.yaml"), "{output}");

    // Fresh again, then a blueprint with an unknown field: check and
    // validate both report it.
    std::fs::write(&template, text).expect("fresh");
    let blueprint = dir.join("nodes/blueprint.yaml");
    let text = std::fs::read_to_string(&blueprint).expect("blueprint");
    std::fs::write(
        &blueprint,
        text.replacen("instanceType:", "instanceTyp:", 1),
    )
    .expect("bad");
    let (passed, output) = pre_commit_run(&dir).expect("pre-commit ran before");
    assert!(!passed, "{output}");
    assert!(output.contains("unknown field `instanceTyp`"), "{output}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The arguments one hook's wrapper logged, in the order given.
fn logged_args_in_order(dir: &Path, id: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("args-{id}")))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// What each hook's description tells a user to write reaches eksynth:
/// pre-commit puts a hook's `args` after its entry and before the file
/// names, so `args: [--rules, policies/]` gives both commands the rules.
/// A change to a rules file alone runs the check hook again and does not
/// hand the file to validate, which reads blueprints and templates.
#[test]
fn rules_given_in_args_reach_both_hooks_and_a_rules_change_runs_check() {
    for hook in hooks() {
        let description = hook["description"].as_str().expect("description");
        assert!(
            description.contains("`args: [--rules, policies/]`"),
            "{}: {description}",
            hook["id"]
        );
    }
    let dir = repository_with_args("rules", &["--rules", "policies/"]);
    std::fs::create_dir_all(dir.join("policies")).expect("policies");
    std::fs::write(
        dir.join("policies/tags.guard"),
        "rule EMPTY { Resources exists }\n",
    )
    .expect("rules");
    let Some((passed, output)) = pre_commit_run(&dir) else {
        return;
    };
    assert!(passed, "{output}");
    assert_eq!(
        logged_args_in_order(&dir, "eksynth-check"),
        [
            "check",
            "nodes/blueprint.yaml",
            "--out-dir",
            "nodes",
            "--rules",
            "policies/"
        ]
    );
    assert_eq!(
        logged_args_in_order(&dir, "eksynth-validate"),
        [
            "validate",
            "--rules",
            "policies/",
            "nodes/blueprint.yaml",
            "nodes/quickstart.yaml"
        ]
    );

    for id in ["eksynth-check", "eksynth-validate"] {
        std::fs::remove_file(dir.join(format!("args-{id}"))).expect("args");
    }
    let output = common::run_installed(
        Command::new("pre-commit")
            .args(["run", "--color", "never", "--files", "policies/tags.guard"])
            .current_dir(&dir)
            .env("PRE_COMMIT_HOME", dir.join(".cache"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE"),
        b"",
    )
    .expect("pre-commit ran before");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert_eq!(
        logged_args_in_order(&dir, "eksynth-check"),
        [
            "check",
            "nodes/blueprint.yaml",
            "--out-dir",
            "nodes",
            "--rules",
            "policies/"
        ],
        "{text}"
    );
    assert!(
        logged_args_in_order(&dir, "eksynth-validate").is_empty(),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
