//! The whole pipeline for one blueprint, stage by stage: load, suppress,
//! lower, override, split, emit, validate, and attribute the findings to
//! the blueprint fields that produced them.

mod attribution;
mod explain;
mod suppress;
mod validation;

use std::sync::Arc;

use indexmap::IndexMap;

use crate::blueprint::overrides::Applied;
use crate::blueprint::{self, Blueprint};
use crate::cfn::{Format, Template};
use crate::diagnostic::Diagnostic;
use crate::eks::{self, Lowered, stacks::LoweredStack};
use crate::policy::Policy;
use crate::source::{SourceFile, Span};
use crate::validate::SchemaSet;

pub use attribution::{finding_diagnostic, template_span};
pub use explain::explain;

use attribution::{Attribution, attribute_findings};
use suppress::Suppressions;
use validation::{Judges, blueprint_policy, validate_stacks, warn_dropped_parameters};

/// The stacks a blueprint synthesizes, and every diagnostic about the
/// blueprint (warnings of the blueprint itself, and findings located at the
/// blueprint lines that produced them).
#[derive(Debug)]
pub struct Compiled {
    /// Never empty; the main stack first.
    pub stacks: Vec<Stack>,
    pub diagnostics: Vec<Diagnostic>,
    /// Every file the blueprint was read from, indexed by `Span::file`.
    pub files: Vec<Arc<SourceFile>>,
}

/// One synthesized stack.
#[derive(Debug)]
pub struct Stack {
    /// The stack's name, which also names its template file.
    pub name: String,
    /// Where the blueprint declares the stack (see `StackSpec::span`).
    pub span: Span,
    pub template: Template,
    /// The template in the format asked for, emitted once: validation
    /// checks the size of this very text, and `synth` writes it.
    pub text: String,
    /// The findings of the template's validation, suppressions removed.
    pub findings: Vec<crate::validate::Finding>,
    /// For each resource, where in the blueprint it comes from.
    pub origins: IndexMap<String, Span>,
    /// The blueprint's overrides of this stack's resources, in the order
    /// applied.
    pub overrides: Vec<Applied>,
}

