//! The Guard rule findings of a report of `eksynth validate --format json`,
//! read in one place: the tests that run `--rules` compare what they find
//! with what they expect. Declared by the tests that use it
//! (`#[path = "common/guard_findings.rs"] mod guard_findings;`).

use serde_json::Value;

/// One finding of a report: the file it is in, the name of the rule it
/// reports, and its line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RuleFinding {
    pub file: String,
    pub rule: String,
    pub line: Option<u64>,
}

/// Every rule finding of every file of `report`, and every other finding
/// but notes. A rule finding's rule is its `"id"` after the rule findings'
/// `G:`. Any other error or warning keeps its ID and message as its rule,
/// so that it shows in a comparison too; a note (`"level": "note"`, such as
/// the size of a large template) is information, and left out.
pub fn rule_findings(report: &Value) -> Vec<RuleFinding> {
    let mut found = Vec::new();
    for file in report["files"].as_array().expect("a report's files") {
        let name = file["file"].as_str().expect("a file's name");
        for finding in file["findings"].as_array().expect("a file's findings") {
            let id = finding["id"].as_str().unwrap_or_default();
            let rule = match id.strip_prefix("G:") {
                Some(rule) => rule.to_string(),
                None if finding["level"] == "note" => continue,
                None => format!("{id} {}", finding["message"].as_str().unwrap_or_default()),
            };
            found.push(RuleFinding {
                file: name.to_string(),
                rule,
                line: finding["line"].as_u64(),
            });
        }
    }
    found
}
