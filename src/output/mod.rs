//! Writing templates to a directory, atomically, and checking committed
//! templates for staleness.
//!
//! - [`prepare_out_dir`] creates the output directory and proves it is
//!   writable before anything is written, so a run that cannot write writes
//!   nothing.
//! - [`write_files`] writes a set of files (every stack of a blueprint) as
//!   one: it refuses when any of them would replace a file that is not
//!   eksynth's own output ([`replaces`]), writes every temporary file before
//!   it renames any, and first removes the temporary files a killed run left.
//! - [`write_atomically`] replaces one file through a temporary file and a
//!   `rename`, so a reader (or a crash) never sees a partial file, and
//!   leaves a file whose contents are already right untouched (same bytes,
//!   same modification time); [`write_new`] does so only where no file is.
//! - [`check`] compares a directory with what the blueprints produce: stale
//!   files (with a [`unified_diff`]), missing files, template files no
//!   blueprint produces, and files a `synth` would refuse to replace.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::diagnostic::Diagnostic;
use crate::source::{self, SourceFile, Span};

mod unified_diff;

pub use unified_diff::unified_diff;

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
    #[error("{}", refused.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Refused { refused: Vec<Refused> },
    #[error("`{}` exists; eksynth does not write over it", path.display())]
    Exists { path: PathBuf },
}

/// A file [`write_files`] will not replace: `index` is its place in the
/// files asked for.
#[derive(Debug)]
pub struct Refused {
    pub index: usize,
    pub path: PathBuf,
    pub refusal: Refusal,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "will not write over `{}`: {}",
            self.path.display(),
            self.refusal
        )
    }
}

/// Why a file is not replaced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The file is an input of this run: a blueprint or a base it extends.
    #[error("it is an input of this run (a blueprint, or a base it extends)")]
    Input,
    /// A directory, a FIFO, a device: eksynth writes regular files.
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    /// A file that does not start as every file eksynth writes does.
    #[error("it is not a file eksynth wrote")]
    NotWritten,
    /// The file cannot be read to tell what it is.
    #[error("it cannot be read: {0}")]
    Unreadable(String),
}

/// What stands at the place of a file to write.
#[derive(Debug)]
enum Existing {
    Absent,
    /// A file eksynth wrote, with its contents.
    Written(Vec<u8>),
    Refused(Refusal),
}

/// Whether `contents` start as a file eksynth writes: a template, whose
/// first line is `AWSTemplateFormatVersion: "2010-09-09"` in YAML and whose
/// first key is `"AWSTemplateFormatVersion"` in JSON (eksynth puts it first
/// in every template); a parameters file, a JSON list of
/// `{"ParameterKey": …, "ParameterValue": …}`; or a manual page as
/// `eksynth man` writes it. Only the start is looked at, so that a template
/// whose body was edited or broken (a merge conflict) is still replaced.
pub fn written_by_eksynth(contents: &[u8]) -> bool {
    const YAML: &[u8] = b"AWSTemplateFormatVersion: \"2010-09-09\"";
    const JSON: &[u8] = b"\"AWSTemplateFormatVersion\":";
    const MAN: &[u8] = b".ie \\n(.g .ds Aq \\(aq";
    // A checkout may have given the file a byte-order mark or CRLF endings.
    let contents = contents.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(contents);
    let first_line = contents
        .split(|&b| b == b'\n')
        .next()
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    if first_line.is_some_and(|line| line == YAML || line == MAN) {
        return true;
    }
    let trimmed = contents.trim_ascii_start();
    if let Some(object) = trimmed.strip_prefix(b"{") {
        return object.trim_ascii_start().starts_with(JSON);
    }
    if let Some(list) = trimmed.strip_prefix(b"[") {
        let list = list.trim_ascii_start();
        return list.starts_with(b"]")
            || list
                .strip_prefix(b"{")
                .is_some_and(|entry| entry.trim_ascii_start().starts_with(b"\"ParameterKey\":"));
    }
    false
}

