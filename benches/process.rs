//! Whole-process times of the `eksynth` binary, and `eksynth validate`
//! against its two peers, cfn-lint and AWS's cloudformation-validate, on the
//! same files.
//!
//! ```sh
//! cargo bench --bench process              # full run
//! cargo bench --bench process -- --quick   # few iterations, no peers (CI smoke)
//! EKSYNTH_BENCH_CFN_LINT=/path/to/cfn-lint cargo bench --bench process
//! EKSYNTH_BENCH_CFN_VALIDATE=/path/to/python3 cargo bench --bench process
//! ```
//!
//! It measures, as whole processes (wall time, minimum and median):
//!
//! - every template command on the one-group `examples/quickstart`
//!   blueprint (`synth`, `check`, `validate`, `validate` of its template,
//!   without and with the CloudFormation Guard rules of `benches/rules/`)
//!   against the 8 ms target, with `eksynth --version` as the floor;
//! - `eksynth validate` and each peer, one after the other, on the
//!   457-resource template of a generated 90-group blueprint (the benchmark
//!   blueprint of `benches/synth.rs`), target 300 times faster than
//!   cfn-lint;
//! - the same over cfn-lint 1.58.0's own fixtures (`good` and `bad`, as the
//!   peer suite selects them) in one invocation of each, target 200 times
//!   faster than cfn-lint.
//!
//! cfn-lint is `$EKSYNTH_BENCH_CFN_LINT`, else `.venv-cfnlint/bin/cfn-lint`
//! (what `.ci/run` installs), else `cfn-lint` on `PATH`.
//! cloudformation-validate is a Python library with no command: it runs as
//! `tests/peer/aws_validator.py` (one engine, every file) under
//! `$EKSYNTH_BENCH_CFN_VALIDATE`, a Python that has the package, else
//! `.venv-cfnlint/bin/python3`, else `python3` on `PATH`, whichever imports
//! it. A peer that is missing is skipped with a message. The fixtures are
//! those the peer suite downloads (`python3 tests/peer/run.py` puts them in
//! `tests/peer/.cache/`), or `$EKSYNTH_BENCH_FIXTURES` (the folder holding
//! `good` and `bad`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eksynth::cfn::yaml;
use eksynth::source::SourceFile;

const EKSYNTH: &str = env!("CARGO_BIN_EXE_eksynth");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TARGET_ONE_GROUP: Duration = Duration::from_millis(8);
const TARGET_LARGE_RATIO: f64 = 300.0;
const TARGET_CORPUS_RATIO: f64 = 200.0;
/// Groups of the generated blueprint: 5 resources each, and 7 shared.
const LARGE_GROUPS: usize = 90;

struct Times {
    min: Duration,
    median: Duration,
}

