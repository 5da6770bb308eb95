//! Validation of the emitted stacks, with what only the pipeline knows:
//! the user data eksynth measured, the parameters no stack kept, the
//! organisation's rules, and the blueprint's suppressions.

use crate::blueprint::Blueprint;
use crate::blueprint::overrides::Applied;
use crate::cfn::Template;
use crate::diagnostic::Diagnostic;
use crate::eks;
use crate::policy::Policy;
use crate::validate::{self, Finding, SchemaSet};

use super::suppress::Suppressions;
use super::{OversizedUserData, Sources, Staged};

/// How a blueprint splits a stack that is too large, for the findings
/// about a whole stack's size.
const SPLIT_HELP: &str = "place node groups in stacks of their own with `stacks: perGroup`, or name stacks of groups: `stacks: {nodes-gpu: [gpu, gpu-large]}`; the shared resources stay in the main stack";

/// The finding ID of a declared parameter that no template keeps.
const DROPPED_PARAMETER: &str = "W0003";

/// What the stacks are judged by: the provider schemas, and the rules of
/// the command line and the blueprint.
pub(super) struct Judges<'a> {
    pub schemas: &'a SchemaSet,
    pub policy: &'a Policy,
}

/// The rules of the command line, and after them the blueprint's
/// (`rules:`), each path taken from the folder of the blueprint file that
/// writes it: a base's rules from the base's folder. A path that cannot be
/// read is an error at the line that names it.
pub(super) fn blueprint_policy(
    rules: &Policy,
    blueprint: &Blueprint,
    sources: Sources,
) -> Result<Policy, Vec<Diagnostic>> {
    let mut policy = rules.clone();
    for path in &blueprint.rules {
        let file = sources.of(path.span);
        let folder = std::path::Path::new(&file.name)
            .parent()
            .unwrap_or(std::path::Path::new(""));
        policy
            .add(&plain_path(&folder.join(&path.value)))
            .map_err(|error| vec![error.into_diagnostic(&file, Some(path.span))])?;
    }
    Ok(policy)
}

/// `path` without `.`, and without the `..` that follow a folder name (as
/// `env/../base/../rules/x.guard` is `rules/x.guard`), so that messages
/// show the rule file plainly.
fn plain_path(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut plain: Vec<Component> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(plain.last(), Some(Component::Normal(_))) => {
                plain.pop();
            }
            other => plain.push(other),
        }
    }
    plain.into_iter().collect()
}

/// Validates each stack's template and the size of its emitted text, adds
/// the user data eksynth measured over EC2's limit, and keeps the findings
/// no suppression silences.
pub(super) fn validate_stacks(
    stacks: &mut [Staged],
    judges: &Judges,
    oversized: &OversizedUserData,
    suppressions: &mut Suppressions,
) {
    for staged in stacks {
        let stack = &mut staged.stack;
        let mut all = validate::validate(
            &stack.template,
            &validate::Context {
                schemas: judges.schemas,
                template_bytes: Some(stack.text.len()),
                split_help: SPLIT_HELP,
            },
        );
        add_oversized_user_data(&mut all, oversized, &stack.template, &stack.overrides);
        all.extend(judges.policy.check(&stack.template));
        stack.findings = all
            .into_iter()
            .filter(|finding| !suppressions.silences(finding.id))
            .collect();
    }
}

/// Adds E3007 for each launch template of `template` whose user data eksynth
/// measured over EC2's limit and validation did not: validation counts a
/// value filled in at deploy time as nothing (it cannot know what it
/// holds), eksynth at the size a real cluster's value has. An override of
/// the user data replaces what eksynth measured, and validation judges it.
fn add_oversized_user_data(
    findings: &mut Vec<Finding>,
    oversized: &OversizedUserData,
    template: &Template,
    overrides: &[Applied],
) {
    for (id, (_, share)) in oversized {
        let path = format!("Resources/{id}/Properties/LaunchTemplateData/UserData");
        let reported = findings
            .iter()
            .any(|f| f.id == "E3007" && f.resource() == Some(id.as_str()));
        if reported
            || !template.resources.contains_key(id)
            || overrides.iter().any(|o| o.covers(&path))
        {
            continue;
        }
        let message = format!(
            "user data is {} bytes; EC2 accepts at most {}",
            share.total,
            eks::userdata::MAX_USER_DATA_BYTES
        );
        findings.push(Finding::new("E3007", path, message));
    }
}

/// Warns at the line that declares it of each parameter the blueprint
/// declares but no stack uses. It is in no template (CloudFormation
/// linters reject an unused parameter), so a deploy that passes it fails.
pub(super) fn warn_dropped_parameters(
    blueprint: &Blueprint,
    stacks: &[Staged],
    suppressions: &mut Suppressions,
    sources: Sources,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for (name, span) in blueprint.parameters() {
        if stacks
            .iter()
            .any(|staged| staged.stack.template.parameters.contains_key(name))
        {
            continue;
        }
        if !suppressions.silences(DROPPED_PARAMETER) {
            let mut diagnostic = Diagnostic::warning(
                &sources.of(span),
                Some(span),
                format!(
                    "parameter `{name}` is not used by any resource, so no template declares it"
                ),
            )
            .with_help(
                "a deploy that passes it fails (the template does not have it): stop passing it, or write the value as a literal",
            );
            diagnostic.code = Some(DROPPED_PARAMETER);
            diagnostics.push(diagnostic);
        }
    }
}
