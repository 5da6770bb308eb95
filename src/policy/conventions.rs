//! What eksynth reads in a rule file besides the rules, by convention: the
//! severity of each rule (`# Severity: warning`), and a custom message's
//! `Violation:` and `Fix:` parts, as the AWS Guard Rules Registry writes
//! them. Also how Guard's parse errors are located.

use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::validate::Level;

use super::record::Failure;

/// What every rule finding's ID starts with: `G:` and the rule's name.
pub const FINDING_PREFIX: &str = "G:";

/// Whether `id` is a rule finding's ID: `G:` and a name Guard accepts (a
/// letter, then letters, digits and underscores).
pub fn is_rule_finding(id: &str) -> bool {
    id.strip_prefix(FINDING_PREFIX).is_some_and(|name| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The rule findings, for the findings reference: their IDs are the rule
/// files' own, so the registry of eksynth's findings cannot list them.
pub const REFERENCE: &[(&str, &str, &str)] = &[
    (
        "G:<rule name>",
        "error, or the level of the rule file's last `# Severity:` comment before the rule",
        "a CloudFormation Guard rule of a `--rules` file or of the blueprint's `rules:` failed on a resource; the message is the rule's `Violation:` line (else the clause that failed), the help its `Fix:` line",
    ),
    (
        "G:EVALUATION",
        "error",
        "Guard could not evaluate a rule file on the template (the message says why)",
    ),
];

/// The comment that sets the severity of the rules declared after it in
/// the file, until the next such comment. Guard has no severity of its own.
const SEVERITY: &str = "severity:";

/// Each rule's severity by the file's `# Severity: error|warning|note`
/// comments: the rules before the first comment are errors. A comment
/// naming another level is an error at its line.
pub(super) fn severities(file: &Arc<SourceFile>) -> Result<Vec<(String, Level)>, Box<Diagnostic>> {
    let mut level = Level::Error;
    let mut found = Vec::new();
    for (index, line) in file.text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.trim();
            let Some(prefix) = comment.get(..SEVERITY.len()) else {
                continue;
            };
            if !prefix.eq_ignore_ascii_case(SEVERITY) {
                continue;
            }
            let value = comment[SEVERITY.len()..].trim();
            level = match value.to_ascii_lowercase().as_str() {
                "error" => Level::Error,
                "warning" => Level::Warning,
                "note" | "info" => Level::Note,
                _ => {
                    let column = line.len() - trimmed.len() + 1;
                    let span = Span::new(index + 1, column, trimmed.chars().count());
                    return Err(Box::new(
                        Diagnostic::error(file, Some(span), format!("`{value}` is not a severity"))
                            .with_help("write `# Severity: error`, `warning` or `note`"),
                    ));
                }
            };
        } else if let Some(name) = rule_name(trimmed) {
            found.push((name.to_string(), level));
        }
    }
    Ok(found)
}

/// The name a line declares a rule of: `rule NAME ...`.
fn rule_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("rule")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// A failure's message and help: a custom message's `Violation:` part (or
/// the whole message, when it has none) and its `Fix:` part; without a
/// custom message, the clause that failed.
pub(super) fn message(failure: &Failure) -> (String, Option<String>) {
    let Some(custom) = &failure.custom else {
        // Guard writes a dependency as `Rule(NAME@Location[...])`.
        let message = match failure.clause.strip_prefix("Rule(") {
            Some(rest) => format!(
                "the rule `{}` it depends on fails",
                rest.split('@').next().unwrap_or(rest)
            ),
            None => format!("`{}` does not hold", failure.clause),
        };
        return (message, None);
    };
    let mut violation = Vec::new();
    let mut fix = Vec::new();
    let mut in_fix = false;
    for line in custom.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(rest) = strip_label(line, "violation:") {
            in_fix = false;
            violation.push(rest);
        } else if let Some(rest) = strip_label(line, "fix:") {
            in_fix = true;
            fix.push(rest);
        } else if in_fix {
            fix.push(line);
        } else {
            violation.push(line);
        }
    }
    let help = (!fix.is_empty()).then(|| fix.join(" "));
    (violation.join(" "), help)
}

