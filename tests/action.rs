//! The GitHub Action (`action.yml`), offline: its structure is what a
//! composite action must be, every input it refers to is declared, and its
//! `run` steps, run the way the runner runs them (bash `-eo pipefail`, the
//! step's `env` with the expressions filled in, `GITHUB_OUTPUT` and
//! `GITHUB_PATH` files), do their job on examples: cargo (a stand-in that
//! records its arguments) installs eksynth, `eksynth check` passes on fresh
//! templates and fails on a stale one, `eksynth validate` writes SARIF, the
//! `rules` input reaches both commands as `--rules`, and the last step fails
//! when either did. The `uses` steps (the cache, the
//! SARIF upload) are checked for what they are given.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    let text = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    serde_saphyr::from_str(&text).expect("action.yml is YAML")
}

fn steps(action: &Value) -> &Vec<Value> {
    action["runs"]["steps"].as_array().expect("runs.steps")
}

fn declared_inputs(action: &Value) -> BTreeMap<String, String> {
    action["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(name, input)| {
            let default = match &input["default"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => panic!("input {name}: default {other} is not a string"),
            };
            (name.clone(), default)
        })
        .collect()
}

/// The `${{ ... }}` expressions of a text.
fn expressions(text: &str) -> Vec<String> {
    text.split("${{")
        .skip(1)
        .map(|rest| {
            rest.split("}}")
                .next()
                .expect("closing }}")
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn the_action_is_a_composite_action_whose_references_resolve() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    assert!(action["name"].is_string() && action["description"].is_string());
    let inputs = declared_inputs(&action);
    for (name, input) in action["inputs"].as_object().expect("inputs") {
        assert!(
            input["description"].is_string(),
            "input {name} has no description"
        );
    }
    let text = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    let mut used = std::collections::BTreeSet::new();
    let mut ids = std::collections::BTreeSet::new();
    for step in steps(&action) {
        let id = step["id"].as_str().expect("every step has an id");
        assert!(ids.insert(id.to_string()), "step id {id} twice");
        assert!(step["name"].is_string(), "step {id} has no name");
        match (&step["run"], &step["uses"]) {
            (Value::String(_), Value::Null) => {
                assert_eq!(step["shell"], "bash", "run step {id} needs `shell: bash`");
            }
            (Value::Null, Value::String(uses)) => {
                assert!(uses.contains('@'), "step {id} pins no version of {uses}");
            }
            _ => panic!("step {id} must have either run or uses"),
        }
    }
    // Every expression names a declared input, an earlier step's output or
    // a context the runner provides.
    for expression in expressions(&text).into_iter().chain(
        steps(&action)
            .iter()
            .filter_map(|s| s["if"].as_str().map(str::to_string)),
    ) {
        // Quoted literals aside, every word is a reference.
        let unquoted: String = expression
            .split('\'')
            .step_by(2)
            .collect::<Vec<_>>()
            .join(" ");
        for word in unquoted.split(|c: char| c.is_whitespace() || "()=!&|".contains(c)) {
            if let Some(name) = word.strip_prefix("inputs.") {
                assert!(
                    inputs.contains_key(name),
                    "`{expression}` uses undeclared input {name}"
                );
                used.insert(name.to_string());
            } else if let Some(rest) = word.strip_prefix("steps.") {
                let id = rest.split('.').next().expect("step id");
                assert!(
                    ids.contains(id),
                    "`{expression}` refers to unknown step {id}"
                );
            } else if !word.is_empty() && !["true", "github.action_ref"].contains(&word) {
                panic!("`{expression}`: unexpected `{word}`");
            }
        }
    }
    let unused: Vec<&String> = inputs.keys().filter(|name| !used.contains(*name)).collect();
    assert!(unused.is_empty(), "inputs never used: {unused:?}");
}

/// One run of the action's steps.
struct Run {
    /// Each step's outcome: `None` when skipped by its `if`, else whether
    /// it succeeded; and its outputs.
    outcomes: BTreeMap<String, Option<bool>>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    /// What the stand-in cargo was called with.
    cargo_args: Vec<String>,
    logs: String,
}

/// A scratch directory, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-action-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The value of one expression, from the inputs and earlier steps' outputs.
fn evaluate(
    expression: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let expression = expression.trim();
    if let Some((left, right)) = expression.split_once("&&") {
        let both =
            evaluate(left, inputs, outputs) == "true" && evaluate(right, inputs, outputs) == "true";
        return both.to_string();
    }
    for operator in ["==", "!="] {
        if let Some((left, right)) = expression.split_once(operator) {
            let equal = evaluate(left, inputs, outputs) == evaluate(right, inputs, outputs);
            return (equal == (operator == "==")).to_string();
        }
    }
    if let Some(literal) = expression
        .strip_prefix('\'')
        .and_then(|e| e.strip_suffix('\''))
    {
        return literal.to_string();
    }
    if let Some(name) = expression.strip_prefix("inputs.") {
        return inputs[name].clone();
    }
    if let Some(rest) = expression.strip_prefix("steps.") {
        let (id, output) = rest.split_once(".outputs.").expect("steps.ID.outputs.NAME");
        return outputs
            .get(id)
            .and_then(|o| o.get(output))
            .cloned()
            .unwrap_or_default();
    }
    match expression {
        "github.action_ref" => "v1".to_string(),
        _ => panic!("no value for `{expression}`"),
    }
}

fn substitute(
    text: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closing }}") + start;
        out.push_str(&evaluate(&rest[start + 3..end], inputs, outputs));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Runs the action in `workspace` with `given` inputs, as the runner would
/// on a cache miss.
fn run_action(name: &str, workspace: &Path, given: &[(&str, &str)]) -> Run {
    run_action_with(
        name,
        workspace,
        given,
        Path::new(env!("CARGO_BIN_EXE_eksynth")),
    )
}

/// Runs the action as `run_action` does, with `eksynth` as what the
/// stand-in cargo installs.
fn run_action_with(name: &str, workspace: &Path, given: &[(&str, &str)], eksynth: &Path) -> Run {
    let action = action();
    let mut inputs = declared_inputs(&action);
    for (name, value) in given {
        assert!(inputs.contains_key(*name), "no input {name}");
        inputs.insert(name.to_string(), value.to_string());
    }
    let scratch = scratch(name);
    let runner_temp = scratch.join("runner-temp");
    let bin = scratch.join("fake-bin");
    std::fs::create_dir_all(&runner_temp).expect("runner temp");
    std::fs::create_dir_all(&bin).expect("fake bin");
    // The stand-in cargo: records its arguments and "installs" the eksynth
    // this test suite built into --root.
    let cargo_log = scratch.join("cargo-args");
    let cargo = format!(
        "#!/usr/bin/env bash\nset -eu\nprintf '%s\\n' \"$@\" > '{}'\nroot=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\"\nln -sf '{}' \"$root/bin/eksynth\"\n",
        cargo_log.display(),
        eksynth.display()
    );
    std::fs::write(bin.join("cargo"), cargo).expect("fake cargo");
    Command::new("chmod")
        .args(["+x", &bin.join("cargo").to_string_lossy()])
        .status()
        .expect("chmod");

    let github_path = scratch.join("github-path");
    std::fs::write(&github_path, "").expect("GITHUB_PATH");
    let system_path = std::env::var("PATH").unwrap_or_default();
    let mut run = Run {
        outcomes: BTreeMap::new(),
        outputs: BTreeMap::new(),
        cargo_args: Vec::new(),
        logs: String::new(),
    };
    for step in steps(&action) {
        let id = step["id"].as_str().expect("id").to_string();
        if let Some(condition) = step["if"].as_str()
            && evaluate(condition, &inputs, &run.outputs) != "true"
        {
            run.outcomes.insert(id, None);
            continue;
        }
        if let Some(uses) = step["uses"].as_str() {
            let with = |key: &str| {
                substitute(
                    step["with"][key].as_str().unwrap_or(""),
                    &inputs,
                    &run.outputs,
                )
            };
            if uses.starts_with("actions/cache@") {
                assert_eq!(with("path"), run.outputs["key"]["root"]);
                assert!(
                    with("key").starts_with("eksynth-Linux-X64-v1-"),
                    "{}",
                    with("key")
                );
                // A miss: no cache-hit output.
                run.outputs.insert(id.clone(), BTreeMap::new());
            } else if uses.starts_with("github/codeql-action/upload-sarif@") {
                let sarif_file = workspace.join(with("sarif_file"));
                let sarif: Value = serde_json::from_str(
                    &std::fs::read_to_string(&sarif_file).expect("the SARIF file exists"),
                )
                .expect("the SARIF file is JSON");
                assert_eq!(sarif["version"], "2.1.0");
                assert_eq!(sarif["runs"][0]["tool"]["driver"]["name"], "eksynth");
            } else {
                panic!("step {id}: unexpected action {uses}");
            }
            run.outcomes.insert(id, Some(true));
            continue;
        }
        let script = step["run"].as_str().expect("run");
        let output_file = scratch.join(format!("output-{id}"));
        std::fs::write(&output_file, "").expect("GITHUB_OUTPUT");
        let added: Vec<String> = std::fs::read_to_string(&github_path)
            .expect("GITHUB_PATH")
            .lines()
            .rev()
            .map(str::to_string)
            .collect();
        let path = added
            .into_iter()
            .chain([bin.display().to_string(), system_path.clone()])
            .collect::<Vec<_>>()
            .join(":");
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(workspace)
            .env("PATH", path)
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_PATH", &github_path)
            .env("RUNNER_TEMP", &runner_temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64");
        if let Some(env) = step["env"].as_object() {
            for (key, value) in env {
                let value = value.as_str().expect("env values are strings");
                command.env(key, substitute(value, &inputs, &run.outputs));
            }
        }
        let output = command.output().expect("run bash");
        run.logs.push_str(&format!(
            "--- {id} ({})\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
        let outputs: BTreeMap<String, String> = std::fs::read_to_string(&output_file)
            .expect("GITHUB_OUTPUT")
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        run.outputs.insert(id.clone(), outputs);
        run.outcomes
            .insert(id.clone(), Some(output.status.success()));
        // The runner stops at a failed step.
        if !output.status.success() {
            break;
        }
    }
    run.cargo_args = std::fs::read_to_string(&cargo_log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    run
}

#[test]
fn the_action_installs_eksynth_and_passes_on_fresh_templates() {
    let run = run_action(
        "fresh",
        root(),
        &[
            (
                "blueprints",
                "examples/quickstart/blueprint.yaml\nexamples/multi-*/blueprint.yaml",
            ),
            ("sarif-file", "target/action-test.sarif"),
        ],
    );
    let logs = &run.logs;
    let root = root().display().to_string();
    assert_eq!(
        run.cargo_args[..4],
        ["install", "--locked", "--path", root.as_str()],
        "{logs}"
    );
    assert_eq!(run.outputs["check"]["code"], "0", "{logs}");
    assert_eq!(run.outputs["validate"]["code"], "0", "{logs}");
    for step in [
        "key", "cache", "install", "path", "check", "validate", "upload", "verdict",
    ] {
        assert_eq!(run.outcomes[step], Some(true), "step {step}:\n{logs}");
    }
    // Both directories were checked, each against its own templates.
    assert!(
        logs.contains("eksynth check: exit 0; eksynth validate: exit 0"),
        "{logs}"
    );
    let _ = std::fs::remove_file(root.to_string() + "/target/action-test.sarif");
}

/// A workspace with a copy of the quickstart example.
fn quickstart_workspace(name: &str) -> PathBuf {
    let workspace = scratch(&format!("{name}-workspace"));
    let example = workspace.join("nodes");
    std::fs::create_dir_all(&example).expect("example dir");
    for file in ["blueprint.yaml", "quickstart.yaml"] {
        std::fs::copy(
            root().join("examples/quickstart").join(file),
            example.join(file),
        )
        .expect("copy example");
    }
    workspace
}

#[test]
fn the_action_fails_on_a_stale_template_and_uploads_nothing_when_told() {
    let workspace = quickstart_workspace("stale");
    let template = workspace.join("nodes/quickstart.yaml");
    let text = std::fs::read_to_string(&template).expect("template");
    std::fs::write(&template, text.replacen("MaxSize", "MaxSize ", 1)).expect("stale template");
    let run = run_action(
        "stale",
        &workspace,
        &[
            ("blueprints", "*/blueprint.yaml"),
            ("upload-sarif", "false"),
        ],
    );
    let logs = &run.logs;
    assert_eq!(run.outputs["check"]["code"], "1", "{logs}");
    assert!(logs.contains("stale: nodes/quickstart.yaml"), "{logs}");
    assert_eq!(run.outputs["validate"]["code"], "0", "{logs}");
    assert_eq!(run.outcomes["upload"], None, "{logs}");
    assert_eq!(run.outcomes["verdict"], Some(false), "{logs}");
    let _ = std::fs::remove_dir_all(&workspace);
}

/// The layout the book's CI chapter shows, `clusters/*/nodes.yaml` checked in their own
/// folders, with a blueprint that does not name its stack: its template
/// would be the blueprint itself. The action fails with the error at the
/// blueprint, does not advise `synth`, and the blueprint stays as it is.
#[test]
fn the_action_reports_a_blueprint_whose_template_would_be_itself() {
    let workspace = scratch("unnamed-workspace");
    let cluster = workspace.join("clusters/prod");
    std::fs::create_dir_all(&cluster).expect("cluster dir");
    let text = std::fs::read_to_string(root().join("examples/quickstart/blueprint.yaml"))
        .expect("example");
    let blueprint = cluster.join("nodes.yaml");
    std::fs::write(&blueprint, text.replace("stack: quickstart\n", "")).expect("blueprint");
    let before = std::fs::read(&blueprint).expect("blueprint");
    let run = run_action(
        "unnamed",
        &workspace,
        &[
            ("blueprints", "clusters/*/nodes.yaml"),
            ("upload-sarif", "false"),
        ],
    );
    let logs = &run.logs;
    assert_eq!(run.outputs["check"]["code"], "2", "{logs}");
    assert!(
        logs.contains("the stack `nodes` would be written over `clusters/prod/nodes.yaml`")
            && logs.contains("--> clusters/prod/nodes.yaml:")
            && logs.contains("::error::eksynth check failed (exit 2): see its error above")
            && !logs.contains("regenerate"),
        "{logs}"
    );
    assert_eq!(run.outcomes["verdict"], Some(false), "{logs}");
    assert_eq!(std::fs::read(&blueprint).expect("blueprint"), before);
    let _ = std::fs::remove_dir_all(&workspace);
}

#[test]
fn the_action_fails_on_findings_with_strict_and_on_a_pattern_that_matches_nothing() {
    let workspace = quickstart_workspace("strict");
    // A hop limit of 2 is a warning (W5002): an error only with --strict.
    let blueprint = workspace.join("nodes/blueprint.yaml");
    let text = std::fs::read_to_string(&blueprint).expect("blueprint");
    assert!(!text.contains("hopLimit"));
    let text = text.replacen(
        "nodeGroups:\n",
        "defaults:\n  imds:\n    hopLimit: 2\nnodeGroups:\n",
        1,
    );
    std::fs::write(&blueprint, text).expect("blueprint");
    let given = [
        ("blueprints", "nodes/blueprint.yaml"),
        ("out-dir", "."),
        ("upload-sarif", "false"),
    ];
    let lenient = run_action("lenient", &workspace, &given);
    assert_eq!(lenient.outputs["validate"]["code"], "0", "{}", lenient.logs);
    let strict = run_action(
        "strict",
        &workspace,
        &[given[0], given[1], given[2], ("strict", "true")],
    );
    assert_eq!(strict.outputs["validate"]["code"], "1", "{}", strict.logs);
    assert_eq!(strict.outcomes["verdict"], Some(false), "{}", strict.logs);
    let sarif = std::fs::read_to_string(workspace.join("eksynth.sarif")).expect("SARIF");
    assert!(sarif.contains("W5002"), "{sarif}");

    let missing = run_action("missing", &workspace, &[("blueprints", "nowhere/*.yaml")]);
    assert_eq!(missing.outputs["check"]["code"], "2", "{}", missing.logs);
    assert!(
        missing
            .logs
            .contains("::error::no blueprint matches nowhere/*.yaml")
    );
    assert_eq!(missing.outcomes["verdict"], Some(false));
    let _ = std::fs::remove_dir_all(&workspace);
}

/// A stand-in eksynth in `dir` that logs each call's arguments to `calls`
/// (one call a line, each argument followed by a tab) and runs this
/// suite's eksynth without the `--rules` options: what the rules find is
/// the business of the tests of `--rules` itself; here what counts is
/// that they reach both commands while the steps still check and validate.
fn recording_eksynth(dir: &Path) -> (PathBuf, PathBuf) {
    let script = dir.join("eksynth");
    let calls = dir.join("calls");
    std::fs::write(
        &script,
        format!(
            "#!/usr/bin/env bash\nset -eu\nprintf '%s\\t' \"$@\" >> '{calls}'\necho >> '{calls}'\nargs=()\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --rules ]; then shift 2; else args+=(\"$1\"); shift; fi\ndone\nexec '{eksynth}' \"${{args[@]}}\"\n",
            calls = calls.display(),
            eksynth = env!("CARGO_BIN_EXE_eksynth"),
        ),
    )
    .expect("recording eksynth");
    Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod");
    (script, calls)
}

/// The arguments of each logged call whose first argument is `subcommand`.
fn calls_of(calls: &Path, subcommand: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .map(|line| line.split_terminator('\t').map(str::to_string).collect())
        .filter(|args: &Vec<String>| args.first().map(String::as_str) == Some(subcommand))
        .collect()
}

#[test]
fn the_rules_input_reaches_both_check_and_validate_with_its_globs_expanded() {
    let workspace = quickstart_workspace("rules");
    std::fs::create_dir_all(workspace.join("policies")).expect("policies");
    for file in ["policies/tags.guard", "policies/names.guard", "extra.guard"] {
        std::fs::write(workspace.join(file), "rule EMPTY { Resources exists }\n").expect("rules");
    }
    let bin = scratch("rules-bin");
    let (eksynth, calls) = recording_eksynth(&bin);
    let run = run_action_with(
        "rules",
        &workspace,
        &[
            ("blueprints", "nodes/blueprint.yaml"),
            ("rules", "policies/*.guard\n  extra.guard"),
            ("upload-sarif", "false"),
        ],
        &eksynth,
    );
    let logs = &run.logs;
    assert_eq!(run.outputs["check"]["code"], "0", "{logs}");
    assert_eq!(run.outputs["validate"]["code"], "0", "{logs}");
    // A glob's files in the shell's (sorted) order, then the plain path.
    let rules = [
        "--rules",
        "policies/names.guard",
        "--rules",
        "policies/tags.guard",
        "--rules",
        "extra.guard",
    ];
    let check = [
        [
            "check",
            "nodes/blueprint.yaml",
            "--out-dir",
            "nodes",
            "--format",
            "yaml",
        ]
        .as_slice(),
        &rules,
    ]
    .concat();
    assert_eq!(calls_of(&calls, "check"), [check], "{logs}");
    let validate = [
        ["validate", "--format", "sarif"].as_slice(),
        &rules,
        &["nodes/blueprint.yaml"],
    ]
    .concat();
    assert_eq!(calls_of(&calls, "validate"), [validate], "{logs}");

    // Without the input, neither command is given rules.
    std::fs::remove_file(&calls).expect("calls");
    let run = run_action_with(
        "no-rules",
        &workspace,
        &[
            ("blueprints", "nodes/blueprint.yaml"),
            ("upload-sarif", "false"),
        ],
        &eksynth,
    );
    assert_eq!(run.outputs["validate"]["code"], "0", "{}", run.logs);
    for subcommand in ["check", "validate"] {
        let called = calls_of(&calls, subcommand);
        assert_eq!(called.len(), 1, "{}", run.logs);
        assert!(!called[0].contains(&"--rules".to_string()), "{called:?}");
    }
    let _ = std::fs::remove_dir_all(&workspace);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn a_rules_pattern_that_matches_nothing_fails_both_steps_before_eksynth_runs() {
    let workspace = quickstart_workspace("no-rules-file");
    let bin = scratch("no-rules-file-bin");
    let (eksynth, calls) = recording_eksynth(&bin);
    let run = run_action_with(
        "no-rules-file",
        &workspace,
        &[
            ("blueprints", "nodes/blueprint.yaml"),
            ("rules", "policies/*.guard"),
        ],
        &eksynth,
    );
    let logs = &run.logs;
    assert_eq!(run.outputs["check"]["code"], "2", "{logs}");
    assert_eq!(run.outputs["validate"]["code"], "2", "{logs}");
    assert_eq!(
        workflow_commands(logs),
        [
            "error: no rules file matches policies/*.guard",
            "error: no rules file matches policies/*.guard"
        ],
        "{logs}"
    );
    // No report was written, so none is uploaded.
    assert_eq!(run.outcomes["upload"], None, "{logs}");
    assert_eq!(run.outcomes["verdict"], Some(false), "{logs}");
    assert!(calls_of(&calls, "check").is_empty() && calls_of(&calls, "validate").is_empty());
    let _ = std::fs::remove_dir_all(&workspace);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn the_run_steps_pass_shellcheck() {
    let shellcheck = std::env::var("SHELLCHECK").unwrap_or_else(|_| "shellcheck".to_string());
    let action = action();
    let scripts: Vec<(&Value, &str)> = steps(&action)
        .iter()
        .filter_map(|step| Some((&step["id"], step["run"].as_str()?)))
        .collect();
    assert!(!scripts.is_empty(), "the action has no run step");
    for (id, script) in scripts {
        // .ci/run puts its pinned shellcheck on PATH.
        let Some(output) = common::run_installed(
            Command::new(&shellcheck).args(["--shell=bash", "--severity=info", "-"]),
            script.as_bytes(),
        ) else {
            return;
        };
        assert!(
            output.status.success(),
            "step {id}:\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

/// The workflow commands the runner would run from a step's log, as it reads
/// them (actions/runner, `src/Runner.Common/ActionCommand.cs` and
/// `src/Runner.Worker/ActionCommandManager.cs`): a line that starts with
/// `::name ...::` once leading white space is trimmed, or holds `##[name]`
/// anywhere, when `name` is a command; nothing between `::stop-commands::T`
/// and `::T::` but that resume.
fn workflow_commands(logs: &str) -> Vec<String> {
    const COMMANDS: [&str; 12] = [
        "error",
        "warning",
        "notice",
        "debug",
        "add-mask",
        "add-matcher",
        "remove-matcher",
        "group",
        "endgroup",
        "echo",
        "set-output",
        "save-state",
    ];
    let name_of = |info: &str| info.split(' ').next().unwrap_or("").to_string();
    let mut stopped: Option<String> = None;
    let mut commands = Vec::new();
    for line in logs.lines() {
        let trimmed = line.trim_start();
        let v2 = trimmed
            .strip_prefix("::")
            .and_then(|rest| rest.split_once("::"))
            .map(|(info, data)| (name_of(info), data.to_string()));
        let v1 = line
            .find("##[")
            .and_then(|at| line[at + 3..].split_once(']'))
            .map(|(info, data)| (name_of(info), data.to_string()));
        let Some((name, data)) = v2.or(v1) else {
            continue;
        };
        match &stopped {
            Some(token) if name == *token => stopped = None,
            Some(_) => {}
            None if name == "stop-commands" => stopped = Some(data),
            None if COMMANDS.contains(&name.as_str()) => commands.push(format!("{name}: {data}")),
            None => {}
        }
    }
    commands
}

#[test]
fn what_eksynth_prints_in_the_action_runs_no_workflow_command() {
    let workspace = quickstart_workspace("commands");
    // The description reaches the template, and the diff of a stale template
    // shows it as a context line: the runner would take `##[warning]` there
    // for a command.
    let blueprint = workspace.join("nodes/blueprint.yaml");
    let text = std::fs::read_to_string(&blueprint).expect("blueprint");
    let text = text.replacen(
        "kind: NodeBlueprint\n",
        "kind: NodeBlueprint\ndescription: \"##[warning]forged\"\n",
        1,
    );
    std::fs::write(&blueprint, text).expect("blueprint");
    let synth = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["synth", "nodes/blueprint.yaml", "--out-dir", "nodes"])
        .current_dir(&workspace)
        .output()
        .expect("synth");
    assert!(synth.status.success(), "{synth:?}");
    let template = workspace.join("nodes/quickstart.yaml");
    let text = std::fs::read_to_string(&template).expect("template");
    assert!(text.contains("##[warning]forged"), "{text}");
    // Stale next to the description, but still a file eksynth wrote (it
    // starts as eksynth's do).
    let at = text.find("##[warning]forged").expect("description");
    let end = at + text[at..].find('\n').expect("a line") + 1;
    let stale = format!("{}# edited by hand\n{}", &text[..end], &text[end..]);
    std::fs::write(&template, stale).expect("stale");
    let run = run_action(
        "commands",
        &workspace,
        &[
            ("blueprints", "nodes/blueprint.yaml"),
            ("upload-sarif", "false"),
        ],
    );
    assert_eq!(run.outputs["check"]["code"], "1", "{}", run.logs);
    assert!(run.logs.contains("##[warning]forged"), "{}", run.logs);
    assert_eq!(
        workflow_commands(&run.logs),
        [
            "error: eksynth check failed (exit 1): regenerate the templates with eksynth synth --out-dir"
        ],
        "{}",
        run.logs
    );
    let _ = std::fs::remove_dir_all(&workspace);
}

#[test]
fn the_action_escapes_what_its_own_annotations_echo() {
    let workspace = quickstart_workspace("annotations");
    let run = run_action(
        "annotations",
        &workspace,
        &[("blueprints", "100%/*.yaml"), ("upload-sarif", "false")],
    );
    assert_eq!(run.outputs["check"]["code"], "2", "{}", run.logs);
    assert_eq!(
        workflow_commands(&run.logs),
        // Both steps expand the patterns.
        [
            "error: no blueprint matches 100%25/*.yaml",
            "error: no blueprint matches 100%25/*.yaml"
        ],
        "{}",
        run.logs
    );
    let _ = std::fs::remove_dir_all(&workspace);
}
