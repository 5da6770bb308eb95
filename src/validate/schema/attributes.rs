//! What a schema says about a type beyond its properties' shapes: the
//! attributes `Fn::GetAtt` may read, the read-only properties, and the
//! properties whose change replaces the resource.

use serde_json::Value;

use super::returned::settable_attributes;
use super::{SchemaSet, unescape};

impl SchemaSet {
    /// Attribute names `Fn::GetAtt` may use (the schema's `readOnlyProperties`,
    /// dotted: `LatestVersionNumber`, `Endpoint.Address`), in schema order,
    /// then the settable properties CloudFormation returns too (see
    /// `returned.rs`). Paths through arrays
    /// (`*`) are left out: they cannot be read with `Fn::GetAtt`. Worked out
    /// once per type.
    pub fn attributes(&self, resource_type: &str) -> Option<&[String]> {
        let entry = self.entry(resource_type)?;
        let document = entry.document()?;
        let names = entry.attributes.get_or_init(|| {
            let mut names = Vec::new();
            for path in property_paths(document, "readOnlyProperties") {
                if path.iter().any(|segment| segment == "*") {
                    continue;
                }
                push_unique(&mut names, path.join("."));
            }
            for name in settable_attributes(resource_type, document) {
                push_unique(&mut names, name);
            }
            names
        });
        Some(names)
    }

    /// Top-level property names that are read-only and so cannot be set.
    /// Worked out once per type.
    pub fn read_only_properties(&self, resource_type: &str) -> Option<&[String]> {
        let entry = self.entry(resource_type)?;
        let document = entry.document()?;
        let names = entry.read_only.get_or_init(|| {
            let mut names = Vec::new();
            for path in property_paths(document, "readOnlyProperties") {
                if let Some(first) = path.into_iter().next() {
                    push_unique(&mut names, first);
                }
            }
            names
        });
        Some(names)
    }

    /// Property paths whose change replaces the resource (`createOnlyProperties`),
    /// in schema order: the schema's pointer below `/properties/`, segments
    /// unescaped and joined with `/`, `*` standing for any array item
    /// (`LaunchTemplateName`, `SecurityGroupIngress/*/FromPort`).
    pub fn create_only_properties(&self, resource_type: &str) -> Option<Vec<String>> {
        let document = self.entry(resource_type)?.document()?;
        let mut names = Vec::new();
        for path in property_paths(document, "createOnlyProperties") {
            push_unique(&mut names, path.join("/"));
        }
        Some(names)
    }

    /// The top-level properties that identify a resource of the type
    /// (`primaryIdentifier`), or `None` when one of them is not a
    /// top-level property.
    pub fn primary_identifier(&self, resource_type: &str) -> Option<Vec<String>> {
        let document = self.entry(resource_type)?.document()?;
        property_paths(document, "primaryIdentifier")
            .into_iter()
            .map(|path| match path.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The `/properties/...` pointers the schema lists under `key`, as unescaped
/// segments below `properties`; anything else is ignored.
fn property_paths(document: &Value, key: &str) -> Vec<Vec<String>> {
    let listed = document.get(key).and_then(Value::as_array);
    listed
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|pointer| pointer.strip_prefix("/properties/"))
        .filter(|rest| !rest.is_empty())
        .map(|rest| rest.split('/').map(unescape).collect())
        .collect()
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}
