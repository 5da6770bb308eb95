//! What the integration tests share: running the programs some checks need
//! (shells, groff, shellcheck, pre-commit, PyYAML's python3).
//!
//! A machine without one of them skips that check with a note. Under CI
//! (`CI` set, as `.ci/run` sets it after installing every one of them) a
//! missing program fails instead, so that no check is skipped there
//! unnoticed.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

/// Notes that `what` is missing and the check that needs it is skipped;
/// under CI, fails the test. The note goes to the process's standard
/// error itself, which the test harness does not capture (it captures
/// `eprintln!`), so that a run shows what it did not check.
pub fn skip_without(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is not installed (.ci/run installs it)"
    );
    let _ = writeln!(
        std::io::stderr().lock(),
        "note: {what} is not installed; this check is skipped"
    );
}

/// Runs `command` with `input` on its stdin and collects its output; None
/// when its program is not installed (see [`skip_without`]).
pub fn run_installed(command: &mut Command, input: &[u8]) -> Option<Output> {
    let program = command.get_program().to_string_lossy().into_owned();
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            skip_without(&program);
            return None;
        }
        Err(error) => panic!("cannot run {program}: {error}"),
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    Some(child.wait_with_output().expect("wait"))
}