impl Compiled {
    /// True when no template may be emitted.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The main stack: the only one of most blueprints.
    pub fn main(&self) -> &Stack {
        &self.stacks[0]
    }

    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> Option<&Stack> {
        self.stacks.iter().find(|stack| stack.name == name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The blueprint has errors; all diagnostics found are here.
    #[error("the blueprint has errors")]
    Blueprint(Vec<Diagnostic>),
    /// A rule file that cannot be read or parsed, the blueprint's or the
    /// command line's: an unusable input, not a finding.
    #[error("the rules cannot be used")]
    Policy(Vec<Diagnostic>),
    #[error(transparent)]
    Internal(#[from] eks::Error),
}

/// Compiles with the embedded schemas.
pub fn compile(file: &Arc<SourceFile>) -> Result<Compiled, CompileError> {
    compile_with(file, SchemaSet::embedded())
}

/// Compiles with `schemas`, emitting YAML: `eksynth validate` on a
/// blueprint.
pub fn compile_with(file: &Arc<SourceFile>, schemas: &SchemaSet) -> Result<Compiled, CompileError> {
    compile_with_overrides(file, schemas, &[], Format::Yaml)
}

/// Compiles with `--set` overrides (`path`, `value`) applied, emitting the
/// templates in `format`, with the blueprint's own rules only.
pub fn compile_with_overrides(
    file: &Arc<SourceFile>,
    schemas: &SchemaSet,
    overrides: &[(String, String)],
    format: Format,
) -> Result<Compiled, CompileError> {
    compile_with_policy(file, schemas, overrides, format, &Policy::none())
}

/// Compiles with `--set` overrides (`path`, `value`) applied, emitting the
/// templates in `format`, and judging them by `rules` and the blueprint's
/// own rules: the pipeline, one stage a line.
pub fn compile_with_policy(
    file: &Arc<SourceFile>,
    schemas: &SchemaSet,
    overrides: &[(String, String)],
    format: Format,
    rules: &Policy,
) -> Result<Compiled, CompileError> {
    let loaded = blueprint::load_with(file, overrides).map_err(CompileError::Blueprint)?;
    let blueprint = &loaded.blueprint;
    let sources = Sources {
        entry: file,
        files: &loaded.files,
    };
    let said_by_the_loader = finding_ids(&loaded.warnings);
    let mut diagnostics = loaded.warnings;
    let mut suppressions =
        Suppressions::resolve(&blueprint.suppressions, sources, &mut diagnostics);
    let mut diagnostics = refuse_errors(diagnostics)?;
    let policy = blueprint_policy(rules, blueprint, sources).map_err(CompileError::Policy)?;
    suppressions.silence(&mut diagnostics);
    let mut lowered = eks::lower(blueprint)?;
    let applied = match apply_overrides(&mut lowered, blueprint, &loaded.files) {
        Ok(applied) => applied,
        Err(errors) => return Err(refused(diagnostics, errors)),
    };
    let (stacks, oversized) = split_into_stacks(lowered, blueprint);
    let mut stacks = emit(stacks, format, &applied);
    let judges = Judges {
        schemas,
        policy: &policy,
    };
    validate_stacks(&mut stacks, &judges, &oversized, &mut suppressions);
    let attribution = Attribution {
        blueprint,
        sources,
        said_by_the_loader: &said_by_the_loader,
        oversized: &oversized,
    };
    attribute_findings(&stacks, &attribution, &mut diagnostics);
    warn_dropped_parameters(
        blueprint,
        &stacks,
        &mut suppressions,
        sources,
        &mut diagnostics,
    );
    suppressions.warn_unused_and_renamed(sources, &mut diagnostics);
    Ok(Compiled {
        stacks: stacks.into_iter().map(|staged| staged.stack).collect(),
        diagnostics,
        files: loaded.files.clone(),
    })
}

/// The finding IDs among the loader's warnings: findings the loader
/// reports itself at the field that asks for them, which validation then
/// does not repeat.
fn finding_ids(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().filter_map(|d| d.code).collect()
}

/// The diagnostics back when none is an error; all of them as the
/// blueprint's errors otherwise, so that no template is lowered from a
/// blueprint with a mistake.
fn refuse_errors(diagnostics: Vec<Diagnostic>) -> Result<Vec<Diagnostic>, CompileError> {
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(CompileError::Blueprint(diagnostics));
    }
    Ok(diagnostics)
}

/// The blueprint's errors: the diagnostics so far and `errors` after them.
fn refused(mut diagnostics: Vec<Diagnostic>, errors: Vec<Diagnostic>) -> CompileError {
    diagnostics.extend(errors);
    CompileError::Blueprint(diagnostics)
}

/// Applies the blueprint's `overrides` to the lowered template, before the
/// split (an override names a resource, wherever it lands) and before
/// validation (which judges what the override made). An override may
/// remove the last use of a parameter, so unused parameters go after.
fn apply_overrides(
    lowered: &mut Lowered,
    blueprint: &Blueprint,
    files: &[Arc<SourceFile>],
) -> Result<Vec<Applied>, Vec<Diagnostic>> {
    let applied = blueprint::overrides::apply(&mut lowered.template, &blueprint.overrides, files)?;
    lowered.template.remove_unused_parameters();
    Ok(applied)
}

/// Splits the lowered template into the blueprint's stacks, main stack
/// first. The user data eksynth measured over EC2's limit stays with the
/// whole blueprint: validation and attribution look it up by launch
/// template, whichever stack holds it.
fn split_into_stacks(
    mut lowered: Lowered,
    blueprint: &Blueprint,
) -> (Vec<LoweredStack>, OversizedUserData) {
    let oversized = std::mem::take(&mut lowered.oversized_user_data);
    (eks::stacks::split(lowered, blueprint), oversized)
}

/// Launch templates whose user data is larger than EC2 accepts: the index
/// of their group in the blueprint, and who takes the bytes
/// ([`eks::Lowered::oversized_user_data`]).
type OversizedUserData = IndexMap<String, (usize, eks::userdata::Share)>;

/// Emits each stack's template in `format`, once: validation measures this
/// very text, and `synth` writes it. Each stack takes the overrides of its
/// own resources, in the order applied.
fn emit(stacks: Vec<LoweredStack>, format: Format, applied: &[Applied]) -> Vec<Staged> {
    stacks
        .into_iter()
        .map(|stack| Staged {
            stack: Stack {
                text: format.emit(&stack.template),
                overrides: overrides_of(&stack.template, applied),
                name: stack.name,
                span: stack.span,
                template: stack.template,
                findings: Vec::new(),
                origins: stack.origins,
            },
            field_origins: stack.field_origins,
        })
        .collect()
}

/// The overrides that changed a resource of `template`.
fn overrides_of(template: &Template, applied: &[Applied]) -> Vec<Applied> {
    applied
        .iter()
        .filter(|o| template.resources.contains_key(&o.resource))
        .cloned()
        .collect()
}

/// A stack on its way through the pipeline: what the stack will be, and
/// the finer origins that attributing its findings needs besides.
struct Staged {
    stack: Stack,
    /// As [`eks::Lowered::field_origins`], for this stack's resources.
    field_origins: IndexMap<String, Span>,
}

/// The files a blueprint was read from, to find the one a span is in.
#[derive(Clone, Copy)]
struct Sources<'a> {
    /// The blueprint's own file, for a span in no file read.
    entry: &'a Arc<SourceFile>,
    /// Every file read, indexed by `Span::file`.
    files: &'a [Arc<SourceFile>],
}

impl Sources<'_> {
    /// The file `span` is in.
    fn of(&self, span: Span) -> Arc<SourceFile> {
        self.files
            .get(span.file as usize)
            .unwrap_or(self.entry)
            .clone()
    }
}
