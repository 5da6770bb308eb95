//! Changing one value of a resource by its path
//! (`Properties.LaunchTemplateData.CpuOptions`): set it, creating the
//! mappings on the way, or delete it. Mapping keys are path segments as
//! written; inside a list a segment is an item's index, counted from 0.
//!
//! A path starts with one of the resource's attribute sections. Those that
//! hold one value as a whole (`DependsOn`, the policies, `Condition`) are
//! only ever replaced or deleted whole.

use super::expr::Expr;
use super::template::Resource;

/// The attribute sections a path may start with. `Type` is not one: a
/// resource of another type is another resource.
pub const SECTIONS: &[&str] = &[
    "Properties",
    "Metadata",
    "CreationPolicy",
    "UpdatePolicy",
    "DependsOn",
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "Condition",
];

/// The sections that hold a single value, which a path names alone.
pub const WHOLE_SECTIONS: &[&str] = &[
    "DependsOn",
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "Condition",
];

/// What to do at the end of the path.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    Set(Expr),
    Delete,
}

/// Why a change cannot be made. `at` is the index of the path segment
/// at fault, the section being segment 0.
#[derive(Clone, Debug, PartialEq)]
pub enum PatchError {
    /// The first segment is not one of [`SECTIONS`].
    UnknownSection,
    /// The path goes on past a section that holds a single value.
    PastWholeSection { at: usize },
    /// The value goes into a section that cannot hold it; `expected` says
    /// what the section takes.
    WrongShape { expected: &'static str },
    /// The path goes through a value that is neither a mapping nor a list;
    /// `found` says what it is.
    NotAContainer { at: usize, found: String },
    /// The segment is not an index of a list of `len` items.
    NoSuchIndex { at: usize, len: usize },
    /// A path to delete names a key its mapping does not have; `keys` are
    /// the keys it has.
    NoSuchKey { at: usize, keys: Vec<String> },
}

/// What a whole section must hold, when `value` does not fit it; `None`
/// when it fits (or the section takes any value).
pub fn misfit(section: &str, value: &Expr) -> Option<&'static str> {
    let fits = match section {
        "Properties" => matches!(value, Expr::Map(_)),
        "DependsOn" => depends_on(value).is_some(),
        "DeletionPolicy" | "UpdateReplacePolicy" | "Condition" => {
            matches!(value, Expr::String(_))
        }
        _ => true,
    };
    (!fits).then_some(match section {
        "Properties" => "a mapping of properties",
        "DependsOn" => "a logical ID or a list of logical IDs",
        "Condition" => "a condition name",
        _ => "a policy name such as `Retain`",
    })
}