/// Runs the command `runs` times; any exit status counts (both tools exit
/// non-zero on findings), but it must start and not be killed.
fn time(program: &Path, args: &[&str], runs: usize) -> Times {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
            .current_dir(ROOT)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|error| panic!("{} cannot run: {error}", program.display()));
        samples.push(start.elapsed());
        assert!(
            status.code().is_some(),
            "{} {args:?} was killed",
            program.display()
        );
    }
    samples.sort();
    Times {
        min: samples[0],
        median: samples[samples.len() / 2],
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// A program and the arguments that come before the files it checks.
struct Peer {
    name: &'static str,
    program: PathBuf,
    leading: Vec<String>,
}

impl Peer {
    fn time(&self, files: &[&str], runs: usize) -> Times {
        let mut args: Vec<&str> = self.leading.iter().map(String::as_str).collect();
        args.extend_from_slice(files);
        time(&self.program, &args, runs)
    }
}

/// Whether `program args...` starts and exits 0.
fn runs(program: &Path, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn cfn_lint() -> Option<Peer> {
    let program = if let Some(path) = std::env::var_os("EKSYNTH_BENCH_CFN_LINT") {
        PathBuf::from(path)
    } else {
        let venv = Path::new(ROOT).join(".venv-cfnlint/bin/cfn-lint");
        if venv.is_file() {
            venv
        } else {
            let on_path = PathBuf::from("cfn-lint");
            runs(&on_path, &["--version"]).then_some(on_path)?
        }
    };
    Some(Peer {
        name: "cfn-lint",
        program,
        leading: Vec::new(),
    })
}

/// A Python that imports `cloudformation_validate`, running
/// `tests/peer/aws_validator.py`.
fn cloudformation_validate() -> Option<Peer> {
    let imports = |python: &Path| runs(python, &["-c", "import cloudformation_validate"]);
    let candidates = match std::env::var_os("EKSYNTH_BENCH_CFN_VALIDATE") {
        Some(path) => vec![PathBuf::from(path)],
        None => vec![
            Path::new(ROOT).join(".venv-cfnlint/bin/python3"),
            PathBuf::from("python3"),
        ],
    };
    let program = candidates.into_iter().find(|python| imports(python))?;
    let script = Path::new(ROOT).join("tests/peer/aws_validator.py");
    Some(Peer {
        name: "cloudformation-validate",
        program,
        leading: vec![script.to_string_lossy().into_owned()],
    })
}

fn fixtures() -> Option<PathBuf> {
    let root = match std::env::var_os("EKSYNTH_BENCH_FIXTURES") {
        Some(path) => PathBuf::from(path),
        None => Path::new(ROOT).join("tests/peer/.cache/cfn_lint-1.58.0/test/fixtures/templates"),
    };
    (root.join("good").is_dir() && root.join("bad").is_dir()).then_some(root)
}

/// Every file of `good` and `bad` cfn-lint reads as a template, sorted.
fn fixture_files(root: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = ["good", "bad"]
        .into_iter()
        .flat_map(|dir| files::templates_under(&root.join(dir)))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| path.to_string_lossy().into_owned())
        .collect()
}

/// The 90-group benchmark template, lowered and emitted by the library
/// (`synth` writes no template with an error, and this one has too many
/// outputs for CloudFormation: both tools report it).
fn large_template(dir: &Path) -> PathBuf {
    let file = SourceFile::new("large.yaml", generator::blueprint(LARGE_GROUPS));
    let loaded = eksynth::blueprint::load(&file)
        .unwrap_or_else(|_| panic!("the generated blueprint has errors"));
    let lowered = eksynth::eks::lower(&loaded.blueprint).unwrap_or_else(|error| panic!("{error}"));
    let path = dir.join("large.yaml");
    std::fs::write(&path, yaml::emit(&lowered.template)).expect("write the template");
    path
}

#[path = "common/files.rs"]
mod files;
#[path = "common/blueprint.rs"]
mod generator;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var_os("EKSYNTH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
        || !args.iter().any(|a| a == "--bench");
    let runs = if quick { 3 } else { 30 };
    let eksynth = Path::new(EKSYNTH);
    let scratch = std::env::temp_dir().join(format!("eksynth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let out = scratch.join("quickstart");
    let out = out.to_string_lossy().into_owned();

    println!(
        "## eksynth as a process{}\n",
        if quick { " (quick)" } else { "" }
    );
    println!(
        "Wall time in ms over {runs} runs, min / median; target <= {} ms.\n",
        TARGET_ONE_GROUP.as_millis()
    );
    println!("| command | min | median | target |");
    println!("|---|---:|---:|---|");
    let commands: [(&str, Vec<&str>); 6] = [
        ("--version", vec!["--version"]),
        (
            "synth quickstart",
            vec![
                "synth",
                "examples/quickstart/blueprint.yaml",
                "--out-dir",
                &out,
            ],
        ),
        (
            "check quickstart",
            vec![
                "check",
                "examples/quickstart/blueprint.yaml",
                "--out-dir",
                "examples/quickstart",
            ],
        ),
        (
            "validate quickstart blueprint",
            vec!["validate", "--strict", "examples/quickstart/blueprint.yaml"],
        ),
        (
            "validate quickstart template",
            vec!["validate", "examples/quickstart/quickstart.yaml"],
        ),
        // Beside the line above: what CloudFormation Guard rules add.
        (
            "validate --rules quickstart template",
            vec![
                "validate",
                "--rules",
                "benches/rules",
                "examples/quickstart/quickstart.yaml",
            ],
        ),
    ];
    for (name, args) in &commands {
        let times = time(eksynth, args, runs);
        let target = if *name == "--version" {
            "floor".to_string()
        } else {
            met(times.median <= TARGET_ONE_GROUP).to_string()
        };
        println!(
            "| `eksynth {name}` | {} | {} | {target} |",
            ms(times.min),
            ms(times.median)
        );
    }

    println!("\n## eksynth validate and its peers side by side\n");
    if quick {
        println!("Skipped: quick run.");
        let _ = std::fs::remove_dir_all(&scratch);
        return;
    }
    let (cfn_lint, cloudformation_validate) = (cfn_lint(), cloudformation_validate());
    if cfn_lint.is_none() {
        println!(
            "No cfn-lint: set EKSYNTH_BENCH_CFN_LINT, or install it in .venv-cfnlint; its columns are empty.\n"
        );
    }
    if cloudformation_validate.is_none() {
        println!(
            "No cloudformation-validate: set EKSYNTH_BENCH_CFN_VALIDATE to a Python that has it, or install it in .venv-cfnlint; its columns are empty.\n"
        );
    }
    let peers: Vec<Peer> = [cfn_lint, cloudformation_validate]
        .into_iter()
        .flatten()
        .collect();
    if peers.is_empty() {
        let _ = std::fs::remove_dir_all(&scratch);
        return;
    }
    println!(
        "Wall time of one process each, minimum over the runs; each peer with its default rules ({}).\n",
        peers
            .iter()
            .map(|peer| format!("{} `{}`", peer.name, peer.program.display()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "| input | eksynth ms | cfn-lint ms | ratio | cloudformation-validate ms | ratio | target (cfn-lint) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");

    let large = large_template(&scratch);
    let large = large.to_string_lossy().into_owned();
    let eksynth_large = time(eksynth, &["validate", &large], 20);
    let cells = side_by_side(&peers, &eksynth_large, &[&large], 3);
    println!(
        "| {LARGE_GROUPS}-group template ({} resources) | {} | {} | {} |",
        LARGE_GROUPS * 5 + 7,
        ms(eksynth_large.min),
        cells.columns,
        target(cells.cfn_lint_ratio, TARGET_LARGE_RATIO),
    );

    match fixtures() {
        None => println!(
            "| cfn-lint's fixtures | | | | | | skipped: not downloaded (run `python3 tests/peer/run.py` once, or set EKSYNTH_BENCH_FIXTURES) |"
        ),
        Some(root) => {
            let files = fixture_files(&root);
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let mut eksynth_args = vec!["validate"];
            eksynth_args.extend(&files);
            let eksynth_corpus = time(eksynth, &eksynth_args, 10);
            let cells = side_by_side(&peers, &eksynth_corpus, &files, 2);
            println!(
                "| cfn-lint's fixtures ({} files, one invocation) | {} | {} | {} |",
                files.len(),
                ms(eksynth_corpus.min),
                cells.columns,
                target(cells.cfn_lint_ratio, TARGET_CORPUS_RATIO),
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The peers' cells of one row: for cfn-lint and cloudformation-validate,
/// in that order, the time and how many times eksynth's it is (empty cells
/// for a peer that is missing).
struct Cells {
    columns: String,
    cfn_lint_ratio: Option<f64>,
}

fn side_by_side(peers: &[Peer], eksynth: &Times, files: &[&str], runs: usize) -> Cells {
    let mut columns = Vec::new();
    let mut cfn_lint_ratio = None;
    for name in ["cfn-lint", "cloudformation-validate"] {
        match peers.iter().find(|peer| peer.name == name) {
            Some(peer) => {
                let times = peer.time(files, runs);
                let ratio = times.min.as_secs_f64() / eksynth.min.as_secs_f64();
                if name == "cfn-lint" {
                    cfn_lint_ratio = Some(ratio);
                }
                columns.push(format!("{} | {ratio:.0}x", ms(times.min)));
            }
            None => columns.push(" | ".to_string()),
        }
    }
    Cells {
        columns: columns.join(" | "),
        cfn_lint_ratio,
    }
}

fn target(ratio: Option<f64>, target: f64) -> String {
    match ratio {
        Some(ratio) => format!(">= {target:.0}x: **{}**", met(ratio >= target)),
        None => "no cfn-lint".to_string(),
    }
}
