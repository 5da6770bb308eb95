//! An organisation's policies: CloudFormation Guard rule files, evaluated by
//! Guard itself (the `cfn-guard` crate) on every template eksynth writes or
//! reads. A rule that fails is a finding like any other, `G:` and the
//! rule's name, at the template path Guard names; the pipeline then locates
//! it at the blueprint field or override that made the value.
//!
//! Nothing here runs unless rules are given: a [`Policy`] without files
//! checks nothing and parses nothing.

mod conventions;
mod record;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::cfn::{Format, Template};
use crate::diagnostic::Diagnostic;
use crate::source::{self, SourceFile, Span};
use crate::validate::{Finding, Level};

pub use conventions::{FINDING_PREFIX, REFERENCE, is_rule_finding};

/// The rule files to evaluate, in the order given, each once.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    files: Vec<Arc<RulesFile>>,
}

/// One Guard rule file, read and parsed.
#[derive(Debug)]
struct RulesFile {
    source: Arc<SourceFile>,
    /// What identifies the file, so that one named twice is read once.
    identity: PathBuf,
    /// The severity of each rule, by the file's `# Severity:` comments.
    severities: Vec<(String, Level)>,
}

/// Why rules could not be used: exit 2, as any input that cannot be read.
#[derive(Debug)]
pub enum PolicyError {
    /// A path that is no rule file or directory of them, or a file that
    /// cannot be read: the message says which and why.
    Unreadable(String),
    /// A rule file that Guard cannot parse, or a convention comment it
    /// breaks, located in the file.
    Invalid(Box<Diagnostic>),
}

impl PolicyError {
    /// The error as a diagnostic: located when it is in a rule file, else
    /// at `at` (the blueprint line that names the path) when given.
    pub fn into_diagnostic(self, file: &Arc<SourceFile>, at: Option<Span>) -> Diagnostic {
        match self {
            PolicyError::Invalid(diagnostic) => *diagnostic,
            PolicyError::Unreadable(message) => Diagnostic::error(file, at, message)
                .with_help("a rule path names a `.guard` file or a directory of them"),
        }
    }
}

