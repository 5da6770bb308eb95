//! Composition: a blueprint may `extend` a base blueprint (a preset shipped
//! in `blueprints/presets/`, or a file at a path relative to the
//! blueprint's folder, `../` allowed, never absolute, which must hold a
//! mapping), and `--set path=value` overrides single fields (`extends`
//! aside: the bases are merged first). Both work on the syntax tree
//! before it is decoded, so every field keeps the location it was written
//! at, in whichever file that was.
//!
//! The rule: maps merge key by key, the extending side winning; anything
//! else (scalars, lists) is replaced whole, but for the top-level `rules`,
//! which add up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::source::{self, SourceFile, Span};
use crate::syntax::{self, Key, Node, Value};

/// The presets a blueprint can extend by name.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "al2023-on-demand",
        include_str!("../../blueprints/presets/al2023-on-demand.yaml"),
    ),
    (
        "al2023-spot-graviton",
        include_str!("../../blueprints/presets/al2023-spot-graviton.yaml"),
    ),
    (
        "bottlerocket",
        include_str!("../../blueprints/presets/bottlerocket.yaml"),
    ),
    (
        "windows",
        include_str!("../../blueprints/presets/windows.yaml"),
    ),
    ("gpu", include_str!("../../blueprints/presets/gpu.yaml")),
];

/// A blueprint's tree with its bases merged in and the overrides applied,
/// and every file it was read from (indexed by `Span::file`).
pub struct Composed {
    pub root: Node,
    pub files: Vec<Arc<SourceFile>>,
}

/// Resolves `extends` chains and applies `overrides` (`path`, `value`).
pub fn compose(
    file: &Arc<SourceFile>,
    overrides: &[(String, String)],
) -> Result<Composed, Vec<Diagnostic>> {
    let root = syntax::parse(file).map_err(|d| vec![*d])?;
    let mut files = vec![Arc::clone(file)];
    let mut chain = vec![(identity_of(&file.name), file.name.clone())];
    let mut root = resolve(root, &mut files, &mut chain, 0)?;
    let mut errors = Vec::new();
    for (path, value) in overrides {
        if let Err(error) = apply_override(&mut root, &mut files, path, value) {
            errors.push(*error);
        }
    }
    if errors.is_empty() {
        Ok(Composed { root, files })
    } else {
        Err(errors)
    }
}

/// What identifies a blueprint in an `extends` chain, to find cycles.
fn identity_of(name: &str) -> String {
    std::fs::canonicalize(name).map_or_else(|_| name.to_string(), |p| p.display().to_string())
}

