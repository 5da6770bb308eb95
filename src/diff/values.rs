//! Values compared (maps key by key, lists aligned on equal items), and
//! what a resource's values refer to: references, renames, similarity.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use indexmap::IndexMap;

use super::render::compact;
use super::resources::sections;
use crate::cfn::{Expr, Resource, sub};

/// Lists longer than this (product of both lengths) are compared item by
/// item at the same index instead of aligned.
const ALIGN_LIMIT: usize = 250_000;

/// One changed value: its path and both sides.
pub(super) struct Leaf<'e> {
    pub(super) path: Vec<String>,
    pub(super) old: Option<&'e Expr>,
    pub(super) new: Option<&'e Expr>,
}

/// The changed values between two values, in the new value's order (keys
/// only in the old value after). Maps are compared key by key; lists of
/// maps or lists item by item, aligned on equal items; anything else
/// (scalars, lists of scalars, intrinsics) as one value.
pub(super) fn diff_values<'e>(
    old: Option<&'e Expr>,
    new: Option<&'e Expr>,
    path: &mut Vec<String>,
    out: &mut Vec<Leaf<'e>>,
) {
    match (old, new) {
        (None, None) => {}
        (Some(o), Some(n)) if o == n => {}
        (Some(Expr::Map(o)), Some(Expr::Map(n))) => {
            for (key, value) in n {
                path.push(key.clone());
                diff_values(o.get(key), Some(value), path, out);
                path.pop();
            }
            for (key, value) in o {
                if !n.contains_key(key) {
                    path.push(key.clone());
                    diff_values(Some(value), None, path, out);
                    path.pop();
                }
            }
        }
        (Some(Expr::List(o)), Some(Expr::List(n))) if structured(o) || structured(n) => {
            diff_lists(o, n, path, out);
        }
        _ => out.push(Leaf {
            path: path.clone(),
            old,
            new,
        }),
    }
}

/// A list of maps or lists, compared item by item.
fn structured(items: &[Expr]) -> bool {
    items
        .iter()
        .any(|item| matches!(item, Expr::Map(_) | Expr::List(_)))
}

/// Two lists aligned on their equal items; the items between two aligned
/// ones are paired by position. Paths use the new index, or the old one
/// for an item only the old list has.
fn diff_lists<'e>(
    old: &'e [Expr],
    new: &'e [Expr],
    path: &mut Vec<String>,
    out: &mut Vec<Leaf<'e>>,
) {
    let anchors = align(old, new, ALIGN_LIMIT);
    let (mut i, mut j) = (0, 0);
    for (ai, aj) in anchors.into_iter().chain([(old.len(), new.len())]) {
        let gap = (ai - i).max(aj - j);
        for k in 0..gap {
            let (o, n) = (old[i..ai].get(k), new[j..aj].get(k));
            let index = if n.is_some() { j + k } else { i + k };
            path.push(index.to_string());
            diff_values(o, n, path, out);
            path.pop();
        }
        (i, j) = (ai + 1, aj + 1);
    }
}

/// The index pairs of a longest common subsequence of two sequences
/// (common prefix and suffix first, then dynamic programming on the rest
/// when it is at most `limit` cells).
pub(super) fn align<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Vec<(usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|k| (k, k)).collect();
    if !ma.is_empty() && !mb.is_empty() && ma.len() * mb.len() <= limit {
        // lengths[x][y]: LCS length of ma[x..] and mb[y..].
        let width = mb.len() + 1;
        let mut lengths = vec![0u32; (ma.len() + 1) * width];
        for x in (0..ma.len()).rev() {
            for y in (0..mb.len()).rev() {
                lengths[x * width + y] = if ma[x] == mb[y] {
                    lengths[(x + 1) * width + y + 1] + 1
                } else {
                    lengths[(x + 1) * width + y].max(lengths[x * width + y + 1])
                };
            }
        }
        let (mut x, mut y) = (0, 0);
        while x < ma.len() && y < mb.len() {
            if ma[x] == mb[y] {
                pairs.push((prefix + x, prefix + y));
                x += 1;
                y += 1;
            } else if lengths[(x + 1) * width + y] >= lengths[x * width + y + 1] {
                x += 1;
            } else {
                y += 1;
            }
        }
    }
    pairs.extend((0..suffix).map(|k| (a.len() - suffix + k, b.len() - suffix + k)));
    pairs
}