impl Policy {
    /// No rules: nothing is checked.
    pub fn none() -> Policy {
        Policy::default()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The rules at `paths`, each a `.guard` file or a directory whose
    /// `*.guard` files, its subdirectories' included, are read in the order
    /// of their paths (as `cfn-guard validate --rules DIR` reads them).
    pub fn load(paths: &[PathBuf]) -> Result<Policy, PolicyError> {
        let mut policy = Policy::none();
        for path in paths {
            policy.add(path)?;
        }
        Ok(policy)
    }

    /// Adds the rules at `path` after those already there; a file already
    /// there is not read again.
    pub fn add(&mut self, path: &Path) -> Result<(), PolicyError> {
        for file in rule_files(path)? {
            let identity = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            if self.files.iter().any(|known| known.identity == identity) {
                continue;
            }
            let rules = read_rules(&file, identity)?;
            self.files.push(Arc::new(rules));
        }
        Ok(())
    }

    /// The findings of every rule that fails on `template`, one for each
    /// rule and resource, sorted as validation sorts its own.
    pub fn check(&self, template: &Template) -> Vec<Finding> {
        if self.files.is_empty() {
            return Vec::new();
        }
        // Guard reads the long form of intrinsics, as in a JSON template.
        let data = Format::Json.emit(template);
        let mut findings = Vec::new();
        for file in &self.files {
            findings.extend(file.check(&data));
        }
        findings.sort_by(|a, b| (&a.path, a.id, &a.message).cmp(&(&b.path, b.id, &b.message)));
        findings.dedup();
        findings
    }
}

impl RulesFile {
    /// The findings of this file's rules on `data`, a template in JSON. The
    /// file was parsed when read, so Guard fails here only on an
    /// evaluation it cannot finish, which is reported as the rule file's
    /// finding rather than lost.
    fn check(&self, data: &str) -> Vec<Finding> {
        let evaluated = evaluate(&self.source, data);
        let failures = match evaluated {
            Ok(events) => record::failures(&events),
            Err(message) => vec![record::Failure::of_file(message)],
        };
        record::group(failures)
            .into_iter()
            .map(|failure| {
                let level = self
                    .severities
                    .iter()
                    .find(|(rule, _)| *rule == failure.rule)
                    .map_or(Level::Error, |(_, level)| *level);
                let (message, help) = conventions::message(&failure);
                Finding {
                    id: intern(format!("{FINDING_PREFIX}{}", failure.rule)),
                    level,
                    path: failure.path,
                    message: format!(
                        "Guard rule `{}` of {}: {message}",
                        failure.rule, self.source.name
                    ),
                    help,
                }
            })
            .collect()
    }
}

/// Guard's record of evaluating the rules of `rules` on `data`, as the JSON
/// its verbose report writes; `Err` with Guard's message when it cannot.
fn evaluate(rules: &SourceFile, data: &str) -> Result<serde_json::Value, String> {
    let run = || {
        cfn_guard::run_checks(
            cfn_guard::ValidateInput {
                content: data,
                file_name: "template.json",
            },
            cfn_guard::ValidateInput {
                content: &rules.text,
                file_name: &rules.name,
            },
            // The verbose report is Guard's whole event record; its summary
            // report is cut at eight kilobytes.
            true,
        )
    };
    // Guard is another program's code: should it panic on some rule, that
    // rule file's evaluation fails, and eksynth goes on.
    let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .map_err(|_| "Guard stopped evaluating the rules".to_string())?
        .map_err(|error| error.to_string())?;
    if report.trim().is_empty() {
        // A file of comments only: no rule, no record.
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_str(&report).map_err(|error| error.to_string())
}

/// The rule files a path names: the file itself, or every `*.guard` file
/// below a directory, by path.
fn rule_files(path: &Path) -> Result<Vec<PathBuf>, PolicyError> {
    let shown = crate::escape::terminal(&path.display().to_string()).into_owned();
    let unreadable = |error: std::io::Error| {
        PolicyError::Unreadable(format!("cannot read rules `{shown}`: {error}"))
    };
    if !std::fs::metadata(path).map_err(unreadable)?.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut directories = vec![path.to_path_buf()];
    while let Some(directory) = directories.pop() {
        for entry in std::fs::read_dir(&directory).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            let file_type = entry.file_type().map_err(unreadable)?;
            let found = entry.path();
            if file_type.is_dir() {
                directories.push(found);
            } else if found.extension().is_some_and(|x| x == "guard") {
                files.push(found);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(PolicyError::Unreadable(format!(
            "the rules directory `{shown}` holds no `.guard` file"
        )));
    }
    Ok(files)
}

/// Reads a rule file and has Guard parse it (on an empty template), so
/// that a rule file with a mistake stops the run before anything is
/// written.
fn read_rules(path: &Path, identity: PathBuf) -> Result<RulesFile, PolicyError> {
    let name = path.display().to_string();
    let shown = crate::escape::terminal(&name).into_owned();
    let unreadable =
        |reason: String| PolicyError::Unreadable(format!("cannot read rules `{shown}`: {reason}"));
    let bytes = source::read_file(path).map_err(|error| unreadable(error.to_string()))?;
    let text = crate::syntax::text_of(bytes).map_err(|error| unreadable(error.to_string()))?;
    let source = SourceFile::new(name, text);
    let severities = conventions::severities(&source).map_err(PolicyError::Invalid)?;
    if let Err(message) = evaluate(&source, "{}") {
        return Err(PolicyError::Invalid(Box::new(conventions::parse_error(
            &source, &message,
        ))));
    }
    Ok(RulesFile {
        source,
        identity,
        severities,
    })
}

/// A finding ID for the rest of the process: a finding's ID is a
/// `&'static str`, and a rule's name is known only once its file is read.
/// Each name is kept once, and a run reads few of them.
fn intern(id: String) -> &'static str {
    static IDS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut ids = match IDS.get_or_init(Mutex::default).lock() {
        Ok(ids) => ids,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(known) = ids.get(id.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(id.into_boxed_str());
    ids.insert(leaked);
    leaked
}
