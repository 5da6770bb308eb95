//! Throughput and memory of the whole pipeline on generated blueprints.
//!
//! For blueprints of 1, 10, 50 and 200 self-managed node groups this
//! measures synthesis (load and check the blueprint, lower it, emit YAML;
//! what `compile` does before it validates), full validation, and the two
//! together; reports median and minimum over about 1.5 s of warm iterations,
//! the first (cold) run, the cost per node group, and the peak of live heap
//! bytes during one synth + validate, counted by a wrapping global allocator.
//!
//! ```sh
//! cargo bench --bench synth              # full run, Markdown table on stdout
//! cargo bench --bench synth -- --quick   # one iteration per size (CI smoke)
//! EKSYNTH_BENCH_QUICK=1 cargo bench --bench synth
//! ```
//!
//! The cold numbers come from a fresh process per size (the bench re-runs
//! itself with `--cold N`), so lazily compiled schemas and other one-time
//! work are in them and in nothing else.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use eksynth::cfn::yaml;
use eksynth::source::SourceFile;
use eksynth::validate::{self, SchemaSet};

// ---------------------------------------------------------------------------
// Counting allocator
// ---------------------------------------------------------------------------

/// `System`, counting live bytes and their high-water mark.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns its result with the peak of live heap bytes above
/// what was live when it started.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

// ---------------------------------------------------------------------------
// Blueprint generator
// ---------------------------------------------------------------------------

#[path = "common/blueprint.rs"]
mod generator;
use generator::blueprint;

// ---------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------

/// One synth + validate: the two durations and the template's size.
struct Run {
    synth: Duration,
    validate: Duration,
    yaml_bytes: usize,
    resources: usize,
    /// The IDs of the validation findings, sorted and deduplicated.
    findings: Vec<&'static str>,
}

fn run_once(file: &Arc<SourceFile>) -> Run {
    // Synthesis: load and check the blueprint, lower it, emit YAML.
    let start = Instant::now();
    let loaded = match eksynth::blueprint::load(file) {
        Ok(loaded) => loaded,
        Err(diagnostics) => {
            for diagnostic in &diagnostics {
                eprintln!("{}", diagnostic.render());
            }
            panic!("the generated blueprint has errors");
        }
    };
    let lowered = match eksynth::eks::lower(&loaded.blueprint) {
        Ok(lowered) => lowered,
        Err(error) => panic!("{error}"),
    };
    let text = yaml::emit(&lowered.template);
    let synth = start.elapsed();

    // Full validation of the synthesized template.
    let start = Instant::now();
    let findings = validate::validate(
        &lowered.template,
        &validate::Context {
            schemas: SchemaSet::embedded(),
            template_bytes: Some(text.len()),
            split_help: validate::SPLIT_HELP,
        },
    );
    let validate = start.elapsed();

    Run {
        synth,
        validate,
        yaml_bytes: black_box(text).len(),
        resources: lowered.template.resources.len(),
        findings: {
            let mut ids: Vec<&'static str> = black_box(findings).iter().map(|f| f.id).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        },
    }
}

struct Stats {
    median: Duration,
    min: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let n = samples.len();
    let median = if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2
    };
    Stats {
        median,
        min: samples[0],
    }
}

struct Cold {
    synth: Duration,
    validate: Duration,
    peak: usize,
}

