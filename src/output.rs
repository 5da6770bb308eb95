//! Writing templates to a directory, atomically, and checking committed
//! templates for staleness.
//!
//! - [`prepare_out_dir`] creates the output directory and proves it is
//!   writable before anything is written, so a run that cannot write writes
//!   nothing.
//! - [`write_atomically`] replaces a file through a temporary file and a
//!   `rename`, so a reader (or a crash) never sees a partial template, and
//!   leaves a file whose contents are already right untouched (same bytes,
//!   same modification time).
//! - [`check`] compares a directory with what the blueprints produce: stale
//!   files (with a [`unified_diff`]), missing files, and template files no
//!   blueprint produces.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What [`write_atomically`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The file was created or replaced.
    Written,
    /// The file already had these contents; it was not opened for writing.
    Unchanged,
}

/// Why the output directory or a file in it could not be written.
///
/// The messages include the underlying I/O error, so printing the error
/// alone says everything.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output directory `{}` does not exist", path.display())]
    DirMissing { path: PathBuf },
    #[error("output directory `{}` is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("output directory `{}` is not writable: {error}", path.display())]
    NotWritable { path: PathBuf, error: io::Error },
    #[error("cannot create output directory `{}`: {error}", path.display())]
    CreateDir { path: PathBuf, error: io::Error },
    #[error("cannot inspect output directory `{}`: {error}", path.display())]
    InspectDir { path: PathBuf, error: io::Error },
    #[error("`{name}` is not a plain file name")]
    InvalidFileName { name: String },
    #[error("cannot write `{}`: {error}", path.display())]
    Write { path: PathBuf, error: io::Error },
}

/// The files `synth --out-dir` writes for one stack, as (file name,
/// contents): the template, `{name}.{extension}`, and with `parameters`,
/// the parameters file `{name}.parameters.json` (`[]` when the template
/// has none, so that a deploy script can always pass it).
pub fn stack_files(
    name: &str,
    extension: &str,
    template_text: &str,
    parameters: Option<&[(String, String)]>,
) -> Vec<(String, String)> {
    let mut files = vec![(stack_file_name(name, extension), template_text.to_string())];
    if let Some(parameters) = parameters {
        files.push((parameters_file_name(name), parameters_file(parameters)));
    }
    files
}

/// `{name}.{extension}`, e.g. `stack_file_name("nodes", "json")`.
pub fn stack_file_name(name: &str, extension: &str) -> String {
    format!("{name}.{extension}")
}

/// `{name}.parameters.json`.
pub fn parameters_file_name(name: &str) -> String {
    format!("{name}.parameters.json")
}

