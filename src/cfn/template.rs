//! A CloudFormation template: sections, parameters, resources and outputs,
//! held in insertion order so that emitting is deterministic.

use indexmap::IndexMap;

use super::expr::Expr;

pub const FORMAT_VERSION: &str = "2010-09-09";

/// A whole template. Sections are emitted in CloudFormation's conventional
/// order: format version, description, metadata, parameters, mappings,
/// conditions, resources, outputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template {
    pub description: Option<String>,
    pub metadata: IndexMap<String, Expr>,
    pub parameters: IndexMap<String, Parameter>,
    pub mappings: IndexMap<String, Expr>,
    pub conditions: IndexMap<String, Expr>,
    pub resources: IndexMap<String, Resource>,
    pub outputs: IndexMap<String, Output>,
    /// SAM's `Globals` section, read only under the serverless transform;
    /// never emitted (a synthesized template has no transform).
    pub globals: IndexMap<String, Expr>,
}

impl Template {
    /// The whole template as one mapping in CloudFormation's canonical
    /// layout: the sections in conventional order (empty ones left out),
    /// each parameter, resource and output with its keys in a fixed order.
    /// Both emitters render this value, so they agree on every key and its
    /// place; they only differ in how they spell the values.
    pub fn layout(&self) -> Expr {
        let mut entries = Entries::default();
        entries.put("AWSTemplateFormatVersion", FORMAT_VERSION);
        entries.put_opt("Description", self.description.as_deref());
        entries.put_section("Metadata", &self.metadata, Expr::clone);
        entries.put_section("Parameters", &self.parameters, Parameter::layout);
        entries.put_section("Mappings", &self.mappings, Expr::clone);
        entries.put_section("Conditions", &self.conditions, Expr::clone);
        entries.put_section("Resources", &self.resources, Resource::layout);
        entries.put_section("Outputs", &self.outputs, Output::layout);
        entries.into_expr()
    }
}

/// The keys of one mapping of the layout, in the order they are put.
#[derive(Default)]
struct Entries(IndexMap<String, Expr>);

impl Entries {
    fn put(&mut self, key: &str, value: impl Into<Expr>) {
        self.0.insert(key.to_string(), value.into());
    }

    fn put_opt(&mut self, key: &str, value: Option<impl Into<Expr>>) {
        if let Some(value) = value {
            self.put(key, value);
        }
    }

    /// A named mapping, left out when it is empty.
    fn put_section<T>(&mut self, key: &str, items: &IndexMap<String, T>, lay: fn(&T) -> Expr) {
        if !items.is_empty() {
            let items = items.iter().map(|(name, item)| (name.as_str(), lay(item)));
            self.put(key, Expr::map(items));
        }
    }

    fn into_expr(self) -> Expr {
        Expr::Map(self.0)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameter {
    pub kind: String,
    pub description: Option<String>,
    pub default: Option<Expr>,
    pub allowed_values: Vec<Expr>,
    pub allowed_pattern: Option<String>,
    pub constraint_description: Option<String>,
    pub min_length: Option<i64>,
    pub max_length: Option<i64>,
    pub min_value: Option<i64>,
    pub max_value: Option<i64>,
    pub no_echo: bool,
}

impl Parameter {
    pub fn new(kind: impl Into<String>) -> Parameter {
        Parameter {
            kind: kind.into(),
            ..Parameter::default()
        }
    }

    pub fn described(mut self, description: impl Into<String>) -> Parameter {
        self.description = Some(description.into());
        self
    }

    pub fn with_default(mut self, default: impl Into<Expr>) -> Parameter {
        self.default = Some(default.into());
        self
    }

    /// The parameter as written in a template, keys in their fixed order.
    pub fn layout(&self) -> Expr {
        let mut entries = Entries::default();
        entries.put("Type", self.kind.as_str());
        entries.put_opt("Description", self.description.as_deref());
        entries.put_opt("Default", self.default.clone());
        if !self.allowed_values.is_empty() {
            entries.put("AllowedValues", Expr::list(self.allowed_values.clone()));
        }
        entries.put_opt("AllowedPattern", self.allowed_pattern.as_deref());
        entries.put_opt(
            "ConstraintDescription",
            self.constraint_description.as_deref(),
        );
        entries.put_opt("MinLength", self.min_length);
        entries.put_opt("MaxLength", self.max_length);
        entries.put_opt("MinValue", self.min_value);
        entries.put_opt("MaxValue", self.max_value);
        if self.no_echo {
            entries.put("NoEcho", true);
        }
        entries.into_expr()
    }
}

/// One resource. `Properties` keeps insertion order; the attributes are
/// emitted in a fixed order after `Type`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resource {
    pub kind: String,
    pub condition: Option<String>,
    pub depends_on: Vec<String>,
    pub metadata: Option<Expr>,
    pub properties: IndexMap<String, Expr>,
    pub creation_policy: Option<Expr>,
    pub update_policy: Option<Expr>,
    pub deletion_policy: Option<String>,
    pub update_replace_policy: Option<String>,
    /// SAM's `IgnoreGlobals` attribute, read only under the serverless
    /// transform; never emitted.
    pub ignore_globals: Option<Expr>,
}

impl Resource {
    pub fn new(kind: impl Into<String>) -> Resource {
        Resource {
            kind: kind.into(),
            ..Resource::default()
        }
    }

