//! No input makes eksynth panic, hang or grow without bound: arbitrary
//! text, and real blueprints cut, spliced and corrupted, all end in a
//! template or in diagnostics; devices, FIFOs and files over the size cap,
//! named on the command line or as a base, are refused at once.

use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;
use proptest::prelude::*;

const SEED: &str = include_str!("../examples/staging-unmanaged/blueprint.yaml");

/// Compiles and checks the outcome is well-formed: errors come with at
/// least one error diagnostic that renders.
fn compile_without_panic(text: String) {
    let file = SourceFile::new("fuzz.yaml", text);
    match compile(&file) {
        Ok(_) => {}
        // A rule path that names no file is an error too (exit 2).
        Err(CompileError::Blueprint(diagnostics) | CompileError::Policy(diagnostics)) => {
            assert!(diagnostics.iter().any(|d| d.is_error()));
            for diagnostic in &diagnostics {
                assert!(!diagnostic.render().is_empty());
            }
        }
        Err(CompileError::Internal(error)) => panic!("internal error: {error}"),
    }
}

/// Fragments that exercise YAML structure and the blueprint's own fields.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(": ".to_string()),
        Just("\n  - ".to_string()),
        Just("{".to_string()),
        Just("]".to_string()),
        Just("!Ref ".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        Just("<<: *a\n".to_string()),
        Just("\t".to_string()),
        Just("~".to_string()),
        Just("maxSize: -1\n".to_string()),
        Just("minSize: 99999999999999999999\n".to_string()),
        Just("labels: {a: [1]}\n".to_string()),
        Just("taints: [{}]\n".to_string()),
        Just("\u{1}".to_string()),
        Just("é✓".to_string()),
        "[a-zA-Z0-9 :.\\-\\n]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        compile_without_panic(text);
    }

    #[test]
    fn truncated_blueprints_never_panic(cut in 0usize..SEED.len()) {
        let mut end = cut;
        while !SEED.is_char_boundary(end) {
            end -= 1;
        }
        compile_without_panic(SEED[..end].to_string());
    }

    #[test]
    fn corrupted_blueprints_never_panic(
        edits in proptest::collection::vec((0usize..SEED.len(), fragment(), 0usize..8), 1..6)
    ) {
        let mut text = SEED.to_string();
        for (at, fragment, remove) in edits {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + remove).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(at..end, &fragment);
        }
        compile_without_panic(text);
    }

    #[test]
    fn deleting_any_line_never_panics(line in 0usize..60) {
        let text: Vec<&str> = SEED.lines().collect();
        let kept: Vec<&str> = text.iter().enumerate().filter(|(i, _)| *i != line).map(|(_, l)| *l).collect();
        compile_without_panic(kept.join("\n"));
    }
}

// ------------------------------------------------ inputs that are no files

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long an answer may take: reading starts only after a file is known
/// to be a regular file under the cap, so every refusal here is at once.
const ANSWER: Duration = Duration::from_secs(2);
/// After this, eksynth is taken to hang: it is killed and the test fails
/// (rather than the test run hanging with it).
const HANG: Duration = Duration::from_secs(10);

/// Runs eksynth with `stdin`, killing it when it hangs; its exit code and
/// stderr.
fn run(args: &[&str], stdin: Stdio) -> (Option<i32>, String) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("eksynth runs");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("eksynth {args:?} still runs after {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    assert!(
        elapsed < ANSWER,
        "eksynth {args:?} took {elapsed:?}:\n{stderr}"
    );
    (status.code(), stderr)
}

/// A fresh directory under the system temporary directory.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-inputs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A file one byte over the cap; sparse, so it costs no disk.
fn just_over_the_cap(path: &Path) {
    let file = std::fs::File::create(path).expect("create");
    file.set_len(eksynth::source::MAX_INPUT_BYTES + 1)
        .expect("set_len");
}

/// The commands that read a blueprint or a template.
const READERS: [&str; 5] = [
    "synth",
    "validate",
    "explain",
    "autoscaler-priorities",
    "diff",
];

#[cfg(unix)]
#[test]
fn devices_fifos_and_files_over_the_cap_are_refused_at_once() {
    let dir = scratch("cli");
    let fifo = dir.join("fifo.yaml");
    mkfifo(&fifo);
    let big = dir.join("big.yaml");
    just_over_the_cap(&big);
    let fifo = fifo.to_str().expect("utf-8");
    let big = big.to_str().expect("utf-8");
    for (input, reason) in [
        ("/dev/zero", "it is a device, not a regular file"),
        ("/dev/urandom", "it is a device, not a regular file"),
        (fifo, "it is a FIFO, not a regular file"),
        (big, "it is larger than 16 MiB, the most eksynth reads"),
        ("/tmp", "it is a directory, not a regular file"),
    ] {
        for command in READERS {
            let args: Vec<&str> = match command {
                "diff" => vec![command, input, input],
                _ => vec![command, input],
            };
            let (code, stderr) = run(&args, Stdio::null());
            assert_eq!(code, Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("cannot read `{input}`: {reason}")),
                "{args:?}: {stderr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn standard_input_is_read_up_to_the_cap() {
    for command in READERS {
        let args: Vec<&str> = match command {
            "diff" => vec![command, "-", "examples/quickstart/quickstart.yaml"],
            _ => vec![command, "-"],
        };
        let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
        let (code, stderr) = run(&args, Stdio::from(zero));
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot read `<stdin>`: it is larger than 16 MiB"),
            "{args:?}: {stderr}"
        );
    }
}

/// A base that is a device, a FIFO or too large is an error at the
/// `extends` line (the blueprint's error: exit 1), at once.
#[cfg(unix)]
#[test]
fn a_base_that_is_no_regular_file_is_refused_at_once() {
    let dir = scratch("bases");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.yaml")).expect("symlink");
    std::os::unix::fs::symlink("/dev/urandom", dir.join("random.yaml")).expect("symlink");
    mkfifo(&dir.join("fifo.yaml"));
    just_over_the_cap(&dir.join("big.yaml"));
    let blueprint = std::fs::read_to_string("examples/quickstart/blueprint.yaml").expect("example");
    for (base, reason) in [
        ("zero.yaml", "it is a device, not a regular file"),
        ("random.yaml", "it is a device, not a regular file"),
        ("fifo.yaml", "it is a FIFO, not a regular file"),
        ("big.yaml", "it is larger than 16 MiB"),
    ] {
        let path = dir.join(format!("extends-{base}"));
        std::fs::write(&path, format!("extends: ./{base}\n{blueprint}")).expect("blueprint");
        let path = path.to_str().expect("utf-8");
        for command in ["synth", "validate"] {
            let (code, stderr) = run(&[command, path], Stdio::null());
            assert_eq!(code, Some(1), "{command} {base}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "cannot read the base blueprint `{}`: {reason}",
                    dir.join(base).display()
                )) && stderr.contains(":1:10"),
                "{command} {base}: {stderr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