/// Every resource or parameter a resource's properties refer to, with the
/// path of the value that refers: `Ref`, `Fn::GetAtt` and `Fn::Sub`
/// variables (`${Name}`, `${Name.Attribute}`) not bound by the `Fn::Sub`'s
/// own map. Pseudo parameters are left out.
pub(super) fn references(
    properties: &IndexMap<String, Expr>,
) -> Vec<(Vec<String>, String, Option<String>)> {
    fn walk(
        value: &Expr,
        path: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, String, Option<String>)>,
    ) {
        match value {
            Expr::Map(entries) => {
                for (key, item) in entries {
                    path.push(key.clone());
                    walk(item, path, out);
                    path.pop();
                }
            }
            Expr::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push(index.to_string());
                    walk(item, path, out);
                    path.pop();
                }
            }
            _ => {
                let mut found = Vec::new();
                intrinsic_references(value, &mut found);
                for (target, attribute) in found {
                    if target.starts_with("AWS::") {
                        continue;
                    }
                    let entry = (path.clone(), target, attribute);
                    if !out.contains(&entry) {
                        out.push(entry);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut path = Vec::new();
    for (key, value) in properties {
        path.push(key.clone());
        walk(value, &mut path, &mut out);
        path.pop();
    }
    out
}

/// The (target, attribute) pairs an intrinsic refers to, anywhere inside it.
fn intrinsic_references(value: &Expr, out: &mut Vec<(String, Option<String>)>) {
    out.extend(
        value
            .references()
            .into_iter()
            .map(|(name, attribute)| (name.to_string(), attribute.map(str::to_string))),
    );
}

/// Every name a resource refers to, in any section, `DependsOn` included.
pub(super) fn referenced_names(resource: &Resource) -> BTreeSet<String> {
    let mut found = Vec::new();
    for (_, value) in sections(resource) {
        if let Some(value) = value {
            intrinsic_references(&value, &mut found);
        }
    }
    let mut names: BTreeSet<String> = found.into_iter().map(|(name, _)| name).collect();
    names.extend(resource.depends_on.iter().cloned());
    names
}

/// A value with its references to renamed resources renamed.
fn rename_expr(value: &Expr, map: &BTreeMap<String, String>) -> Expr {
    let mut value = value.clone();
    rename_in_place(&mut value, map);
    value
}

fn rename_in_place(value: &mut Expr, map: &BTreeMap<String, String>) {
    match value {
        Expr::Ref(target)
        | Expr::GetAtt {
            resource: target, ..
        } => {
            if let Some(renamed) = map.get(target.as_str()) {
                target.clone_from(renamed);
            }
        }
        Expr::Sub {
            template,
            variables,
        } => {
            *template = sub::rename(template, |name| {
                // A variable of the map is not a resource.
                if variables.contains_key(name) {
                    return None;
                }
                let (resource, attribute) = match name.split_once('.') {
                    Some((resource, attribute)) => (resource, Some(attribute)),
                    None => (name, None),
                };
                let renamed = map.get(resource)?;
                Some(match attribute {
                    Some(attribute) => format!("{renamed}.{attribute}"),
                    None => renamed.clone(),
                })
            });
        }
        _ => {}
    }
    for child in value.children_mut() {
        rename_in_place(child, map);
    }
}

/// A resource with its references to renamed resources renamed.
pub(super) fn rename_resource(resource: &Resource, map: &BTreeMap<String, String>) -> Resource {
    if map.is_empty() {
        return resource.clone();
    }
    let rename = |v: &Option<Expr>| v.as_ref().map(|v| rename_expr(v, map));
    Resource {
        kind: resource.kind.clone(),
        condition: resource.condition.clone(),
        depends_on: resource
            .depends_on
            .iter()
            .map(|d| map.get(d).unwrap_or(d).clone())
            .collect(),
        metadata: rename(&resource.metadata),
        properties: resource
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), rename_expr(v, map)))
            .collect(),
        creation_policy: rename(&resource.creation_policy),
        update_policy: rename(&resource.update_policy),
        deletion_policy: resource.deletion_policy.clone(),
        update_replace_policy: resource.update_replace_policy.clone(),
        ignore_globals: rename(&resource.ignore_globals),
    }
}

/// Every scalar (or intrinsic) of a resource by path, rendered, for
/// similarity.
pub(super) fn resource_leaves(resource: &Resource) -> BTreeMap<String, String> {
    fn walk(value: &Expr, path: &mut String, out: &mut BTreeMap<String, String>) {
        match value {
            Expr::Map(entries) if !entries.is_empty() => {
                for (key, item) in entries {
                    let length = path.len();
                    path.push('\u{0}');
                    path.push_str(key);
                    walk(item, path, out);
                    path.truncate(length);
                }
            }
            Expr::List(items) if !items.is_empty() => {
                for (index, item) in items.iter().enumerate() {
                    let length = path.len();
                    let _ = write!(path, "\u{0}{index}");
                    walk(item, path, out);
                    path.truncate(length);
                }
            }
            _ => {
                out.insert(path.clone(), compact(value));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (section, value) in sections(resource) {
        if let Some(value) = value {
            walk(&value, &mut section.name().to_string(), &mut out);
        }
    }
    out
}

/// The share of paths whose values are equal, out of all paths of either.
pub(super) fn similarity(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> f64 {
    let equal = a
        .iter()
        .filter(|(path, value)| b.get(*path) == Some(*value))
        .count();
    let union = a.len() + b.keys().filter(|path| !a.contains_key(*path)).count();
    if union == 0 {
        1.0
    } else {
        equal as f64 / union as f64
    }
}