/// The parameters as the JSON file both `aws cloudformation create-stack
/// --parameters file://…` and (AWS CLI v2) `aws cloudformation deploy
/// --parameter-overrides file://…` read:
/// `[{"ParameterKey": "…", "ParameterValue": "…"}]`, pretty-printed, in the
/// order given, with a trailing newline.
pub fn parameters_file(parameters: &[(String, String)]) -> String {
    let entries: Vec<serde_json::Value> = parameters
        .iter()
        .map(|(key, value)| {
            // `preserve_order` keeps ParameterKey before ParameterValue.
            let mut entry = serde_json::Map::new();
            entry.insert("ParameterKey".into(), key.as_str().into());
            entry.insert("ParameterValue".into(), value.as_str().into());
            serde_json::Value::Object(entry)
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries).expect("strings always serialize");
    text.push('\n');
    text
}

/// Makes temporary names unique within this process; the process ID makes
/// them unique between processes.
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique_suffix() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates `dir` (and its parents) when it is missing, and checks that it is
/// a directory this process can create files in, by creating and removing a
/// probe file. Call it before writing anything, so that nothing is written
/// when the directory is unusable.
pub fn prepare_out_dir(dir: &Path) -> Result<(), OutputError> {
    match fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(OutputError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        // Missing, or not reachable (a parent is a file, no permission):
        // creating it says why it cannot be.
        Err(_) => {
            fs::create_dir_all(dir).map_err(|error| OutputError::CreateDir {
                path: dir.to_path_buf(),
                error,
            })?;
        }
    }
    let (probe, file) =
        create_unique(dir, ".eksynth-probe").map_err(|error| OutputError::NotWritable {
            path: dir.to_path_buf(),
            error,
        })?;
    drop(file);
    fs::remove_file(&probe).map_err(|error| OutputError::NotWritable {
        path: dir.to_path_buf(),
        error,
    })
}

/// Creates a new file `{dir}/{prefix}-{pid}-{counter}` that did not exist.
fn create_unique(dir: &Path, prefix: &str) -> io::Result<(PathBuf, File)> {
    let mut attempts = 0;
    loop {
        let path = dir.join(format!("{prefix}-{}", unique_suffix()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            // Left behind by a process with a recycled ID: take another.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => {
                attempts += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// A temporary file that is closed and removed when dropped, unless it was
/// renamed into place.
struct TempFile {
    path: PathBuf,
    file: Option<File>,
    renamed: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Closed first: some platforms cannot remove an open file.
        drop(self.file.take());
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Writes `dir/file_name` atomically: the contents go to a temporary file in
/// `dir` (`.{file_name}.tmp-{pid}-{counter}`), which is flushed to disk and
/// renamed over the target. Readers see the old file or the new one, never a
/// partial one.
///
/// When the target already has exactly these contents it is not opened for
/// writing (its modification time does not change) and the result is
/// [`WriteOutcome::Unchanged`]. On any error the target is left as it was
/// and the temporary file is removed. A replaced file keeps its permissions.
pub fn write_atomically(
    dir: &Path,
    file_name: &str,
    contents: &[u8],
) -> Result<WriteOutcome, OutputError> {
    if file_name.is_empty()
        || file_name == "."
        || file_name == ".."
        || file_name.contains(['/', '\\'])
        || file_name.contains('\0')
    {
        return Err(OutputError::InvalidFileName {
            name: file_name.to_owned(),
        });
    }
    match fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(OutputError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(OutputError::DirMissing {
                path: dir.to_path_buf(),
            });
        }
        Err(error) => {
            return Err(OutputError::InspectDir {
                path: dir.to_path_buf(),
                error,
            });
        }
    }

    let target = dir.join(file_name);
    // Any error reading the target (missing, a directory, unreadable) means
    // it must be written; the rename reports what really stands in the way.
    if fs::read(&target).is_ok_and(|current| current == contents) {
        return Ok(WriteOutcome::Unchanged);
    }
    let permissions = fs::metadata(&target)
        .ok()
        .filter(fs::Metadata::is_file)
        .map(|metadata| metadata.permissions());

    let (path, file) = create_unique(dir, &format!(".{file_name}.tmp")).map_err(|error| {
        OutputError::NotWritable {
            path: dir.to_path_buf(),
            error,
        }
    })?;
    let mut temp = TempFile {
        path,
        file: Some(file),
        renamed: false,
    };
    let write_error = |error| OutputError::Write {
        path: target.clone(),
        error,
    };
    let file = temp.file.as_mut().expect("open until dropped");
    file.write_all(contents).map_err(write_error)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions).map_err(write_error)?;
    }
    file.sync_all().map_err(write_error)?;
    drop(temp.file.take());
    fs::rename(&temp.path, &target).map_err(write_error)?;
    temp.renamed = true;
    sync_dir(dir);
    Ok(WriteOutcome::Written)
}

/// Makes the rename durable. Best effort: not every platform or file system
/// can sync a directory, and the file itself is already on disk.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// What [`check`] found in an output directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Files whose contents differ from what the blueprints produce, in the
    /// order expected, each with a unified diff from the file on disk
    /// (`a/…`) to the expected contents (`b/…`).
    pub stale: Vec<(String, String)>,
    /// Expected files that do not exist, in the order expected.
    pub missing: Vec<String>,
    /// Template files (`*.yaml`, `*.yml`, `*.json`, not hidden) in the
    /// directory that no blueprint produces, sorted.
    pub extra: Vec<String>,
    /// Expected files that exist but cannot be read (a directory, no
    /// permission), with the reason.
    pub unreadable: Vec<(String, String)>,
}

impl CheckReport {
    /// True when the directory holds exactly the expected files.
    pub fn is_clean(&self) -> bool {
        self.stale.is_empty()
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.unreadable.is_empty()
    }
}

/// Compares `out_dir` with the expected `(file name, contents)` pairs.
///
/// Only the top level of `out_dir` is looked at. Files other than templates
/// (a README, `.gitignore`, hidden files) are never reported as extra, nor
/// are the `inputs` (the blueprints and their bases, which may sit beside
/// their templates). A missing `out_dir` reports every expected file as
/// missing.
pub fn check(out_dir: &Path, expected: &[(String, String)], inputs: &[PathBuf]) -> CheckReport {
    let mut report = CheckReport::default();
    for (name, contents) in expected {
        let path = out_dir.join(name);
        match fs::read(&path) {
            Ok(current) if current == contents.as_bytes() => {}
            Ok(current) => {
                let current = String::from_utf8_lossy(&current);
                let diff = unified_diff(
                    &current,
                    contents,
                    &format!("a/{name}"),
                    &format!("b/{name}"),
                );
                report.stale.push((name.clone(), diff));
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                report.missing.push(name.clone());
            }
            Err(error) => report.unreadable.push((name.clone(), error.to_string())),
        }
    }

    let expected_names: HashSet<&str> = expected.iter().map(|(name, _)| name.as_str()).collect();
    let inputs: HashSet<PathBuf> = inputs
        .iter()
        .filter_map(|path| fs::canonicalize(path).ok())
        .collect();
    if let Ok(entries) = fs::read_dir(out_dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || expected_names.contains(name.as_str()) {
                continue;
            }
            let is_template = Path::new(&name)
                .extension()
                .and_then(|extension| extension.to_str())
                .is_some_and(|extension| {
                    ["yaml", "yml", "json"]
                        .iter()
                        .any(|known| extension.eq_ignore_ascii_case(known))
                });
            // `Path::is_file` follows symbolic links, like the compiler would.
            let is_input = fs::canonicalize(entry.path()).is_ok_and(|path| inputs.contains(&path));
            if is_template && !is_input && entry.path().is_file() {
                report.extra.push(name);
            }
        }
    }
    report.extra.sort();
    report
}

/// Lines of context around each change in a [`unified_diff`].
const CONTEXT: usize = 3;

/// Above this many differing lines (after the common prefix and suffix), the
/// diff stops looking for the shortest edit and replaces the whole middle,
/// which bounds time and memory on unrelated files.
const MAX_EDIT_DISTANCE: usize = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

/// A unified diff from `old` to `new`, in the format of `diff -u` and `git
/// diff`: `--- {old_label}` and `+++ {new_label}` headers, then hunks with 3
/// lines of context (hunks closer than that merge). A count of 1 is omitted
/// from hunk headers (`@@ -3 +3 @@`), and a last line without a newline is
/// followed by `\ No newline at end of file`. Returns an empty string when
/// the texts are equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_lines(&old_lines, &new_lines);

    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    // Position in each file before each op.
    let mut positions = Vec::with_capacity(ops.len() + 1);
    let (mut o, mut n) = (0, 0);
    for op in &ops {
        positions.push((o, n));
        match op {
            Op::Equal => (o, n) = (o + 1, n + 1),
            Op::Delete => o += 1,
            Op::Insert => n += 1,
        }
    }
    positions.push((o, n));

    let changes: Vec<usize> = (0..ops.len()).filter(|&i| ops[i] != Op::Equal).collect();
    let mut group_start = 0;
    while group_start < changes.len() {
        // Extend the hunk while the next change is within 2 × context.
        let mut group_end = group_start;
        while group_end + 1 < changes.len()
            && changes[group_end + 1] - changes[group_end] - 1 <= 2 * CONTEXT
        {
            group_end += 1;
        }
        let first = changes[group_start].saturating_sub(CONTEXT);
        let last = (changes[group_end] + 1 + CONTEXT).min(ops.len());
        let (old_start, new_start) = positions[first];
        let (old_end, new_end) = positions[last];
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_start, old_end - old_start),
            hunk_range(new_start, new_end - new_start)
        ));
        for i in first..last {
            let (o, n) = positions[i];
            let (mark, line) = match ops[i] {
                Op::Equal => (' ', old_lines[o]),
                Op::Delete => ('-', old_lines[o]),
                Op::Insert => ('+', new_lines[n]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        group_start = group_end + 1;
    }
    out
}

/// `start,count` of a hunk header (1-based); an empty range names the line
/// before it, and a count of 1 is omitted.
fn hunk_range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

/// The edit script from `old` to `new`: the common prefix and suffix, and a
/// shortest edit (Myers) in between. Within each run of changes, deletions
/// come before insertions.
fn diff_lines(old: &[&str], new: &[&str]) -> Vec<Op> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old_middle = &old[prefix..old.len() - suffix];
    let new_middle = &new[prefix..new.len() - suffix];

    // Compare small integers rather than strings.
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let a = intern(&mut ids, old_middle);
    let b = intern(&mut ids, new_middle);

    let middle = myers(&a, &b, MAX_EDIT_DISTANCE).unwrap_or_else(|| {
        let mut ops = vec![Op::Delete; a.len()];
        ops.extend(std::iter::repeat_n(Op::Insert, b.len()));
        ops
    });

    let mut ops = vec![Op::Equal; prefix];
    ops.extend(middle);
    ops.extend(std::iter::repeat_n(Op::Equal, suffix));
    deletions_first(&mut ops);
    ops
}

