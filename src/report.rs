//! Machine-readable reports of `validate`: JSON, and SARIF 2.1.0 for GitHub
//! code scanning.

use serde_json::{Value, json};

use crate::check::Report;
use crate::diagnostic::{Diagnostic, Severity};
use crate::validate::FINDINGS;

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// The template path of a finding, kept in its label as `in <path>`.
fn template_path(diagnostic: &Diagnostic) -> Option<&str> {
    diagnostic.label.as_deref()?.strip_prefix("in ")
}

/// One JSON document for every file checked.
pub fn json(reports: &[Report]) -> String {
    let files: Vec<Value> = reports
        .iter()
        .map(|report| {
            let findings: Vec<Value> = report
                .diagnostics
                .iter()
                .map(|d| {
                    json!({
                        "id": d.code,
                        "level": level(d.severity),
                        "message": d.message,
                        "path": template_path(d),
                        "line": d.span.map(|s| s.line),
                        "column": d.span.map(|s| s.column),
                        "help": d.help,
                    })
                })
                .collect();
            json!({
                "file": report.file.name,
                "kind": report.kind.name(),
                "findings": findings,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({ "files": files })).unwrap_or_default();
    text.push('\n');
    text
}

/// A SARIF 2.1.0 log with one run and a rule for every finding ID.
pub fn sarif(reports: &[Report]) -> String {
    let rules: Vec<Value> = FINDINGS
        .iter()
        .map(|(id, description)| {
            json!({
                "id": id,
                "shortDescription": { "text": description },
                "defaultConfiguration": { "level": sarif_level(id) },
            })
        })
        .collect();
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|report| {
            report.diagnostics.iter().map(move |d| {
                let mut location = json!({
                    "physicalLocation": {
                        "artifactLocation": { "uri": report.file.name },
                    }
                });
                if let Some(span) = d.span {
                    location["physicalLocation"]["region"] = json!({
                        "startLine": span.line,
                        "startColumn": span.column,
                    });
                }
                if let Some(path) = template_path(d) {
                    location["logicalLocations"] = json!([{ "fullyQualifiedName": path }]);
                }
                let mut text = d.message.clone();
                if let Some(help) = &d.help {
                    text.push_str("\nhelp: ");
                    text.push_str(help);
                }
                json!({
                    "ruleId": d.code.unwrap_or("E0001"),
                    "level": match d.severity {
                        Severity::Error => "error",
                        Severity::Warning => "warning",
                        Severity::Info => "note",
                    },
                    "message": { "text": text },
                    "locations": [location],
                })
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "eksynth",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

fn sarif_level(id: &str) -> &'static str {
    match id.as_bytes().first() {
        Some(b'E') => "error",
        Some(b'W') => "warning",
        _ => "note",
    }
}