    /// Sets a property; the order of calls is the order of emission.
    pub fn prop(mut self, name: &str, value: impl Into<Expr>) -> Resource {
        self.properties.insert(name.to_string(), value.into());
        self
    }

    /// Sets a property when there is a value for it.
    pub fn prop_opt(self, name: &str, value: Option<impl Into<Expr>>) -> Resource {
        match value {
            Some(value) => self.prop(name, value),
            None => self,
        }
    }

    fn layout(&self) -> Expr {
        let mut entries = Entries::default();
        entries.put("Type", self.kind.as_str());
        entries.put_opt("Condition", self.condition.as_deref());
        // One dependency is written as a plain name, several as a list.
        match self.depends_on.as_slice() {
            [] => {}
            [one] => entries.put("DependsOn", one.as_str()),
            many => entries.put("DependsOn", Expr::list(many.iter().map(Expr::str))),
        }
        entries.put_opt("Metadata", self.metadata.clone());
        if !self.properties.is_empty() {
            entries.put("Properties", Expr::Map(self.properties.clone()));
        }
        entries.put_opt("CreationPolicy", self.creation_policy.clone());
        entries.put_opt("UpdatePolicy", self.update_policy.clone());
        entries.put_opt("DeletionPolicy", self.deletion_policy.as_deref());
        entries.put_opt("UpdateReplacePolicy", self.update_replace_policy.as_deref());
        entries.into_expr()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub description: Option<String>,
    pub condition: Option<String>,
    pub value: Expr,
    /// The export name, when the output is exported.
    pub export: Option<Expr>,
}

impl Output {
    /// The output as written in a template, keys in their fixed order.
    pub fn layout(&self) -> Expr {
        let mut entries = Entries::default();
        entries.put_opt("Description", self.description.as_deref());
        entries.put_opt("Condition", self.condition.as_deref());
        entries.put("Value", self.value.clone());
        if let Some(export) = &self.export {
            entries.put("Export", Expr::map([("Name", export.clone())]));
        }
        entries.into_expr()
    }
}

impl Default for Expr {
    fn default() -> Expr {
        Expr::String(String::new())
    }
}

impl Template {
    /// Removes the parameters nothing refers to: a template that declares a
    /// parameter it never uses asks for a value it ignores.
    pub fn remove_unused_parameters(&mut self) {
        let mut used = std::collections::HashSet::new();
        let mut note = |expr: &Expr| {
            used.extend(
                expr.references()
                    .into_iter()
                    .map(|(name, _)| name.to_string()),
            );
        };
        for resource in self.resources.values() {
            resource.properties.values().for_each(&mut note);
            for attribute in [
                &resource.metadata,
                &resource.creation_policy,
                &resource.update_policy,
            ]
            .into_iter()
            .flatten()
            {
                note(attribute);
            }
        }
        for output in self.outputs.values() {
            note(&output.value);
            if let Some(export) = &output.export {
                note(export);
            }
        }
        self.conditions.values().for_each(&mut note);
        self.mappings.values().for_each(&mut note);
        self.parameters.retain(|name, _| used.contains(name));
    }
}
