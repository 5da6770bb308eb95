//! `eksynth diff`: two templates, a blueprint and a template, or two
//! blueprints compared stack by stack with the node groups that move.

use std::process::ExitCode;
use std::sync::Arc;

use eksynth::cfn;
use eksynth::compile::Compiled;
use eksynth::diagnostic::Diagnostic;
use eksynth::source::SourceFile;
use eksynth::validate::SchemaSet;

use crate::{
    DiffFormat, FINDINGS, USAGE_OR_IO, compiled, finish, read, report, shown, single_stack,
    write_stdout,
};

/// One side of a diff, read and (for a blueprint) synthesized once.
enum Side {
    Blueprint(Arc<SourceFile>, Compiled),
    Template(Box<cfn::Template>),
}

impl Side {
    /// A blueprint is synthesized, anything else is read as a template.
    fn read(path: &str) -> Result<Side, ExitCode> {
        let file = read(path)?;
        let not_a_template = |diagnostics: Vec<Diagnostic>| {
            report(&diagnostics);
            eprintln!(
                "error: `{}` is not a CloudFormation template",
                shown(&file.name)
            );
            ExitCode::from(USAGE_OR_IO)
        };
        let root = eksynth::syntax::parse(&file).map_err(|d| not_a_template(vec![*d]))?;
        if eksynth::check::looks_like_blueprint(&root) {
            let compiled = compiled(&file, SchemaSet::embedded())?;
            return Ok(Side::Blueprint(file, compiled));
        }
        cfn::read::read_parsed(&file, &root)
            .map(|template| Side::Template(Box::new(template)))
            .map_err(not_a_template)
    }

    /// Whether this is a blueprint that makes several stacks.
    fn several_stacks(&self) -> bool {
        matches!(self, Side::Blueprint(_, compiled) if compiled.stacks.len() > 1)
    }

    /// The template to compare: a blueprint's one stack, or the one
    /// `--stack` names.
    fn template(self, stack: Option<&str>) -> Result<cfn::Template, ExitCode> {
        match self {
            Side::Blueprint(file, compiled) => {
                Ok(single_stack(&compiled, &file, stack, "")?.template.clone())
            }
            Side::Template(template) => Ok(*template),
        }
    }
}

/// `diff` of two blueprints that make several stacks: every stack, and the
/// node groups that move between them, a move that no order of deploys can
/// make without losing nodes being an error at the group in the new
/// blueprint.
fn diff_all_stacks(
    (old_path, old): (&str, Compiled),
    (new_file, new): (Arc<SourceFile>, Compiled),
    format: DiffFormat,
) -> Result<ExitCode, ExitCode> {
    use eksynth::diff::stacks;
    let templates = |compiled: &Compiled| -> Vec<(String, cfn::Template)> {
        compiled
            .stacks
            .iter()
            .map(|s| (s.name.clone(), s.template.clone()))
            .collect()
    };
    let change = stacks::diff_stacks(&templates(&old), &templates(&new), SchemaSet::embedded());
    let refusals: Vec<Diagnostic> = change
        .moves
        .iter()
        .filter(|m| !m.keeps_nodes())
        .map(|m| {
            let span = new
                .stacks
                .iter()
                .find_map(|s| s.origins.get(&m.logical_id).copied());
            Diagnostic::error(
                &new_file,
                span,
                format!(
                    "{} moves from stack `{}` to `{}`, and no order of deploys keeps its nodes or their access",
                    m.logical_id, m.from, m.to
                ),
            )
            .with_help(m.advice())
        })
        .collect();
    report(&refusals);
    write_stdout(&match format {
        DiffFormat::Human => stacks::render_stacks_human(&change),
        DiffFormat::Json => stacks::render_stacks_json(&change),
        DiffFormat::Markdown => stacks::render_stacks_markdown(
            &change,
            &repository_path(old_path),
            &repository_path(&new_file.name),
        ),
    })?;
    Ok(if change.has_changes() {
        ExitCode::from(FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// A path as a pull request shows it: relative to the working directory
/// when it lies below it (an absolute path names a machine's folders, not
/// the repository's), else as given.
fn repository_path(path: &str) -> String {
    let absolute = std::path::Path::new(path);
    std::env::current_dir()
        .ok()
        .filter(|_| absolute.is_absolute())
        .and_then(|dir| {
            absolute
                .strip_prefix(dir)
                .ok()
                .map(|p| p.display().to_string())
        })
        .unwrap_or_else(|| path.to_string())
}

pub(crate) fn diff(
    old_path: &str,
    new_path: &str,
    stack: Option<&str>,
    format: DiffFormat,
) -> ExitCode {
    finish((|| {
        let (old, new) = (Side::read(old_path)?, Side::read(new_path)?);
        // Blueprints of which one makes several stacks are compared stack
        // by stack, unless `--stack` picks one.
        let several = old.several_stacks() || new.several_stacks();
        let (old, new) = match (old, new) {
            (Side::Blueprint(_, old), Side::Blueprint(new_file, new))
                if stack.is_none() && several =>
            {
                return diff_all_stacks((old_path, old), (new_file, new), format);
            }
            (old, new) => (old.template(stack)?, new.template(stack)?),
        };
        let diff = eksynth::diff::diff(&old, &new, SchemaSet::embedded());
        write_stdout(&match format {
            DiffFormat::Human => eksynth::diff::render_human(&diff),
            DiffFormat::Json => eksynth::diff::render_json(&diff),
            DiffFormat::Markdown => {
                let side = |path: &str| match stack {
                    Some(stack) => format!("{} (stack {stack})", repository_path(path)),
                    None => repository_path(path),
                };
                eksynth::diff::render_markdown(&diff, &side(old_path), &side(new_path))
            }
        })?;
        Ok(if diff.has_changes() {
            ExitCode::from(FINDINGS)
        } else {
            ExitCode::SUCCESS
        })
    })())
}

#[cfg(test)]
mod tests {
    use super::repository_path;

    #[test]
    fn a_path_below_the_working_directory_is_shown_relative_to_it() {
        let dir = std::env::current_dir().expect("working directory");
        let inside = dir
            .join("examples")
            .join("quickstart")
            .join("blueprint.yaml");
        assert_eq!(
            repository_path(&inside.display().to_string()),
            std::path::Path::new("examples/quickstart/blueprint.yaml")
                .display()
                .to_string()
        );
        assert_eq!(repository_path("old.yaml"), "old.yaml");
        assert_eq!(
            repository_path("/elsewhere/old.yaml"),
            "/elsewhere/old.yaml"
        );
    }
}