/// Merges the bases of `node` (read from `files[file_index]`) into it.
/// `chain` holds the blueprints being resolved, as (identity, name shown).
fn resolve(
    mut node: Node,
    files: &mut Vec<Arc<SourceFile>>,
    chain: &mut Vec<(String, String)>,
    file_index: usize,
) -> Result<Node, Vec<Diagnostic>> {
    let Value::Map(entries) = &mut node.value else {
        return Ok(node);
    };
    let Some(position) = entries.iter().position(|(key, _)| key.name == "extends") else {
        return Ok(node);
    };
    let (_, target) = entries.remove(position);
    let file = Arc::clone(&files[file_index]);
    let Some(name) = target.as_str() else {
        return Err(vec![
            Diagnostic::error(
                &file,
                Some(target.span),
                format!(
                    "`extends` must be a preset name or a path relative to this blueprint's folder, found {}",
                    target.kind()
                ),
            )
            .with_help(preset_help()),
        ]);
    };
    let (base_name, text, identity) = if is_path(name) {
        if Path::new(name).is_absolute() || name.starts_with(['/', '\\']) {
            return Err(vec![
                Diagnostic::error(
                    &file,
                    Some(target.span),
                    format!("`extends` takes a relative path, not the absolute path `{name}`"),
                )
                .with_help(
                    "write the base's path from this blueprint's folder, such as `../base.yaml`, so that it holds wherever the repository is checked out",
                ),
            ]);
        }
        let path = base_path(&file.name, name);
        let shown = path.display().to_string();
        let unreadable = |reason: String| {
            vec![
                Diagnostic::error(
                    &file,
                    Some(target.span),
                    format!("cannot read the base blueprint `{shown}`: {reason}"),
                )
                .with_label("extended here")
                .with_help("a relative path is taken from the extending blueprint's folder"),
            ]
        };
        let bytes = source::read_file(&path).map_err(|error| unreadable(error.to_string()))?;
        let text = crate::syntax::text_of(bytes).map_err(|error| unreadable(error.to_string()))?;
        (shown.clone(), text, identity_of(&shown))
    } else {
        match PRESETS.iter().find(|(preset, _)| *preset == name) {
            Some((preset, text)) => (
                format!("preset:{preset}"),
                text.to_string(),
                format!("preset:{preset}"),
            ),
            None => {
                let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                let mut diagnostic = Diagnostic::error(
                    &file,
                    Some(target.span),
                    format!("there is no preset `{name}`"),
                )
                .with_help(preset_help());
                if let Some(best) = crate::suggest::closest(name, &names) {
                    diagnostic.help = Some(format!("did you mean `{best}`? {}", preset_help()));
                }
                return Err(vec![diagnostic]);
            }
        }
    };
    if let Some(first) = chain.iter().position(|(seen, _)| *seen == identity) {
        let cycle: Vec<&str> = chain[first..]
            .iter()
            .map(|(_, shown)| shown.as_str())
            .collect();
        return Err(vec![
            Diagnostic::error(
                &file,
                Some(target.span),
                format!(
                    "`extends` makes a cycle: {} → {base_name}",
                    cycle.join(" → ")
                ),
            )
            .with_help("a blueprint cannot extend itself, directly or through its bases"),
        ]);
    }
    let base_file = SourceFile::new(base_name, text);
    let id = files.len() as u32;
    files.push(Arc::clone(&base_file));
    let base = syntax::parse_as(&base_file, id).map_err(|d| vec![*d])?;
    if !matches!(base.value, Value::Map(_)) {
        return Err(vec![
            Diagnostic::error(
                &file,
                Some(target.span),
                format!(
                    "the base `{}` is not a blueprint: it holds {}, not a mapping of blueprint fields",
                    base_file.name,
                    base.kind()
                ),
            )
            .with_label("extended here")
            .with_help("a base is a blueprint, such as a file that starts with `apiVersion: eksynth.io/v1`"),
        ]);
    }
    chain.push((identity, base_file.name.clone()));
    let mut base = resolve(base, files, chain, id as usize)?;
    chain.pop();
    // A stack's name belongs to the blueprint that writes it: staging and
    // prod extending one base must not both be named after it.
    if let Value::Map(entries) = &mut base.value {
        entries.retain(|(key, _)| key.name != "stack");
    }
    join_rules(&base, &mut node);
    Ok(merge(base, node))
}

/// A base's `rules` are kept under an extending blueprint's, which adds
/// its own after them: a platform team's policies hold in every
/// environment that extends its base. Each item keeps the span of the file
/// that writes it, whose folder its path is taken from.
fn join_rules(base: &Node, node: &mut Node) {
    let rules_of = |node: &Node| match &node.value {
        Value::Map(entries) => entries
            .iter()
            .find(|(key, _)| key.name == "rules")
            .and_then(|(_, value)| match &value.value {
                Value::Seq(items) => Some(items.clone()),
                _ => None,
            }),
        _ => None,
    };
    let Some(mut joined) = rules_of(base) else {
        return;
    };
    let Value::Map(entries) = &mut node.value else {
        return;
    };
    if let Some((_, value)) = entries.iter_mut().find(|(key, _)| key.name == "rules")
        && let Value::Seq(items) = &mut value.value
    {
        joined.append(items);
        *items = joined;
    }
}

fn preset_help() -> String {
    let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
    format!(
        "the presets are {}; a relative path such as `./base.yaml` or `../base.yaml` names a file",
        crate::suggest::listed(&names)
    )
}

fn is_path(name: &str) -> bool {
    name.contains('/')
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name.ends_with(".json")
}

