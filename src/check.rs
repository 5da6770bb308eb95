//! `validate` for any file: a blueprint is compiled and its template
//! validated; any other file is read as a CloudFormation template and
//! validated as it is.

use std::sync::Arc;

use crate::cfn::Format;
use crate::compile::{CompileError, compile_with_policy, finding_diagnostic, template_span};
use crate::diagnostic::Diagnostic;
use crate::policy::Policy;
use crate::source::SourceFile;
use crate::syntax;
use crate::validate::{self, Finding, Level, SchemaSet};

/// What a file turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Blueprint,
    Template,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Blueprint => "blueprint",
            Kind::Template => "template",
        }
    }
}

/// The outcome for one file: its diagnostics, located in that file.
#[derive(Debug)]
pub struct Report {
    pub file: Arc<SourceFile>,
    pub kind: Kind,
    pub diagnostics: Vec<Diagnostic>,
    /// The blueprint names rules that cannot be read or parsed: an input
    /// that cannot be used, as an unreadable file is (exit 2).
    pub unusable: bool,
}

impl Report {
    pub fn count(&self, level: Level) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == level)
            .count()
    }
}

/// A blueprint says so in its header.
pub fn looks_like_blueprint(root: &syntax::Node) -> bool {
    root.as_map().is_some_and(|entries| {
        entries.iter().any(|(key, value)| {
            key.name == "apiVersion" && value.as_str().is_some_and(|v| v.starts_with("eksynth.io/"))
        })
    })
}

/// The errors of a file that could not be read as what it is, under the
/// finding ID that says so, unless the error has a finding ID of its own.
fn coded(diagnostics: Vec<Diagnostic>, code: &'static str) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .map(|mut d| {
            if d.is_error() && d.code.is_none() {
                d.code = Some(code);
            }
            d
        })
        .collect()
}

/// Whether a finding about a template read leniently stands. A part that
/// could not be read had its error already: what validation says of what is
/// left of it would repeat that error. Under a transform, what the
/// transform creates is not in the file: references to it, and the types
/// only a transform knows (`AWS::Serverless::*`), are not judged (the
/// template's note says so).
fn judged(finding: &Finding, reading: &crate::cfn::read::Reading) -> bool {
    let within = |prefix: &String| {
        finding.path == *prefix
            || finding
                .path
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if reading.damaged.iter().any(within) {
        return false;
    }
    if reading.transforms.is_empty() {
        return true;
    }
    match finding.id {
        // What the transform adds (SAM's `Globals`...) may use them.
        "E2001" | "E2002" | "E2003" | "E2004" | "E2005" | "E2006" | "W9004" | "W9005" => false,
        "W1000" => !finding.resource().is_some_and(|id| {
            reading.template.resources.get(id).is_some_and(|resource| {
                !resource.kind.starts_with("AWS::")
                    || resource.kind.starts_with("AWS::Serverless::")
            })
        }),
        _ => true,
    }
}

/// Whether reading left something unchecked (a note `I0005`, or a loop
/// `E0006` that no transform expands).
fn unchecked(reading: &crate::cfn::read::Reading) -> bool {
    reading
        .diagnostics
        .iter()
        .any(|d| matches!(d.code, Some("I0005" | "E0006")))
}

/// Validates one file, whatever it is. Problems reading it as a blueprint
/// or a template are reported as diagnostics (`E0001`, `E0002`).
pub fn check_file(file: &Arc<SourceFile>, schemas: &SchemaSet) -> Report {
    check_file_keeping_trees(file, schemas, &Policy::none()).0
}

/// What [`check_file`] built to check a template: its syntax tree and the
/// template read from it. A large template's take milliseconds to free,
/// which a process about to exit need not spend (`std::mem::forget`).
pub struct Trees {
    _root: syntax::Node,
    _template: crate::cfn::Template,
}

/// [`check_file`], with the trees it built for a template.
/// The template is also judged by the rules of `policy`; a blueprint by
/// those and its own.
pub fn check_file_keeping_trees(
    file: &Arc<SourceFile>,
    schemas: &SchemaSet,
    policy: &Policy,
) -> (Report, Option<Trees>) {
    let root = match syntax::parse(file) {
        Ok(root) => root,
        Err(diagnostic) => {
            let report = Report {
                file: Arc::clone(file),
                kind: Kind::Template,
                diagnostics: coded(vec![*diagnostic], "E0002"),
                unusable: false,
            };
            return (report, None);
        }
    };
    if looks_like_blueprint(&root) {
        let compiled = compile_with_policy(file, schemas, &[], Format::Yaml, policy);
        let unusable = matches!(compiled, Err(CompileError::Policy(_)));
        let diagnostics = match compiled {
            Ok(compiled) => compiled.diagnostics,
            Err(CompileError::Blueprint(diagnostics) | CompileError::Policy(diagnostics)) => {
                coded(diagnostics, "E0001")
            }
            Err(CompileError::Internal(error)) => {
                vec![Diagnostic::error(file, None, error.to_string())]
            }
        };
        let report = Report {
            file: Arc::clone(file),
            kind: Kind::Blueprint,
            diagnostics,
            unusable,
        };
        return (report, None);
    }
    // What cannot be read is reported, and everything else still checked.
    let reading = crate::cfn::read::read_lenient(file, &root);
    let findings: Vec<Finding> = validate::validate(
        &reading.template,
        &validate::Context {
            schemas,
            template_bytes: Some(file.text.len()),
            split_help: validate::SPLIT_HELP,
        },
    )
    .into_iter()
    .filter(|finding| judged(finding, &reading))
    // What is not read (the `Rules` section, an intrinsic deletion
    // policy...) may be what uses a parameter or a condition; a loop may
    // make the resources.
    .filter(|finding| !matches!(finding.id, "W9004" | "W9005" | "E9013") || !unchecked(&reading))
    // Resources that could not be read had their errors already.
    .filter(|finding| {
        finding.id != "E9013"
            || !reading
                .damaged
                .iter()
                .any(|path| path.starts_with("Resources"))
    })
    .chain(policy.check(&reading.template))
    .collect();
    let mut diagnostics = coded(reading.diagnostics, "E0002");
    diagnostics.extend(
        findings
            .iter()
            .map(|finding| finding_diagnostic(finding, file, template_span(&root, &finding.path))),
    );
    // In file order, as a reader goes through the template.
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.line, s.column)));
    let report = Report {
        file: Arc::clone(file),
        kind: Kind::Template,
        diagnostics,
        unusable: false,
    };
    let trees = Trees {
        _root: root,
        _template: reading.template,
    };
    (report, Some(trees))
}