/// The error about the file of stack `stack` that `path` stands in the way
/// of, at `span` of `file`, where the blueprint declares the stack: renaming
/// the stack or choosing another directory are the ways out.
pub fn refusal_diagnostic(
    path: &Path,
    refusal: &Refusal,
    stack: &str,
    file: &Arc<SourceFile>,
    span: Span,
) -> Diagnostic {
    let shown = path.display();
    let message = match refusal {
        Refusal::Input => {
            format!(
                "the stack `{stack}` would be written over `{shown}`, a blueprint this run reads"
            )
        }
        Refusal::NotWritten => format!(
            "the stack `{stack}` would be written over `{shown}`, which is not a file eksynth wrote"
        ),
        Refusal::NotAFile(_) | Refusal::Unreadable(_) => {
            format!("the stack `{stack}` cannot be written to `{shown}`: {refusal}")
        }
    };
    let file_name = path.file_name().map_or_else(
        || shown.to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut help = format!(
        "name the stack (`stack: NAME`, or its key under `stacks:`) so that its file is not `{file_name}`, or write the templates to another directory (`--out-dir DIR`)"
    );
    if *refusal == Refusal::NotWritten {
        help.push_str(
            "; eksynth replaces only the files it wrote, such as a template that starts with `AWSTemplateFormatVersion: \"2010-09-09\"`",
        );
    }
    Diagnostic::error(file, Some(span), message)
        .with_label(format!("the stack `{stack}`"))
        .with_help(help)
}

/// What is at `path`, which eksynth is about to write: nothing, a file it
/// wrote (which it may replace), or something it must leave alone. `inputs`
/// are canonical paths.
fn existing(path: &Path, inputs: &HashSet<PathBuf>) -> Existing {
    match fs::canonicalize(path) {
        Ok(canonical) if inputs.contains(&canonical) => return Existing::Refused(Refusal::Input),
        // A dangling symbolic link: the rename replaces the link itself.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Existing::Absent,
        _ => {}
    }
    match source::read_file(path) {
        Ok(contents) if written_by_eksynth(&contents) => Existing::Written(contents),
        Ok(_) => Existing::Refused(Refusal::NotWritten),
        Err(source::ReadError::NotAFile(what)) => Existing::Refused(Refusal::NotAFile(what)),
        Err(source::ReadError::Io(error)) if error.kind() == io::ErrorKind::NotFound => {
            Existing::Absent
        }
        Err(error) => Existing::Refused(Refusal::Unreadable(error.to_string())),
    }
}

/// The canonical paths of `inputs` that exist.
fn canonical(inputs: &[PathBuf]) -> HashSet<PathBuf> {
    inputs
        .iter()
        .filter_map(|path| fs::canonicalize(path).ok())
        .collect()
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
    // Removed while open, and so locked: closed first, it would be a stale
    // temporary file to a run cleaning the directory at that moment.
    let removed = match fs::remove_file(&probe) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(OutputError::NotWritable {
            path: dir.to_path_buf(),
            error,
        }),
        _ => Ok(()),
    };
    drop(file);
    removed
}

/// Creates a new file `{dir}/{prefix}-{pid}-{counter}` that did not exist,
/// locked for as long as it is open: a later run takes a temporary file it
/// can lock for one whose writer is gone (see [`remove_stale_temporaries`]).
fn create_unique(dir: &Path, prefix: &str) -> io::Result<(PathBuf, File)> {
    let mut attempts = 0;
    loop {
        let path = dir.join(format!("{prefix}-{}", unique_suffix()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) if lock(&file)? && is_at(&path, &file) => return Ok((path, file)),
            // Another run took the file for a stale one and removed it
            // before it was locked: take another.
            Ok(_) if attempts < 100 => attempts += 1,
            Ok(_) => return Err(io::Error::other("temporary files vanish")),
            // Left behind by a process with a recycled ID: take another.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => {
                attempts += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Takes the lock of a file just created: false when another process holds
/// it. A file system without locks leaves temporary files unlocked, and a
/// later run then never takes them for stale ones.
fn lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(error)) if error.kind() == io::ErrorKind::Unsupported => {
            Ok(true)
        }
        Err(fs::TryLockError::Error(error)) => Err(error),
    }
}

