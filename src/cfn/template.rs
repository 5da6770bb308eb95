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
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub description: Option<String>,
    pub condition: Option<String>,
    pub value: Expr,
    /// The export name, when the output is exported.
    pub export: Option<Expr>,
}

impl Default for Expr {
    fn default() -> Expr {
        Expr::String(String::new())
    }
}