/// Numbers lines so that equal lines get equal numbers.
fn intern<'a>(ids: &mut HashMap<&'a str, u32>, lines: &[&'a str]) -> Vec<u32> {
    lines
        .iter()
        .map(|&line| {
            let next = ids.len() as u32;
            *ids.entry(line).or_insert(next)
        })
        .collect()
}

/// Reorders each run of changes as its deletions, then its insertions: the
/// same edit, in the order `diff` prints it.
fn deletions_first(ops: &mut [Op]) {
    let mut i = 0;
    while i < ops.len() {
        if ops[i] == Op::Equal {
            i += 1;
            continue;
        }
        let start = i;
        while i < ops.len() && ops[i] != Op::Equal {
            i += 1;
        }
        let deletions = ops[start..i].iter().filter(|&&op| op == Op::Delete).count();
        ops[start..start + deletions].fill(Op::Delete);
        ops[start + deletions..i].fill(Op::Insert);
    }
}

/// Myers' O((N+M)D) shortest edit script, or `None` when it needs more than
/// `max_d` edits. Keeps the frontier of every step (O(D²) memory) to walk
/// the path back.
fn myers(a: &[u32], b: &[u32], max_d: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let offset = max as isize + 1;
    // v[k + offset]: the furthest x on diagonal k (k = x - y).
    let mut v = vec![0isize; 2 * max + 3];
    // trace[d][k + d]: v for k in -d..=d at the start of step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max.min(max_d) as isize {
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
        for k in (-d..=d).step_by(2) {
            let at = |k: isize| v[(k + offset) as usize];
            let mut x = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
                at(k + 1)
            } else {
                at(k - 1) + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(k + offset) as usize] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m));
            }
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Op> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        if d == 0 {
            // Step 0 is a snake from (0, 0).
            ops.extend(std::iter::repeat_n(Op::Equal, x as usize));
            break;
        }
        let at = |k: isize| v[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Equal);
            x -= 1;
            y -= 1;
        }
        ops.push(if x == prev_x { Op::Insert } else { Op::Delete });
        (x, y) = (prev_x, prev_y);
    }
    ops.reverse();
    ops
}