/// The first run of a size in a fresh process: `--cold N` prints
/// `cold <synth ns> <validate ns> <peak bytes>`.
fn cold_child(groups: usize) -> Cold {
    let exe = std::env::current_exe().expect("the bench's own path");
    let output = Command::new(exe)
        .args(["--cold", &groups.to_string()])
        .output()
        .expect("the bench runs itself");
    assert!(
        output.status.success(),
        "cold run of {groups} groups failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("cold "))
        .expect("a `cold` line");
    let numbers: Vec<u64> = line
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    Cold {
        synth: Duration::from_nanos(numbers[0]),
        validate: Duration::from_nanos(numbers[1]),
        peak: usize::try_from(numbers[2]).expect("fits"),
    }
}

struct Row {
    groups: usize,
    resources: usize,
    yaml_bytes: usize,
    findings: Vec<&'static str>,
    iterations: usize,
    cold: Cold,
    synth: Stats,
    validate: Stats,
    total: Stats,
    peak: usize,
}

fn measure(groups: usize, quick: bool) -> Row {
    let file = SourceFile::new(format!("bench-{groups}.yaml"), blueprint(groups));
    let cold = cold_child(groups);

    // Warm up: one-time work (schema compilation, lazy statics) happens here.
    let first = run_once(&file);
    let warmups = if quick { 0 } else { 2 };
    for _ in 0..warmups {
        run_once(&file);
    }

    // Peak heap of one steady-state synth + validate; its time sizes N.
    let (warm, peak) = peak_during(|| run_once(&file));

    // About 1.5 s of samples per size, at least 10 (1 when quick).
    let one = warm.synth + warm.validate;
    let iterations = if quick {
        1
    } else {
        let budget = Duration::from_millis(1500).as_nanos();
        usize::try_from(budget / one.as_nanos().max(1))
            .unwrap_or(usize::MAX)
            .clamp(10, 2000)
    };
    let mut synth = Vec::with_capacity(iterations);
    let mut validate = Vec::with_capacity(iterations);
    let mut total = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let run = run_once(&file);
        synth.push(run.synth);
        validate.push(run.validate);
        total.push(run.synth + run.validate);
    }

    Row {
        groups,
        resources: first.resources,
        yaml_bytes: first.yaml_bytes,
        findings: first.findings,
        iterations,
        cold,
        synth: stats(synth),
        validate: stats(validate),
        total: stats(total),
        peak,
    }
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn mib(bytes: usize) -> String {
    format!("{:.2}", bytes as f64 / (1024.0 * 1024.0))
}

fn per_group(row: &Row) -> Duration {
    row.total.median / u32::try_from(row.groups).expect("fits")
}

const SIZES: &[usize] = &[1, 10, 50, 200];
const TARGET_GROUPS: usize = 50;
const TARGET_TIME: Duration = Duration::from_millis(30);
const TARGET_PEAK: usize = 50 * 1024 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();

    if let Some(i) = args.iter().position(|a| a == "--cold") {
        let groups: usize = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .expect("--cold N");
        let file = SourceFile::new(format!("bench-{groups}.yaml"), blueprint(groups));
        let (run, peak) = peak_during(|| run_once(&file));
        println!(
            "cold {} {} {peak}",
            run.synth.as_nanos(),
            run.validate.as_nanos()
        );
        return;
    }

    // `cargo bench` passes `--bench`; anything else that runs this binary
    // (`cargo test --benches`) gets the quick smoke run.
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var_os("EKSYNTH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
        || !args.iter().any(|a| a == "--bench");

    let rows: Vec<Row> = SIZES.iter().map(|&n| measure(n, quick)).collect();

    println!(
        "## eksynth synth + validate{}\n",
        if quick { " (quick: 1 iteration)" } else { "" }
    );
    println!(
        "Times in ms, median / min over N warm iterations; cold is the first run in a fresh process. \
         Peak is the high-water mark of live heap bytes during one run.\n"
    );
    println!(
        "| groups | resources | YAML KiB | findings | N | cold synth | cold validate | synth med / min | validate med / min | total med / min | per group | peak MiB | cold peak MiB |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {:.1} | {} | {} | {} | {} | {} / {} | {} / {} | {} / {} | {} | {} | {} |",
            row.groups,
            row.resources,
            row.yaml_bytes as f64 / 1024.0,
            if row.findings.is_empty() {
                "none".to_string()
            } else {
                row.findings.join(", ")
            },
            row.iterations,
            ms(row.cold.synth),
            ms(row.cold.validate),
            ms(row.synth.median),
            ms(row.synth.min),
            ms(row.validate.median),
            ms(row.validate.min),
            ms(row.total.median),
            ms(row.total.min),
            ms(per_group(row)),
            mib(row.peak),
            mib(row.cold.peak),
        );
    }
    println!(
        "\nFindings: the IDs validation reports for the template (`eksynth validate --help` explains them)."
    );

    let target = rows
        .iter()
        .find(|r| r.groups == TARGET_GROUPS)
        .expect("the target size is measured");
    let time_ok = target.total.median < TARGET_TIME;
    let peak_ok = target.peak < TARGET_PEAK;
    println!(
        "\nTarget for {TARGET_GROUPS} groups (< {} ms and < {} MB): **{}** (total median {} ms, peak {} MiB).",
        TARGET_TIME.as_millis(),
        TARGET_PEAK / (1024 * 1024),
        if time_ok && peak_ok { "met" } else { "NOT met" },
        ms(target.total.median),
        mib(target.peak),
    );

    // Scaling is judged on the minimum, which noise from other processes
    // on the machine inflates least; the median's ratio is shown as well.
    let large = rows.last().expect("sizes");
    let per_group_min = |row: &Row| row.total.min.as_secs_f64() / row.groups as f64;
    let ratio = per_group_min(large) / per_group_min(target);
    let median_ratio = per_group(large).as_secs_f64() / per_group(target).as_secs_f64();
    println!(
        "Scaling: per-group cost at {} groups is {ratio:.2}x that at {TARGET_GROUPS} groups \
         (min; median {median_ratio:.2}x): **{}** (linear means about 1; above 1.5 counts as superlinear).",
        large.groups,
        if ratio <= 1.5 {
            "roughly linear"
        } else {
            "superlinear"
        },
    );
}
