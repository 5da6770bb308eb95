//! `eksynth completions SHELL` and `eksynth man`: generated from the command
//! line's definitions, they name every subcommand, the scripts parse in
//! their shells and the manual pages are roff that groff reads without a
//! warning.
//!
//! zsh, fish and groff are needed for the syntax checks; a machine without
//! one skips that check with a note, except under CI (`CI` set), where
//! `.ci/run` installs them and a missing one fails.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn eksynth(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .output()
        .expect("run eksynth");
    assert!(
        output.status.success(),
        "eksynth {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The subcommands `eksynth --help` lists, but `help`.
fn subcommands() -> Vec<String> {
    let help = String::from_utf8(eksynth(&["--help"]).stdout).expect("UTF-8 help");
    let commands: Vec<String> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    assert!(commands.len() >= 9, "subcommands in --help: {commands:?}");
    assert!(commands.iter().any(|c| c == "completions") && commands.iter().any(|c| c == "man"));
    commands
}

/// Runs `program args` with `input` on stdin; None when the program is
/// missing.
fn run_tool(program: &str, args: &[&str], input: &[u8]) -> Option<Output> {
    common::run_installed(Command::new(program).args(args), input)
}

/// The shell's syntax check of a script on stdin.
fn syntax_check(shell: &str) -> (&'static str, &'static [&'static str]) {
    match shell {
        "bash" => ("bash", &["-n"]),
        "zsh" => ("zsh", &["-n"]),
        "fish" => ("fish", &["--no-execute"]),
        _ => unreachable!("no syntax check for {shell}"),
    }
}

#[test]
fn completions_of_bash_zsh_and_fish_name_every_subcommand_and_parse() {
    let subcommands = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let script = eksynth(&["completions", shell]).stdout;
        let text = String::from_utf8_lossy(&script);
        for subcommand in &subcommands {
            assert!(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .any(|word| word == subcommand),
                "{shell} completions do not name `{subcommand}`"
            );
        }
        let (program, args) = syntax_check(shell);
        if let Some(output) = run_tool(program, args, &script) {
            assert!(
                output.status.success() && output.stderr.is_empty(),
                "{shell} does not parse its completions: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

#[test]
fn the_syntax_checks_catch_a_broken_script() {
    // The checks above prove something only if they reject broken input.
    for shell in ["bash", "zsh", "fish"] {
        let (program, args) = syntax_check(shell);
        if let Some(output) = run_tool(program, args, b"if true; then\n") {
            assert!(!output.status.success(), "{shell} accepted a broken script");
        }
    }
}

#[test]
fn completions_of_an_unknown_shell_are_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(["completions", "tcsh"])
        .output()
        .expect("run eksynth");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("possible values: bash, elvish, fish, powershell, zsh"),
        "{stderr}"
    );
}

/// groff's warnings (all of them, `-ww`) on a manual page; None without
/// groff.
fn groff_warnings(roff: &[u8]) -> Option<String> {
    let output = run_tool("groff", &["-man", "-ww", "-z", "-Tutf8"], roff)?;
    assert!(output.status.success(), "groff failed");
    Some(String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn groff_reports_broken_roff() {
    if let Some(warnings) = groff_warnings(b".TH x 1\n.SH NAME\n.NOSUCHMACRO\n") {
        assert!(warnings.contains("NOSUCHMACRO"), "{warnings}");
    }
}

fn assert_valid_page(name: &str, roff: &[u8]) {
    let text = String::from_utf8_lossy(roff);
    assert!(
        text.lines().any(|line| line.starts_with(".TH ")) && text.contains(".SH NAME\n"),
        "{name} is not a manual page:\n{text}"
    );
    if let Some(warnings) = groff_warnings(roff) {
        assert!(warnings.is_empty(), "{name}: groff warns:\n{warnings}");
    }
}

#[test]
fn the_man_page_is_valid_roff_naming_every_subcommand() {
    let roff = eksynth(&["man"]).stdout;
    assert_valid_page("eksynth(1)", &roff);
    let text = String::from_utf8_lossy(&roff);
    assert!(text.contains(".TH eksynth 1 "), "{text}");
    for subcommand in subcommands() {
        // roff writes a hyphen as `\-`.
        let reference = format!("eksynth\\-{}(1)", subcommand.replace('-', "\\-"));
        assert!(
            text.contains(&reference),
            "eksynth(1) does not name {reference}"
        );
    }
}

#[test]
fn man_out_dir_writes_a_valid_page_per_subcommand() {
    let dir = std::env::temp_dir().join(format!("eksynth-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    eksynth(&["man", "--out-dir", dir.to_str().expect("UTF-8 path")]);
    let mut expected: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("eksynth-{s}.1"))
        .chain(["eksynth.1".to_string()])
        .collect();
    expected.sort();
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .expect("man dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    written.sort();
    // The top-level command and its subcommands, and the pages of their
    // own subcommands.
    assert!(
        expected.iter().all(|page| written.contains(page)),
        "{written:?}"
    );
    for name in &written {
        let roff = std::fs::read(Path::new(&dir).join(name)).expect("page");
        assert_valid_page(name, &roff);
        // Every page another page names is written.
        let text = String::from_utf8_lossy(&roff);
        for (at, _) in text.match_indices("eksynth\\-") {
            let rest = &text[at..];
            let end = rest.find("(1)").unwrap_or(0);
            let named = rest[..end].replace("\\-", "-");
            if end > 0 && !named.contains(char::is_whitespace) {
                assert!(
                    written.contains(&format!("{named}.1")),
                    "{name} names {named}(1)"
                );
            }
        }
    }
    // The page on stdout is the one written as eksynth.1.
    assert_eq!(
        std::fs::read(dir.join("eksynth.1")).expect("eksynth.1"),
        eksynth(&["man"]).stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_check_skipped_for_a_missing_program_says_so_without_nocapture() {
    if std::env::var_os("EKSYNTH_SKIP_PROBE").is_some() {
        // The probe: a program that is not installed.
        assert!(run_tool("eksynth-no-such-shell", &["-n"], b"").is_none());
        return;
    }
    // This test binary, running only the probe above, outside CI.
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "a_check_skipped_for_a_missing_program_says_so_without_nocapture",
        ])
        .env("EKSYNTH_SKIP_PROBE", "1")
        .env_remove("CI")
        .output()
        .expect("the test binary runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note: eksynth-no-such-shell is not installed; this check is skipped"),
        "{stderr}"
    );
}

#[test]
fn the_top_level_help_names_each_command_in_one_short_line() {
    let help = String::from_utf8(eksynth(&["--help"]).stdout).expect("UTF-8 help");
    for line in help.lines() {
        assert!(
            line.chars().count() <= 150,
            "{} characters: {line}",
            line.chars().count()
        );
    }
}
