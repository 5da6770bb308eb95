//! `synth --out-dir` and `check` end to end: the binary writes committed
//! templates, touches nothing when nothing changed, and `check` reports
//! stale, missing and extra files with the right exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn eksynth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .output()
        .expect("eksynth runs")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-out-dir-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const BLUEPRINT: &str = "examples/quickstart/blueprint.yaml";

#[test]
fn synth_writes_the_template_and_touches_nothing_the_second_time() {
    let dir = temp_dir("idempotent");
    let out = dir.to_str().expect("utf-8 path");
    let first = eksynth(&["synth", BLUEPRINT, "--out-dir", out, "--parameters-file"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let template = dir.join("quickstart.yaml");
    let written = std::fs::read_to_string(&template).expect("template written");
    assert_eq!(
        written,
        std::fs::read_to_string("examples/quickstart/quickstart.yaml").expect("committed")
    );
    let parameters: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("quickstart.parameters.json")).expect("parameters"),
    )
    .expect("JSON");
    assert!(
        parameters
            .as_array()
            .is_some_and(|p| p.iter().all(|e| e.get("ParameterKey").is_some()))
    );
    let modified = std::fs::metadata(&template)
        .and_then(|m| m.modified())
        .expect("mtime");

    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = eksynth(&["synth", BLUEPRINT, "--out-dir", out]);
    assert_eq!(second.status.code(), Some(0));
    assert!(stderr(&second).contains("unchanged"), "{}", stderr(&second));
    assert_eq!(
        std::fs::metadata(&template)
            .and_then(|m| m.modified())
            .expect("mtime"),
        modified
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_passes_on_fresh_templates_and_fails_with_a_diff_on_stale_ones() {
    let dir = temp_dir("check");
    let out = dir.to_str().expect("utf-8 path");
    assert_eq!(
        eksynth(&["synth", BLUEPRINT, "--out-dir", out])
            .status
            .code(),
        Some(0)
    );
    let clean = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));

    let template = dir.join("quickstart.yaml");
    let text = std::fs::read_to_string(&template).expect("template");
    std::fs::write(&template, text.replace("MaxSize: \"3\"", "MaxSize: \"4\"")).expect("edit");
    std::fs::write(dir.join("orphan.yaml"), "Resources: {}\n").expect("extra file");
    let stale = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(stale.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&stale.stdout);
    assert!(
        diff.contains("-      MaxSize: \"4\"") && diff.contains("+      MaxSize: \"3\""),
        "{diff}"
    );
    assert!(stderr(&stale).contains("orphan.yaml"), "{}", stderr(&stale));

    std::fs::remove_file(&template).expect("remove");
    let missing = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("missing"), "{}", stderr(&missing));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_committed_parameters_file_is_checked_without_the_flag() {
    let dir = temp_dir("check-parameters");
    let out = dir.to_str().expect("utf-8 path");
    let synth = eksynth(&["synth", BLUEPRINT, "--out-dir", out, "--parameters-file"]);
    assert_eq!(synth.status.code(), Some(0), "{}", stderr(&synth));
    let clean = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(stderr(&clean).contains("2 files"), "{}", stderr(&clean));

    let parameters = dir.join("quickstart.parameters.json");
    let text = std::fs::read_to_string(&parameters).expect("parameters");
    std::fs::write(
        &parameters,
        text.replacen("\"ParameterValue\": \"", "\"ParameterValue\": \"edited-", 1),
    )
    .expect("edit");
    let stale = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(stale.status.code(), Some(1), "{}", stderr(&stale));
    assert!(
        stderr(&stale).contains("stale:") && stderr(&stale).contains("quickstart.parameters.json"),
        "{}",
        stderr(&stale)
    );

    // Without the file, only `--parameters-file` asks for it.
    std::fs::remove_file(&parameters).expect("remove");
    let without = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
    let required = eksynth(&["check", BLUEPRINT, "--out-dir", out, "--parameters-file"]);
    assert_eq!(required.status.code(), Some(1));
    assert!(
        stderr(&required).contains("missing"),
        "{}",
        stderr(&required)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_out_dir_that_is_a_file_is_a_usage_error_and_nothing_is_written() {
    let dir = temp_dir("file");
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "x").expect("file");
    let result = eksynth(&[
        "synth",
        BLUEPRINT,
        "--out-dir",
        file.to_str().expect("utf-8"),
    ]);
    assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
    assert!(result.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&file).expect("still a file"), "x");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_blueprint_with_errors_writes_nothing_to_the_out_dir() {
    let dir = temp_dir("errors");
    let out = dir.to_str().expect("utf-8 path");
    let result = eksynth(&[
        "synth",
        "tests/blueprints/err/unknown-field.yaml",
        "--out-dir",
        out,
    ]);
    assert_eq!(result.status.code(), Some(1));
    let written: Vec<_> = std::fs::read_dir(Path::new(out))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

const MULTI: &str = "examples/multi-stack/blueprint.yaml";

#[test]
fn a_blueprint_with_several_stacks_writes_one_file_per_stack() {
    let dir = temp_dir("multi");
    let out = dir.to_str().expect("utf-8 path");
    let result = eksynth(&["synth", MULTI, "--out-dir", out, "--parameters-file"]);
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "platform-nodes-general.parameters.json",
            "platform-nodes-general.yaml",
            "platform-nodes-gpu.parameters.json",
            "platform-nodes-gpu.yaml",
            "platform-nodes.parameters.json",
            "platform-nodes.yaml",
        ]
    );
    // Each file is the committed example, and a group stack is told where
    // the main stack is.
    for name in [
        "platform-nodes",
        "platform-nodes-general",
        "platform-nodes-gpu",
    ] {
        let file = format!("{name}.yaml");
        assert_eq!(
            std::fs::read_to_string(dir.join(&file)).expect("written"),
            std::fs::read_to_string(Path::new("examples/multi-stack").join(&file))
                .expect("committed"),
            "{file}"
        );
    }
    let parameters = std::fs::read_to_string(dir.join("platform-nodes-gpu.parameters.json"))
        .expect("parameters");
    assert!(
        parameters.contains(
            "\"ParameterKey\": \"SharedStackName\",\n    \"ParameterValue\": \"platform-nodes\""
        ),
        "{parameters}"
    );
    let check = eksynth(&["check", MULTI, "--out-dir", out, "--parameters-file"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("6 files of 3 stacks up to date"),
        "{}",
        stderr(&check)
    );

    // `--stack` with `--out-dir` writes that stack only.
    std::fs::remove_dir_all(&dir).expect("clean");
    let one = eksynth(&[
        "synth",
        MULTI,
        "--out-dir",
        out,
        "--stack",
        "platform-nodes-gpu",
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let written: Vec<_> = std::fs::read_dir(&dir).expect("out dir").collect();
    assert_eq!(written.len(), 1);
    assert!(dir.join("platform-nodes-gpu.yaml").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synth_to_stdout_needs_stack_when_there_are_several() {
    let all = eksynth(&["synth", MULTI]);
    assert_eq!(all.status.code(), Some(2));
    assert!(all.stdout.is_empty());
    let message = stderr(&all);
    assert!(
        message.contains(
            "makes 3 stacks: `platform-nodes`, `platform-nodes-general`, `platform-nodes-gpu`"
        ) && message.contains("--stack NAME"),
        "{message}"
    );

    let one = eksynth(&["synth", MULTI, "--stack", "platform-nodes-general"]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(
        String::from_utf8_lossy(&one.stdout),
        std::fs::read_to_string("examples/multi-stack/platform-nodes-general.yaml")
            .expect("committed")
    );

    let wrong = eksynth(&["synth", MULTI, "--stack", "platform-nodes-gpus"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains("did you mean `platform-nodes-gpu`?"),
        "{}",
        stderr(&wrong)
    );
}

#[test]
fn check_refuses_two_blueprints_that_make_the_same_stack() {
    let dir = temp_dir("same-stack");
    let out = dir.to_str().expect("utf-8 path");
    let result = eksynth(&["check", BLUEPRINT, BLUEPRINT, "--out-dir", out]);
    assert_eq!(result.status.code(), Some(2));
    assert!(
        stderr(&result).contains("both make the stack `quickstart`"),
        "{}",
        stderr(&result)
    );
}

#[test]
fn json_templates_are_written_and_checked_as_json() {
    let dir = temp_dir("json");
    let out = dir.to_str().expect("utf-8 path");
    let written = eksynth(&["synth", BLUEPRINT, "--format", "json", "--out-dir", out]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let template = dir.join("quickstart.json");
    let text = std::fs::read_to_string(&template).expect("quickstart.json written");
    let stdout = eksynth(&["synth", BLUEPRINT, "--format", "json"]);
    assert_eq!(String::from_utf8_lossy(&stdout.stdout), text);
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert!(
        parsed["Resources"]
            .as_object()
            .is_some_and(|r| !r.is_empty())
    );

    let json_check = ["check", BLUEPRINT, "--out-dir", out, "--format", "json"];
    let clean = eksynth(&json_check);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    // Checked as YAML, the YAML template is missing and the JSON one extra.
    let as_yaml = eksynth(&["check", BLUEPRINT, "--out-dir", out]);
    assert_eq!(as_yaml.status.code(), Some(1));
    assert!(
        stderr(&as_yaml).contains("missing") && stderr(&as_yaml).contains("quickstart.json"),
        "{}",
        stderr(&as_yaml)
    );

    std::fs::write(&template, text.replace("\"MaxSize\"", "\"Maxsize\"")).expect("edit");
    let stale = eksynth(&json_check);
    assert_eq!(stale.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&stale.stdout).contains("+++ b/quickstart.json"),
        "{}",
        String::from_utf8_lossy(&stale.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An out-dir nobody can write to, root included: `/proc/self` takes no
/// new files.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_out_dir_is_a_usage_error_even_for_root() {
    for dir in ["/proc/self", "/proc/self/eksynth-out"] {
        let result = eksynth(&["synth", BLUEPRINT, "--out-dir", dir]);
        assert_eq!(result.status.code(), Some(2), "{dir}: {}", stderr(&result));
        assert!(result.stdout.is_empty());
        assert!(stderr(&result).contains(dir), "{}", stderr(&result));
    }
    assert!(!Path::new("/proc/self/quickstart.yaml").exists());
}

/// The quickstart blueprint without its `stack:` name, written as
/// `dir/file_name`: its stack is named after the file.
fn unnamed_blueprint(dir: &Path, file_name: &str) -> PathBuf {
    let text = std::fs::read_to_string(BLUEPRINT).expect("example");
    let path = dir.join(file_name);
    std::fs::write(&path, text.replace("stack: quickstart\n", "")).expect("blueprint");
    path
}

#[test]
fn synth_never_writes_over_the_blueprint_it_reads() {
    let dir = temp_dir("over-blueprint");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.to_str().expect("utf-8 path");
    for (file_name, format) in [("nodes.yaml", "yaml"), ("nodes.json", "json")] {
        let blueprint = unnamed_blueprint(&dir, file_name);
        let before = std::fs::read(&blueprint).expect("blueprint");
        let path = blueprint.to_str().expect("utf-8 path");
        let result = eksynth(&["synth", path, "--out-dir", out, "--format", format]);
        assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
        assert_eq!(std::fs::read(&blueprint).expect("blueprint"), before);
        let message = stderr(&result);
        assert!(
            message.contains(&format!(
                "error: the stack `nodes` would be written over `{}`, a blueprint this run reads",
                blueprint.display()
            )) && message.contains(&format!(" --> {path}:"))
                && message.contains("name the stack (`stack: NAME`")
                && message.contains("another directory (`--out-dir DIR`)")
                && !message.contains("wrote"),
            "{message}"
        );

        // `check` calls it what it is, not a stale template to synthesize.
        let check = eksynth(&["check", path, "--out-dir", out, "--format", format]);
        assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
        let message = stderr(&check);
        assert!(
            message.contains("a blueprint this run reads")
                && !message.contains("run `eksynth synth"),
            "{message}"
        );
        assert!(check.stdout.is_empty());
        std::fs::remove_file(&blueprint).expect("remove");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synth_never_writes_over_a_base_the_blueprint_extends() {
    let dir = temp_dir("over-base");
    std::fs::create_dir_all(&dir).expect("dir");
    let base = "cluster:\n  name: from-base\n";
    std::fs::write(dir.join("base.yaml"), base).expect("base");
    let text = std::fs::read_to_string(BLUEPRINT).expect("example");
    let blueprint = dir.join("prod.yaml");
    std::fs::write(
        &blueprint,
        text.replace("stack: quickstart\n", "stack: base\nextends: ./base.yaml\n"),
    )
    .expect("blueprint");
    let result = eksynth(&[
        "synth",
        blueprint.to_str().expect("utf-8"),
        "--out-dir",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
    assert!(
        stderr(&result).contains("the stack `base` would be written over"),
        "{}",
        stderr(&result)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("base.yaml")).expect("base"),
        base
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Only a file eksynth wrote is replaced: another blueprint, notes, a
/// hand-written file in a template's place stay, and nothing is written.
#[test]
fn synth_never_writes_over_a_file_it_did_not_write() {
    let dir = temp_dir("foreign");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.to_str().expect("utf-8 path");
    for foreign in [
        "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\n",
        "# notes\n",
        "",
    ] {
        std::fs::write(dir.join("platform-nodes-gpu.yaml"), foreign).expect("foreign");
        let result = eksynth(&["synth", MULTI, "--out-dir", out]);
        assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
        assert!(
            stderr(&result).contains("which is not a file eksynth wrote")
                && stderr(&result).contains("AWSTemplateFormatVersion"),
            "{}",
            stderr(&result)
        );
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["platform-nodes-gpu.yaml"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("platform-nodes-gpu.yaml")).expect("kept"),
            foreign
        );
    }
    // A template eksynth wrote, even edited, is replaced.
    std::fs::write(
        dir.join("platform-nodes-gpu.yaml"),
        "AWSTemplateFormatVersion: \"2010-09-09\"\n<<<<<<< HEAD\n",
    )
    .expect("template");
    let result = eksynth(&["synth", MULTI, "--out-dir", out]);
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stack's file that cannot be written leaves every other stack's file
/// as it was: no set half new, half old.
#[test]
fn stacks_are_written_all_or_none() {
    let dir = temp_dir("all-or-none");
    let out = dir.to_str().expect("utf-8 path");
    let first = eksynth(&["synth", MULTI, "--out-dir", out]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let main = dir.join("platform-nodes.yaml");
    let old = "AWSTemplateFormatVersion: \"2010-09-09\"\n# old\n";
    std::fs::write(&main, old).expect("old main stack");
    std::fs::remove_file(dir.join("platform-nodes-gpu.yaml")).expect("remove");
    std::fs::create_dir(dir.join("platform-nodes-gpu.yaml")).expect("in the way");
    let result = eksynth(&["synth", MULTI, "--out-dir", out]);
    assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
    assert!(
        stderr(&result).contains("it is a directory, not a regular file"),
        "{}",
        stderr(&result)
    );
    assert_eq!(std::fs::read_to_string(&main).expect("main"), old);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run killed between writing a temporary file and renaming it leaves
/// the file behind; the next run removes it, but not a temporary file a
/// running writer holds, nor a hidden file of another program.
#[test]
fn the_next_run_removes_the_temporary_files_of_a_killed_one() {
    let dir = temp_dir("stale");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.to_str().expect("utf-8 path");
    let stale = dir.join(".quickstart.yaml.tmp-4194305-0");
    std::fs::write(&stale, "AWSTemplateFormatVersion: \"2010-09-09\"\n").expect("stale");
    let probe = dir.join(".eksynth-probe-4194305-1");
    std::fs::write(&probe, "").expect("probe");
    let busy = dir.join(".quickstart.parameters.json.tmp-1-2");
    let held = std::fs::File::create(&busy).expect("busy");
    held.lock().expect("lock");
    let other = dir.join(".notes.txt.tmp-1-2");
    std::fs::write(&other, "x").expect("other");

    let result = eksynth(&["synth", BLUEPRINT, "--out-dir", out]);
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    assert!(!stale.exists() && !probe.exists(), "{}", stderr(&result));
    assert!(busy.exists() && other.exists());
    assert!(
        stderr(&result).contains(".quickstart.yaml.tmp-4194305-0, left by a run that was stopped"),
        "{}",
        stderr(&result)
    );
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_never_writes_over_an_existing_file() {
    let dir = temp_dir("import");
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("cluster.yaml");
    let text = std::fs::read_to_string("tests/cmd/eksctl-advanced.yaml").expect("eksctl");
    std::fs::write(&config, &text).expect("config");
    let config = config.to_str().expect("utf-8");
    for out in [config, dir.join("edited.yaml").to_str().expect("utf-8")] {
        std::fs::write(dir.join("edited.yaml"), "# mine\n").expect("edited");
        let result = eksynth(&["import", "eksctl", config, "-o", out]);
        assert_eq!(result.status.code(), Some(2), "{}", stderr(&result));
        assert!(
            stderr(&result).contains("exists; eksynth does not write over it"),
            "{}",
            stderr(&result)
        );
    }
    assert_eq!(std::fs::read_to_string(config).expect("config"), text);
    assert_eq!(
        std::fs::read_to_string(dir.join("edited.yaml")).expect("edited"),
        "# mine\n"
    );
    let new = dir.join("new.yaml");
    let new = new.to_str().expect("utf-8");
    for _ in 0..2 {
        let result = eksynth(&["import", "eksctl", config, "-o", new]);
        assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn man_writes_its_pages_but_never_over_a_file_it_did_not_write() {
    let dir = temp_dir("man");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.to_str().expect("utf-8 path");
    std::fs::write(dir.join("eksynth.1"), "my notes\n").expect("notes");
    let refused = eksynth(&["man", "--out-dir", out]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("eksynth.1`: it is not a file eksynth wrote"),
        "{}",
        stderr(&refused)
    );
    let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(left.len(), 1);
    std::fs::remove_file(dir.join("eksynth.1")).expect("remove");
    let written = eksynth(&["man", "--out-dir", out]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let again = eksynth(&["man", "--out-dir", out]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(!stderr(&again).contains("wrote"), "{}", stderr(&again));
    let _ = std::fs::remove_dir_all(&dir);
}
