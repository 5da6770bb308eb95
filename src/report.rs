//! Machine-readable reports of `validate`: JSON, and SARIF 2.1.0 for GitHub
//! code scanning.
//!
//! The JSON encoder escapes every string, so the documents themselves are
//! always whole; what a consumer shows from them is another matter. The
//! prose of a finding (its message and help) is written by the terminal rule
//! of [`escape`], as `validate` prints it, so that a program printing it
//! (`jq -r`) or GitHub titling an alert with its first line shows the
//! input's line breaks and control characters as escapes. Names a consumer
//! looks up (the file, the template path) stay exact, and SARIF's
//! `artifactLocation.uri` is a URI reference, percent-encoded: relative to
//! `%SRCROOT%` (the working directory, given in `originalUriBaseIds`) for a
//! file below it, as GitHub code scanning resolves them against the
//! checkout, else an absolute `file:` URI (SARIF 2.1.0, 3.4.3 and 3.14.14).

use serde_json::{Value, json};

use crate::check::Report;
use crate::diagnostic::{Diagnostic, Severity};
use crate::escape;
use crate::policy::{FINDING_PREFIX, is_rule_finding};
use crate::validate::FINDINGS;

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
                        "level": d.severity.name(),
                        "message": escape::terminal(&d.message),
                        "path": template_path(d),
                        "line": d.span.map(|s| s.line),
                        "column": d.span.map(|s| s.column),
                        "help": d.help.as_deref().map(escape::terminal),
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

/// The base every relative artifact URI is resolved against.
const SOURCE_ROOT: &str = "%SRCROOT%";

/// An absolute path as a `file:` URI (`/tmp/a b` is `file:///tmp/a%20b`,
/// `C:\\x` is `file:///C:/x`).
fn file_uri(path: &str) -> String {
    let encoded: String = path
        .split(':')
        .map(escape::uri_reference)
        .collect::<Vec<_>>()
        .join(":");
    let slash = if encoded.starts_with('/') { "" } else { "/" };
    format!("file://{slash}{encoded}")
}

/// Where a file is, as SARIF names an artifact: relative to the source
/// root when it lies below it, else by an absolute `file:` URI.
fn artifact_location(name: &str, root: &std::path::Path) -> Value {
    let path = std::path::Path::new(name);
    let relative = if path.is_absolute() {
        path.strip_prefix(root).ok()
    } else {
        Some(path)
    };
    match relative {
        Some(relative) => json!({
            "uri": escape::uri_reference(&relative.display().to_string()),
            "uriBaseId": SOURCE_ROOT,
        }),
        None => json!({ "uri": file_uri(name) }),
    }
}

/// A SARIF 2.1.0 log with one run and a rule for every finding ID, its
/// relative file names resolved against the working directory.
pub fn sarif(reports: &[Report]) -> String {
    let root = std::env::current_dir().unwrap_or_default();
    sarif_at(reports, &root)
}

