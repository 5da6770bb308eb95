//! `validate` for any file: a blueprint is compiled and its template
//! validated; any other file is read as a CloudFormation template and
//! validated as it is.

use std::sync::Arc;

use crate::compile::{CompileError, compile_with, finding_diagnostic, template_span};
use crate::diagnostic::Diagnostic;
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
/// finding ID that says so.
fn coded(diagnostics: Vec<Diagnostic>, code: &'static str) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .map(|mut d| {
            if d.is_error() {
                d.code = Some(code);
            }
            d
        })
        .collect()
}

/// Validates one file, whatever it is. Problems reading it as a blueprint
/// or a template are reported as diagnostics (`E0001`, `E0002`).
pub fn check_file(file: &Arc<SourceFile>, schemas: &SchemaSet) -> Report {
    let root = match syntax::parse(file) {
        Ok(root) => root,
        Err(diagnostic) => {
            return Report {
                file: Arc::clone(file),
                kind: Kind::Template,
                diagnostics: coded(vec![*diagnostic], "E0002"),
            };
        }
    };
    if looks_like_blueprint(&root) {
        let diagnostics = match compile_with(file, schemas) {
            Ok(compiled) => compiled.diagnostics,
            Err(CompileError::Blueprint(diagnostics)) => coded(diagnostics, "E0001"),
            Err(CompileError::Internal(error)) => {
                vec![Diagnostic::error(file, None, error.to_string())]
            }
        };
        return Report {
            file: Arc::clone(file),
            kind: Kind::Blueprint,
            diagnostics,
        };
    }
    let diagnostics = match crate::cfn::read::read_parsed(file, &root) {
        Ok(template) => {
            let findings: Vec<Finding> = validate::validate(
                &template,
                &validate::Context {
                    schemas,
                    template_bytes: Some(file.text.len()),
                    split_help: validate::SPLIT_HELP,
                },
            );
            let mut diagnostics: Vec<Diagnostic> = findings
                .iter()
                .map(|finding| {
                    finding_diagnostic(finding, file, template_span(&root, &finding.path))
                })
                .collect();
            // In file order, as a reader goes through the template.
            diagnostics.sort_by_key(|d| d.span.map(|s| (s.line, s.column)));
            diagnostics
        }
        Err(diagnostics) => coded(diagnostics, "E0002"),
    };
    Report {
        file: Arc::clone(file),
        kind: Kind::Template,
        diagnostics,
    }
}