/// The path of a base, from the extending blueprint's folder, without `.`
/// components so that messages show it plainly.
fn base_path(extending: &str, relative: &str) -> PathBuf {
    let joined = Path::new(extending)
        .parent()
        .unwrap_or(Path::new(""))
        .join(relative);
    joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `over` on top of `base`: maps merge key by key, anything else is
/// replaced. Keys keep the base's order, new keys follow in `over`'s order.
pub fn merge(base: Node, over: Node) -> Node {
    match (base.value, over.value) {
        (Value::Map(base_entries), Value::Map(over_entries)) => {
            let mut merged: Vec<(Key, Node)> =
                Vec::with_capacity(base_entries.len() + over_entries.len());
            let mut over_entries: Vec<Option<(Key, Node)>> =
                over_entries.into_iter().map(Some).collect();
            for (key, value) in base_entries {
                let replacement = over_entries
                    .iter_mut()
                    .find(|entry| entry.as_ref().is_some_and(|(k, _)| k.name == key.name))
                    .and_then(Option::take);
                match replacement {
                    Some((over_key, over_value)) => {
                        merged.push((over_key, merge(value, over_value)))
                    }
                    None => merged.push((key, value)),
                }
            }
            merged.extend(over_entries.into_iter().flatten());
            Node {
                span: over.span,
                tag: over.tag,
                value: Value::Map(merged),
            }
        }
        (_, value) => Node {
            span: over.span,
            tag: over.tag,
            value,
        },
    }
}

/// `--set a.b.0.c=value`: the value is read as YAML and put at the path,
/// creating maps on the way; its location is the `--set` argument itself.
fn apply_override(
    root: &mut Node,
    files: &mut Vec<Arc<SourceFile>>,
    path: &str,
    value: &str,
) -> Result<(), Box<Diagnostic>> {
    let argument = format!("{path}={value}");
    let source = SourceFile::new("--set", argument.clone());
    let id = files.len() as u32;
    files.push(Arc::clone(&source));
    let value_span = Span {
        line: 1,
        column: path.chars().count() + 2,
        len: value.chars().count().max(1),
        file: id,
    };
    let path_span = Span {
        line: 1,
        column: 1,
        len: path.chars().count().max(1),
        file: id,
    };
    let mut node = if value.trim().is_empty() {
        Node {
            span: value_span,
            tag: None,
            value: Value::String(String::new()),
        }
    } else {
        syntax::parse(&SourceFile::new("--set", value.to_string())).map_err(|error| {
            Box::new(Diagnostic::error(
                &source,
                Some(value_span),
                format!("`--set {argument}`: {}", error.message),
            ))
        })?
    };
    relocate(&mut node, value_span);
    let segments: Vec<&str> = path.split('.').collect();
    // Where each segment is in the argument, for errors about one of them.
    let segment_span = |index: usize| {
        let column = 1 + segments[..index]
            .iter()
            .map(|s| s.chars().count() + 1)
            .sum::<usize>();
        Span {
            line: 1,
            column,
            len: segments[index].chars().count().max(1),
            file: id,
        }
    };
    if let Some(empty) = segments.iter().position(|s| s.is_empty()) {
        return Err(Box::new(
            Diagnostic::error(
                &source,
                Some(segment_span(empty)),
                format!("`--set {argument}` has an empty path segment"),
            )
            .with_help("write the path with dots, e.g. `--set nodeGroups.0.maxSize=5`"),
        ));
    }
    // The bases are merged before the overrides are applied: an `extends`
    // set here would be read by nothing.
    if segments[0] == "extends" {
        return Err(Box::new(
            Diagnostic::error(
                &source,
                Some(path_span),
                format!("`--set {argument}`: `extends` cannot be set from the command line"),
            )
            .with_help(
                "write `extends:` in the blueprint; `--set` changes fields after its bases are merged",
            ),
        ));
    }
    let mut current = root;
    for (index, segment) in segments.iter().enumerate() {
        let last = index + 1 == segments.len();
        match &mut current.value {
            Value::Map(entries) => {
                let position = match entries.iter().position(|(key, _)| key.name == *segment) {
                    Some(position) => position,
                    None => {
                        entries.push((
                            Key {
                                span: path_span,
                                name: segment.to_string(),
                            },
                            Node {
                                span: path_span,
                                tag: None,
                                value: Value::Map(Vec::new()),
                            },
                        ));
                        entries.len() - 1
                    }
                };
                if last {
                    entries[position].1 = node;
                    return Ok(());
                }
                current = &mut entries[position].1;
            }
            Value::Seq(items) => {
                let count = items.len();
                let Some(item) = segment.parse::<usize>().ok().and_then(|i| items.get_mut(i))
                else {
                    let help = match count {
                        0 => "the list is empty".to_string(),
                        1 => "the list has 1 item, numbered 0".to_string(),
                        n => format!("the list has {n} items, numbered from 0 to {}", n - 1),
                    };
                    return Err(Box::new(
                        Diagnostic::error(
                            &source,
                            Some(segment_span(index)),
                            format!("`--set {argument}`: `{segment}` is not an index of that list"),
                        )
                        .with_help(help),
                    ));
                };
                if last {
                    *item = node;
                    return Ok(());
                }
                current = item;
            }
            _ => {
                return Err(Box::new(Diagnostic::error(
                    &source,
                    Some(segment_span(index)),
                    format!(
                        "`--set {argument}`: `{segment}` is inside a value that is not a mapping or a list"
                    ),
                )));
            }
        }
    }
    Ok(())
}

/// Points every node of an override at the override argument.
fn relocate(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|item| relocate(item, span)),
        Value::Map(entries) => {
            for (key, value) in entries {
                key.span = span;
                relocate(value, span);
            }
        }
        _ => {}
    }
}