/// A SARIF 2.1.0 log whose relative file names are resolved against `root`.
pub fn sarif_at(reports: &[Report], root: &std::path::Path) -> String {
    let mut rules: Vec<Value> = FINDINGS
        .iter()
        .map(|(id, description)| {
            json!({
                "id": id,
                "shortDescription": { "text": description },
                "defaultConfiguration": { "level": sarif_level(Severity::of_id(id)) },
            })
        })
        .collect();
    rules.extend(guard_rules(reports));
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|report| {
            report.diagnostics.iter().map(move |d| {
                let mut location = json!({
                    "physicalLocation": {
                        "artifactLocation": artifact_location(&report.file.name, root),
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
                let mut text = escape::terminal(&d.message).into_owned();
                if let Some(help) = &d.help {
                    text.push_str("\nhelp: ");
                    text.push_str(&escape::terminal(help));
                }
                // A blueprint warning that is no finding (no ID) has no
                // rule; SARIF allows a result without one.
                let mut result = serde_json::Map::new();
                if let Some(code) = d.code {
                    result.insert("ruleId".into(), json!(code));
                }
                result.insert("level".into(), json!(sarif_level(d.severity)));
                result.insert("message".into(), json!({ "text": text }));
                result.insert("locations".into(), json!([location]));
                Value::Object(result)
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
            "originalUriBaseIds": {
                SOURCE_ROOT: { "uri": format!("{}/", file_uri(&root.display().to_string()).trim_end_matches('/')) },
            },
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// A SARIF rule for each CloudFormation Guard rule that failed, by its
/// finding ID (`G:NAME`) and named after it, in the order first reported.
/// The rules that passed are in no result, and need no rule.
fn guard_rules(reports: &[Report]) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    reports
        .iter()
        .flat_map(|report| &report.diagnostics)
        .filter_map(|d| Some((d.code.filter(|code| is_rule_finding(code))?, d.severity)))
        .filter(|(code, _)| seen.insert(*code))
        .map(|(code, severity)| {
            let name = code.strip_prefix(FINDING_PREFIX).unwrap_or(code);
            json!({
                "id": code,
                "name": name,
                "shortDescription": { "text": format!("CloudFormation Guard rule `{name}`") },
                "defaultConfiguration": { "level": sarif_level(severity) },
            })
        })
        .collect()
}

/// SARIF's name of a severity.
fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Kind;
    use crate::source::SourceFile;
    use std::sync::Arc;

    #[test]
    fn sarif_names_files_below_the_root_relatively_and_others_by_file_uris() {
        let report = |name: &str| {
            let file = SourceFile::new(name, "x: 1\n".to_string());
            let mut finding = Diagnostic::error(&file, None, "bad".to_string());
            finding.code = Some("E0001");
            Report {
                file: Arc::clone(&file),
                kind: Kind::Template,
                diagnostics: vec![finding],
                unusable: false,
            }
        };
        let root = std::path::Path::new("/work/repo");
        let reports = [
            report("nodes.yaml"),
            report("/work/repo/stacks/a b.yaml"),
            report("/tmp/elsewhere.yaml"),
        ];
        let log: Value = serde_json::from_str(&sarif_at(&reports, root)).expect("JSON");
        let run = &log["runs"][0];
        assert_eq!(
            run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
            "file:///work/repo/"
        );
        let locations: Vec<&Value> = run["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| &r["locations"][0]["physicalLocation"]["artifactLocation"])
            .collect();
        assert_eq!(
            *locations[0],
            json!({"uri": "nodes.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            *locations[1],
            json!({"uri": "stacks/a%20b.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(*locations[2], json!({"uri": "file:///tmp/elsewhere.yaml"}));
        assert_eq!(file_uri("C:\\x\\y.yaml"), "file:///C:/x/y.yaml");
    }

    #[test]
    fn a_diagnostic_without_a_finding_id_gets_no_rule_in_sarif() {
        let file = SourceFile::new("nodes.yaml", "x: 1\n".to_string());
        let mut coded = Diagnostic::error(&file, None, "bad".to_string());
        coded.code = Some("E0001");
        let plain =
            Diagnostic::warning(&file, None, "the root volume is not encrypted".to_string());
        let reports = [Report {
            file: Arc::clone(&file),
            kind: Kind::Blueprint,
            diagnostics: vec![coded, plain],
            unusable: false,
        }];
        let log: Value = serde_json::from_str(&sarif(&reports)).expect("JSON");
        let results = log["runs"][0]["results"].as_array().expect("results");
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["ruleId"], "E0001");
        assert_eq!(results[0]["level"], "error");
        assert!(results[1].get("ruleId").is_none(), "{}", results[1]);
        assert_eq!(results[1]["level"], "warning");
    }

    #[test]
    fn input_text_in_findings_is_escaped_and_the_file_a_uri_reference() {
        let file = SourceFile::new("my nodes/a%b.yaml", "x: 1\n".to_string());
        let mut finding = Diagnostic::error(
            &file,
            Some(crate::source::Span::new(1, 1, 1)),
            "unknown field `x\u{1b}[31m\n::error file=a::forged`".to_string(),
        )
        .with_help("remove `\u{7}`");
        finding.code = Some("E0001");
        let reports = [Report {
            file: Arc::clone(&file),
            kind: Kind::Blueprint,
            diagnostics: vec![finding],
            unusable: false,
        }];
        let log: Value = serde_json::from_str(&sarif(&reports)).expect("SARIF is JSON");
        let result = &log["runs"][0]["results"][0];
        assert_eq!(
            result["message"]["text"],
            "unknown field `x\\u{1b}[31m\\n::error file=a::forged`\nhelp: remove `\\u{7}`"
        );
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "my%20nodes/a%25b.yaml"
        );
        let report: Value = serde_json::from_str(&json(&reports)).expect("JSON");
        let finding = &report["files"][0]["findings"][0];
        assert_eq!(
            finding["message"],
            "unknown field `x\\u{1b}[31m\\n::error file=a::forged`"
        );
        assert_eq!(finding["help"], "remove `\\u{7}`");
        assert_eq!(report["files"][0]["file"], "my nodes/a%b.yaml");
    }

    #[test]
    fn every_finding_rule_has_the_sarif_level_of_its_id() {
        let log: Value = serde_json::from_str(&sarif(&[])).expect("JSON");
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules");
        let level = |id: &str| {
            rules
                .iter()
                .find(|rule| rule["id"] == id)
                .map(|rule| rule["defaultConfiguration"]["level"].clone())
        };
        assert_eq!(level("E3006"), Some(json!("error")));
        assert_eq!(level("W3009"), Some(json!("warning")));
        assert_eq!(level("I3005"), Some(json!("note")));
        assert_eq!(level("W3005"), None);
    }
}
