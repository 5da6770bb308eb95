//! Text from the input reaches the terminal escaped, wherever a command
//! echoes it: file names and paths (which may hold a line break or ESC as
//! well as any value) and the blueprint lines `explain` quotes. No output
//! line can then start a GitHub Actions workflow command (`::error ...::`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn eksynth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .output()
        .expect("eksynth runs")
}

/// `eksynth check` of the quickstart example against the templates in
/// `dir`.
fn check_quickstart(dir: &Path) -> Output {
    let out_dir = dir.to_str().expect("UTF-8 path");
    eksynth(&[
        "check",
        "examples/quickstart/blueprint.yaml",
        "--out-dir",
        out_dir,
    ])
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-echo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Both streams, after checking that no line of either starts a workflow
/// command or holds a raw control character other than the line breaks.
fn printed(output: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for line in text.lines() {
        assert!(!line.trim_start().starts_with("::"), "{text}");
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    text
}

const FORGED: &str = "x\n::error file=blueprint.yaml,line=1::forged\u{1b}[2J";

#[test]
fn check_shows_the_names_of_extra_files_escaped() {
    let dir = scratch("check");
    std::fs::copy(
        "examples/quickstart/quickstart.yaml",
        dir.join("quickstart.yaml"),
    )
    .expect("template");
    std::fs::write(dir.join(format!("{FORGED}.yaml")), "").expect("extra file");
    let output = check_quickstart(&dir);
    assert_eq!(output.status.code(), Some(1));
    let text = printed(&output);
    assert!(
        text.contains(&format!(
            "not produced by any blueprint: {}/\
             x\\n::error file=blueprint.yaml,line=1::forged\\u{{1b}}[2J.yaml",
            dir.display()
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_name_is_shown_escaped_when_it_cannot_be_read() {
    let output = eksynth(&["synth", &format!("{FORGED}.yaml")]);
    assert_eq!(output.status.code(), Some(2));
    let text = printed(&output);
    assert!(
        text.starts_with(
            "error: cannot read `x\\n::error file=blueprint.yaml,line=1::forged\\u{1b}[2J.yaml`"
        ),
        "{text}"
    );
}

#[test]
fn diagnostics_name_their_file_escaped() {
    let dir = scratch("diagnostics");
    let path = dir.join(format!("{FORGED}.yaml"));
    std::fs::write(&path, "apiVersion: eksynth.io/v1\nkind: Nodes\n").expect("blueprint");
    let output = eksynth(&["synth", path.to_str().expect("UTF-8 path")]);
    assert_eq!(output.status.code(), Some(1));
    let text = printed(&output);
    assert!(
        text.contains("x\\n::error file=blueprint.yaml,line=1::forged\\u{1b}[2J.yaml:2:7"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_quotes_blueprint_lines_escaped() {
    let dir = scratch("explain");
    let text = std::fs::read_to_string("examples/quickstart/blueprint.yaml").expect("example");
    let (before, after) = text.split_once("nodeGroups:\n").expect("nodeGroups");
    let (group, rest) = after.split_once('\n').expect("a group line");
    // A right-to-left override in a comment would reorder the line shown.
    let text = format!("{before}nodeGroups:\n{group} # \u{202e}reversed\t!\n{rest}");
    let path = dir.join("blueprint.yaml");
    std::fs::write(&path, text).expect("blueprint");
    let output = eksynth(&["explain", path.to_str().expect("UTF-8 path")]);
    assert_eq!(output.status.code(), Some(0), "{}", printed(&output));
    let shown = printed(&output);
    assert!(shown.contains("# \\u{202e}reversed\\t!"), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_shows_a_committed_template_escaped_in_its_diff() {
    let dir = scratch("stale");
    let text = std::fs::read_to_string("examples/quickstart/quickstart.yaml").expect("template");
    let text = text.replacen("Parameters:\n", "# \u{1b}[2J\u{7}\nParameters:\n", 1);
    std::fs::write(dir.join("quickstart.yaml"), text).expect("stale template");
    let output = check_quickstart(&dir);
    assert_eq!(output.status.code(), Some(1));
    let text = printed(&output);
    assert!(text.contains("\n-# \\u{1b}[2J\\u{7}\n"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
