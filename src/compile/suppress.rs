//! The blueprint's `suppressions`: which finding IDs they name, which of
//! them silenced a finding, and the warnings about those that did not.

use crate::blueprint::Suppression;
use crate::diagnostic::Diagnostic;
use crate::validate;

use super::Sources;

/// The blueprint's suppressions, each with the finding ID it silences under
/// that finding's current name, and whether it silenced anything yet.
pub(super) struct Suppressions<'a> {
    suppressions: &'a [Suppression],
    /// Each suppression's finding ID under its current name; `None` for an
    /// ID that is no finding's. A rule finding's ID (`G:NAME`) is its own.
    current: Vec<Option<&'a str>>,
    used: Vec<bool>,
}

impl<'a> Suppressions<'a> {
    /// Reads each suppression's finding ID, with an error in `diagnostics`
    /// (and the closest known ID) for one that names no finding: a typo
    /// would otherwise silence nothing without a word.
    pub(super) fn resolve(
        suppressions: &'a [Suppression],
        sources: Sources,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Suppressions<'a> {
        let mut current = Vec::with_capacity(suppressions.len());
        for suppression in suppressions {
            let id = suppression.id.value.as_str();
            let found = validate::current_id(id)
                .or_else(|| crate::policy::is_rule_finding(id).then_some(id));
            if found.is_none() {
                diagnostics.push(unknown_id(suppression, sources));
            }
            current.push(found);
        }
        Suppressions {
            suppressions,
            current,
            used: vec![false; suppressions.len()],
        }
    }

    /// Whether a suppression silences finding `id`; that suppression is
    /// then used.
    pub(super) fn silences(&mut self, id: &str) -> bool {
        match self.current.iter().position(|s| *s == Some(id)) {
            Some(index) => {
                self.used[index] = true;
                true
            }
            None => false,
        }
    }

    /// Drops the loader's warnings that a suppression silences: the
    /// loader reports some findings itself, at the field that asks for
    /// them, and a suppression of the ID applies to those too.
    pub(super) fn silence(&mut self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|diagnostic| !diagnostic.code.is_some_and(|id| self.silences(id)));
    }

    /// Warns of each suppression that silenced nothing (so that a finding
    /// that comes back is not hidden by a stale line) and of each that
    /// names a finding by an old ID.
    pub(super) fn warn_unused_and_renamed(
        self,
        sources: Sources,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let entries = self.suppressions.iter().zip(&self.current).zip(self.used);
        for ((suppression, current), used) in entries {
            let id = suppression.id.value.as_str();
            let located = sources.of(suppression.id.span);
            if !used {
                let diagnostic = Diagnostic::warning(
                    &located,
                    Some(suppression.id.span),
                    format!("suppression of `{id}` matches no finding"),
                )
                .with_help("remove it, so that the finding is reported again should it come back");
                diagnostics.push(diagnostic);
            } else if let Some(current) = current.filter(|current| *current != id) {
                // It still applies; only its name is out of date.
                let diagnostic = Diagnostic::warning(
                    &located,
                    Some(suppression.id.span),
                    format!("finding `{id}` was renamed to `{current}`"),
                )
                .with_label("old name")
                .with_help(format!(
                    "write `id: {current}`; the suppression applies to `{current}` meanwhile"
                ));
                diagnostics.push(diagnostic);
            }
        }
    }
}

/// The error for a suppression whose ID is no finding's, with the closest
/// known ID when one is close.
fn unknown_id(suppression: &Suppression, sources: Sources) -> Diagnostic {
    let id = suppression.id.value.as_str();
    let ids: Vec<&str> = validate::FINDINGS.iter().map(|(known, _)| *known).collect();
    let mut diagnostic = Diagnostic::error(
        &sources.of(suppression.id.span),
        Some(suppression.id.span),
        format!("`{id}` is not a finding ID"),
    );
    diagnostic.help = Some(match crate::suggest::closest(id, &ids) {
        Some(best) => format!("did you mean `{best}`? `eksynth validate --help` lists the IDs"),
        None => "docs/src/reference/findings.md in eksynth's repository lists every finding ID"
            .to_string(),
    });
    diagnostic
}