fn depends_on(value: &Expr) -> Option<Vec<String>> {
    match value {
        Expr::String(one) => Some(vec![one.clone()]),
        Expr::List(items) => items
            .iter()
            .map(|item| match item {
                Expr::String(id) => Some(id.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Applies `change` at `path` in `resource`. Nothing changes on error.
pub fn apply(resource: &mut Resource, path: &[&str], change: Change) -> Result<(), PatchError> {
    let Some((section, rest)) = path.split_first() else {
        return Err(PatchError::UnknownSection);
    };
    if !SECTIONS.contains(section) {
        return Err(PatchError::UnknownSection);
    }
    if WHOLE_SECTIONS.contains(section) || rest.is_empty() {
        if !rest.is_empty() {
            return Err(PatchError::PastWholeSection { at: 1 });
        }
        return replace_section(resource, section, change);
    }
    // A section that holds a tree: work on it as one mapping.
    let mut tree = match *section {
        "Properties" => Some(Expr::Map(std::mem::take(&mut resource.properties))),
        "Metadata" => resource.metadata.take(),
        "CreationPolicy" => resource.creation_policy.take(),
        _ => resource.update_policy.take(),
    };
    let original = tree.clone();
    let result = match (&mut tree, change) {
        (Some(root), change) => change_in(root, rest, 1, change),
        (None, Change::Set(value)) => {
            let mut root = Expr::Map(Default::default());
            let result = change_in(&mut root, rest, 1, Change::Set(value));
            tree = Some(root);
            result
        }
        (None, Change::Delete) => Err(PatchError::NoSuchKey {
            at: 1,
            keys: Vec::new(),
        }),
    };
    if result.is_err() {
        tree = original;
    }
    match *section {
        "Properties" => {
            resource.properties = match tree {
                Some(Expr::Map(map)) => map,
                _ => Default::default(),
            }
        }
        "Metadata" => resource.metadata = tree,
        "CreationPolicy" => resource.creation_policy = tree,
        _ => resource.update_policy = tree,
    }
    result
}

/// Sets or deletes a whole section.
fn replace_section(
    resource: &mut Resource,
    section: &str,
    change: Change,
) -> Result<(), PatchError> {
    let value = match change {
        Change::Set(value) => {
            if let Some(expected) = misfit(section, &value) {
                return Err(PatchError::WrongShape { expected });
            }
            Some(value)
        }
        Change::Delete => None,
    };
    let string = |value: Option<Expr>| match value {
        Some(Expr::String(s)) => Some(s),
        _ => None,
    };
    match section {
        "Properties" => {
            resource.properties = match value {
                Some(Expr::Map(map)) => map,
                _ => Default::default(),
            }
        }
        "Metadata" => resource.metadata = value,
        "CreationPolicy" => resource.creation_policy = value,
        "UpdatePolicy" => resource.update_policy = value,
        "DependsOn" => {
            resource.depends_on = value.as_ref().and_then(depends_on).unwrap_or_default();
        }
        "DeletionPolicy" => resource.deletion_policy = string(value),
        "UpdateReplacePolicy" => resource.update_replace_policy = string(value),
        "Condition" => resource.condition = string(value),
        _ => return Err(PatchError::UnknownSection),
    }
    Ok(())
}

/// Applies `change` at `path` below `node`; `at` is the index of the
/// path's first segment in the whole path.
fn change_in(node: &mut Expr, path: &[&str], at: usize, change: Change) -> Result<(), PatchError> {
    let Some((segment, rest)) = path.split_first() else {
        return Ok(());
    };
    let last = rest.is_empty();
    match node {
        Expr::Map(map) => {
            if last {
                match change {
                    Change::Set(value) => {
                        map.insert(segment.to_string(), value);
                    }
                    Change::Delete => {
                        if map.shift_remove(*segment).is_none() {
                            return Err(PatchError::NoSuchKey {
                                at,
                                keys: map.keys().cloned().collect(),
                            });
                        }
                    }
                }
                return Ok(());
            }
            if !map.contains_key(*segment) {
                if change == Change::Delete {
                    return Err(PatchError::NoSuchKey {
                        at,
                        keys: map.keys().cloned().collect(),
                    });
                }
                map.insert(segment.to_string(), Expr::Map(Default::default()));
            }
            match map.get_mut(*segment) {
                Some(child) => change_in(child, rest, at + 1, change),
                None => Ok(()),
            }
        }
        Expr::List(items) => {
            let len = items.len();
            let Some(index) = segment.parse::<usize>().ok().filter(|i| *i < len) else {
                return Err(PatchError::NoSuchIndex { at, len });
            };
            if !last {
                return change_in(&mut items[index], rest, at + 1, change);
            }
            match change {
                Change::Set(value) => items[index] = value,
                Change::Delete => {
                    items.remove(index);
                }
            }
            Ok(())
        }
        other => Err(PatchError::NotAContainer {
            at,
            found: kind(other),
        }),
    }
}

/// What a value is, in words, for "goes through X".
fn kind(value: &Expr) -> String {
    match value.function_name() {
        Some(function) => format!("a `{function}` function"),
        None => match value {
            Expr::Bool(_) => "a boolean",
            Expr::Int(_) => "an integer",
            Expr::Float(_) => "a number",
            Expr::String(_) => "a string",
            Expr::List(_) => "a list",
            _ => "a mapping",
        }
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource() -> Resource {
        Resource::new("AWS::EC2::LaunchTemplate").prop(
            "LaunchTemplateData",
            Expr::map([
                ("ImageId", Expr::reference("Image")),
                ("Tags", Expr::list([Expr::map([("Key", Expr::str("a"))])])),
            ]),
        )
    }

    #[test]
    fn a_set_creates_the_mappings_on_its_way_and_keeps_key_order() {
        let mut r = resource();
        let path = [
            "Properties",
            "LaunchTemplateData",
            "CpuOptions",
            "CoreCount",
        ];
        assert_eq!(apply(&mut r, &path, Change::Set(Expr::Int(2))), Ok(()));
        let data = &r.properties["LaunchTemplateData"];
        let Expr::Map(data) = data else {
            panic!("not a map: {data:?}")
        };
        let keys: Vec<&String> = data.keys().collect();
        assert_eq!(keys, ["ImageId", "Tags", "CpuOptions"]);
        assert_eq!(data["CpuOptions"], Expr::map([("CoreCount", Expr::Int(2))]));
    }

    #[test]
    fn a_failed_change_leaves_the_resource_as_it_was() {
        let mut r = resource();
        let before = r.clone();
        let path = ["Properties", "LaunchTemplateData", "ImageId", "X"];
        assert_eq!(
            apply(&mut r, &path, Change::Set(Expr::Int(1))),
            Err(PatchError::NotAContainer {
                at: 3,
                found: "a `Ref` function".into()
            })
        );
        let path = ["Properties", "LaunchTemplateData", "Tags", "1", "Key"];
        assert_eq!(
            apply(&mut r, &path, Change::Delete),
            Err(PatchError::NoSuchIndex { at: 3, len: 1 })
        );
        assert_eq!(r, before);
    }

    #[test]
    fn whole_sections_take_values_of_their_shape_only() {
        let mut r = resource();
        assert_eq!(
            apply(
                &mut r,
                &["DependsOn"],
                Change::Set(Expr::list([Expr::str("A"), Expr::str("B")]))
            ),
            Ok(())
        );
        assert_eq!(r.depends_on, ["A", "B"]);
        assert_eq!(
            apply(&mut r, &["DeletionPolicy"], Change::Set(Expr::Int(1))),
            Err(PatchError::WrongShape {
                expected: "a policy name such as `Retain`"
            })
        );
        assert_eq!(
            apply(&mut r, &["DeletionPolicy", "X"], Change::Delete),
            Err(PatchError::PastWholeSection { at: 1 })
        );
    }
}