/// `line` after `label`, any case, trimmed.
fn strip_label<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let prefix = line.get(..label.len())?;
    prefix
        .eq_ignore_ascii_case(label)
        .then(|| line[label.len()..].trim())
}

/// Guard's parse error as a diagnostic at its line and column in `file`:
/// Guard says `at line L at column C, when handling WHAT, fragment ...`.
pub(super) fn parse_error(file: &Arc<SourceFile>, message: &str) -> Diagnostic {
    let number_after = |marker: &str| -> Option<usize> {
        let rest = &message[message.find(marker)? + marker.len()..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    };
    let line = number_after("at line ");
    let column = number_after(" at column ");
    let expected = message
        .find("when handling ")
        .map(|at| &message[at + "when handling ".len()..])
        .and_then(|rest| rest.split(", fragment").next())
        .map(str::trim)
        .filter(|what| !what.is_empty());
    let span = match (line, column) {
        (Some(line), Some(column)) if line > 0 => Some(Span::new(line, column.max(1), 1)),
        _ => None,
    };
    let text = match expected {
        Some(what) => format!("the Guard rules do not parse: {what}"),
        None if span.is_some() => "the Guard rules do not parse here".to_string(),
        None => {
            let located = unknown_variable(file, message);
            let text = format!("Guard cannot evaluate the rules: {message}");
            return Diagnostic::error(file, located, text)
                .with_help("declare the variable with `let` before the rule that uses it");
        }
    };
    Diagnostic::error(file, span, text).with_help(
        "fix the rule file; `cfn-guard parse-tree --rules FILE` shows how Guard reads it",
    )
}

/// Where a variable Guard cannot resolve (`Could not resolve variable by
/// name NAME`) is first used in `file`: `%NAME`.
fn unknown_variable(file: &SourceFile, message: &str) -> Option<Span> {
    const MARKER: &str = "variable by name ";
    let rest = &message[message.find(MARKER)? + MARKER.len()..];
    let name = &rest[..rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len())];
    let used = format!("%{name}");
    file.text.lines().enumerate().find_map(|(index, line)| {
        let column = line.find(&used)?;
        Some(Span::new(
            index + 1,
            line[..column].chars().count() + 1,
            used.chars().count(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_severity_comment_sets_the_rules_after_it() {
        let file = SourceFile::new(
            "r.guard",
            "rule A { x exists }\n# Severity: warning\nrule B when y exists { x exists }\n  # severity: Note\nrule C { x exists }\n"
                .to_string(),
        );
        let found = severities(&file).map_err(|d| d.render());
        assert_eq!(
            found,
            Ok(vec![
                ("A".to_string(), Level::Error),
                ("B".to_string(), Level::Warning),
                ("C".to_string(), Level::Note),
            ])
        );
    }

    #[test]
    fn a_registry_message_gives_the_violation_and_the_fix() {
        let failure = Failure {
            rule: "R".into(),
            path: String::new(),
            custom: Some("\n  Violation: no tag\n  Fix: set the tag,\n  then deploy\n".into()),
            clause: "c".into(),
        };
        assert_eq!(
            message(&failure),
            (
                "no tag".to_string(),
                Some("set the tag, then deploy".to_string())
            )
        );
    }

    #[test]
    fn a_failed_dependency_is_said_by_the_rule_s_name() {
        let failure = Failure {
            rule: "A".into(),
            path: String::new(),
            custom: None,
            clause: "Rule(B@Location[file:r.guard, line:5, column:3])".into(),
        };
        assert_eq!(
            message(&failure),
            ("the rule `B` it depends on fails".to_string(), None)
        );
    }

    #[test]
    fn rule_finding_ids_are_g_and_a_guard_name() {
        assert!(is_rule_finding("G:EKS_NODE_TAGS"));
        assert!(!is_rule_finding("G:"));
        assert!(!is_rule_finding("G:1A"));
        assert!(!is_rule_finding("E1001"));
    }
}