/// Whether `path` still names the open `file`.
fn is_at(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::symlink_metadata(path), file.metadata()) {
            (Ok(named), Ok(open)) => named.dev() == open.dev() && named.ino() == open.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// Whether `name` is one of the temporary files eksynth makes in an output
/// directory: `.{file}.tmp-{pid}-{counter}` for a template, parameters file
/// or manual page, and `.eksynth-probe-{pid}-{counter}`.
fn is_temporary_name(name: &str) -> bool {
    let numbered = |suffix: &str| {
        suffix.split_once('-').is_some_and(|(pid, counter)| {
            [pid, counter]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    if let Some(suffix) = name.strip_prefix(".eksynth-probe-") {
        return numbered(suffix);
    }
    name.rsplit_once(".tmp-").is_some_and(|(stem, suffix)| {
        numbered(suffix)
            && stem.starts_with('.')
            && [".yaml", ".json", ".1"]
                .iter()
                .any(|end| stem.len() > end.len() + 1 && stem.ends_with(end))
    })
}

/// Removes the temporary files that runs killed before their rename left in
/// `dir`, and returns their names. A temporary file whose lock is held
/// belongs to a run still writing, and stays.
pub fn remove_stale_temporaries(dir: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Not through a link, nor a FIFO, which `open` would wait on.
        if !is_temporary_name(&name) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        if file.try_lock().is_ok() && fs::remove_file(entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed.sort();
    removed
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

/// A file's new contents, on disk beside it, to be renamed over it.
struct Staged {
    temp: TempFile,
    target: PathBuf,
}

impl Staged {
    /// Renames the temporary file over its target.
    fn commit(mut self) -> Result<(), OutputError> {
        // Renamed while open, and so locked, where the platform allows it:
        // closed, it would be an unlocked temporary file, which another run
        // may remove as stale.
        #[cfg(not(unix))]
        drop(self.temp.file.take());
        fs::rename(&self.temp.path, &self.target).map_err(|error| OutputError::Write {
            path: self.target.clone(),
            error,
        })?;
        self.temp.renamed = true;
        Ok(())
    }
}

/// Writes `contents` to a temporary file in `dir`
/// (`.{file_name}.tmp-{pid}-{counter}`), flushed to disk, with the
/// permissions of the file it will replace.
fn stage(dir: &Path, file_name: &str, contents: &[u8]) -> Result<Staged, OutputError> {
    let target = dir.join(file_name);
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
    if let Some(file) = temp.file.as_mut() {
        file.write_all(contents).map_err(write_error)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions).map_err(write_error)?;
        }
        file.sync_all().map_err(write_error)?;
    }
    Ok(Staged { temp, target })
}

/// Refuses a name that is not a plain file name.
fn check_name(file_name: &str) -> Result<(), OutputError> {
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
    Ok(())
}

/// Refuses a `dir` that is not an existing directory.
fn check_dir(dir: &Path) -> Result<(), OutputError> {
    match fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(OutputError::NotADirectory {
            path: dir.to_path_buf(),
        }),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Err(OutputError::DirMissing {
            path: dir.to_path_buf(),
        }),
        Err(error) => Err(OutputError::InspectDir {
            path: dir.to_path_buf(),
            error,
        }),
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
/// Whatever the target is, it is replaced: [`write_files`] is the writer
/// that looks first.
pub fn write_atomically(
    dir: &Path,
    file_name: &str,
    contents: &[u8],
) -> Result<WriteOutcome, OutputError> {
    check_name(file_name)?;
    check_dir(dir)?;
    // Any error reading the target (missing, a directory, unreadable) means
    // it must be written; the rename reports what really stands in the way.
    if source::read_file(&dir.join(file_name)).is_ok_and(|current| current == contents) {
        return Ok(WriteOutcome::Unchanged);
    }
    stage(dir, file_name, contents)?.commit()?;
    sync_dir(dir);
    Ok(WriteOutcome::Written)
}

/// Writes a new file at `path` atomically (see [`write_atomically`]), unless
/// a file is there already: an imported blueprint may have been edited
/// since, and a blueprint is never written over. A file with the same bytes
/// is left as it is.
pub fn write_new(path: &Path, contents: &[u8]) -> Result<WriteOutcome, OutputError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(OutputError::InvalidFileName {
            name: path.display().to_string(),
        });
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if fs::symlink_metadata(path).is_ok() {
        return match source::read_file(path) {
            Ok(current) if current == contents => Ok(WriteOutcome::Unchanged),
            _ => Err(OutputError::Exists {
                path: path.to_path_buf(),
            }),
        };
    }
    write_atomically(dir, &name.to_string_lossy(), contents)
}

/// What [`write_files`] did: the outcome of each file, in the order given,
/// and the stale temporary files it removed first.
#[derive(Debug)]
pub struct Written {
    pub outcomes: Vec<WriteOutcome>,
    pub removed: Vec<String>,
}

/// Writes `files` (name, contents) into `dir` as one: each atomically (see
/// [`write_atomically`]), and every temporary file before any rename, so
/// that a failure or a kill while they are written leaves every target as
/// it was. Stale temporary files of killed runs are removed first.
///
/// A file is replaced only when it is one eksynth wrote
/// ([`written_by_eksynth`]) and none of the `inputs` (the blueprints and
/// the bases they extend); otherwise nothing at all is written and the
/// error lists every file refused.
pub fn write_files(
    dir: &Path,
    files: &[(String, String)],
    inputs: &[PathBuf],
) -> Result<Written, OutputError> {
    for (name, _) in files {
        check_name(name)?;
    }
    check_dir(dir)?;
    let removed = remove_stale_temporaries(dir);
    let inputs = canonical(inputs);
    let mut refused = Vec::new();
    let mut changed = Vec::new();
    for (index, (name, contents)) in files.iter().enumerate() {
        let path = dir.join(name);
        match existing(&path, &inputs) {
            Existing::Refused(refusal) => refused.push(Refused {
                index,
                path,
                refusal,
            }),
            Existing::Written(current) if current == contents.as_bytes() => {}
            Existing::Absent | Existing::Written(_) => changed.push(index),
        }
    }
    if !refused.is_empty() {
        return Err(OutputError::Refused { refused });
    }
    let staged = changed
        .iter()
        .map(|&index| stage(dir, &files[index].0, files[index].1.as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    for file in staged {
        file.commit()?;
    }
    sync_dir(dir);
    let outcomes = (0..files.len())
        .map(|index| match changed.contains(&index) {
            true => WriteOutcome::Written,
            false => WriteOutcome::Unchanged,
        })
        .collect();
    Ok(Written { outcomes, removed })
}

/// Makes the renames durable. Best effort: not every platform or file
/// system can sync a directory, and the files themselves are already on
/// disk.
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
    /// Expected files that exist but cannot be read (no permission), with
    /// the reason.
    pub unreadable: Vec<(String, String)>,
    /// Expected files in whose place stands something `synth` will not
    /// replace (a blueprint, a file eksynth did not write, a directory),
    /// in the order expected.
    pub refused: Vec<(String, Refusal)>,
}

impl CheckReport {
    /// True when the directory holds exactly the expected files.
    pub fn is_clean(&self) -> bool {
        self.stale.is_empty()
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.unreadable.is_empty()
            && self.refused.is_empty()
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
    let inputs = canonical(inputs);
    for (name, contents) in expected {
        match existing(&out_dir.join(name), &inputs) {
            Existing::Written(current) if current == contents.as_bytes() => {}
            Existing::Written(current) => {
                let current = String::from_utf8_lossy(&current);
                let diff = unified_diff(
                    &current,
                    contents,
                    &format!("a/{name}"),
                    &format!("b/{name}"),
                );
                report.stale.push((name.clone(), diff));
            }
            Existing::Absent => report.missing.push(name.clone()),
            Existing::Refused(Refusal::Unreadable(reason)) => {
                report.unreadable.push((name.clone(), reason));
            }
            Existing::Refused(refusal) => report.refused.push((name.clone(), refusal)),
        }
    }

    let expected_names: HashSet<&str> = expected.iter().map(|(name, _)| name.as_str()).collect();
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
