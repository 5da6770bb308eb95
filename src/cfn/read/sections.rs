//! The sections of a template: parameters, conditions, resources, outputs
//! and the rest, each read on its own so that an error in one part does
//! not stop the reading of the others.

use indexmap::IndexMap;

use super::{
    Context, FOR_EACH_WITHOUT_TRANSFORM, LANGUAGE_EXTENSIONS, Reader, TRANSFORM_NOTE,
    UNCHECKED_NOTE, app_tag,
};
use crate::cfn::expr::Expr;
use crate::cfn::template::{FORMAT_VERSION, Output, Parameter, Resource, Template};
use crate::source::Span;
use crate::syntax::{Key, Node, Value};

/// Resources per reader when a template's resources are read side by side.
const RESOURCES_PER_READER: usize = 32;
/// Templates with fewer resources are read by one reader: starting threads
/// would cost more than it saves.
const PARALLEL_RESOURCES: usize = 128;

const SECTIONS: &[&str] = &[
    "AWSTemplateFormatVersion",
    "Description",
    "Metadata",
    "Parameters",
    "Mappings",
    "Conditions",
    "Resources",
    "Outputs",
];

const PARAMETER_KEYS: &[&str] = &[
    "Type",
    "Description",
    "Default",
    "AllowedValues",
    "AllowedPattern",
    "ConstraintDescription",
    "MinLength",
    "MaxLength",
    "MinValue",
    "MaxValue",
    "NoEcho",
];

const RESOURCE_KEYS: &[&str] = &[
    "Type",
    "Condition",
    "DependsOn",
    "Metadata",
    "Properties",
    "CreationPolicy",
    "UpdatePolicy",
    "DeletionPolicy",
    "UpdateReplacePolicy",
];

const OUTPUT_KEYS: &[&str] = &["Description", "Condition", "Value", "Export"];

impl Reader<'_> {
    /// The transforms of a `Transform` section: a name, a list of names, or
    /// `{Name, Parameters}` mappings.
    fn transform_names(node: &Node, names: &mut Vec<String>) {
        match &node.value {
            Value::String(name) => names.push(name.clone()),
            Value::Seq(items) => {
                for item in items {
                    Self::transform_names(item, names);
                }
            }
            Value::Map(entries) => {
                for (key, value) in entries {
                    if key.name == "Name"
                        && let Value::String(name) = &value.value
                    {
                        names.push(name.clone());
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn template(&mut self, root: &Node) -> Template {
        let mut template = Template::default();
        let Some(entries) = self.mapping("a template", root) else {
            return template;
        };
        if self.lenient
            && let Some((_, node)) = entries.iter().find(|(key, _)| key.name == "Transform")
        {
            let mut names = Vec::new();
            Self::transform_names(node, &mut names);
            self.transformed = true;
            self.serverless = names.iter().any(|n| n.starts_with("AWS::Serverless"));
            self.language_extensions = names.iter().any(|n| n == LANGUAGE_EXTENSIONS);
        }
        let serverless = self.serverless;
        for (key, node) in entries {
            match key.name.as_str() {
                "AWSTemplateFormatVersion" => {
                    if let Some(version) = self.string("`AWSTemplateFormatVersion`", node)
                        && version != FORMAT_VERSION
                    {
                        let diagnostic = self.error(
                            node.span,
                            format!("unsupported template format version `{version}`"),
                        );
                        diagnostic.help = Some(format!("the only version is \"{FORMAT_VERSION}\""));
                    }
                }
                "Description" => template.description = self.string("`Description`", node),
                "Metadata" => template.metadata = self.expr_map("`Metadata`", node),
                "Parameters" => {
                    for (name, parameter) in self.mapping("`Parameters`", node).unwrap_or_default()
                    {
                        let before = self.errors();
                        match self.parameter(name, parameter) {
                            Some(parameter) => {
                                template.parameters.insert(name.name.clone(), parameter);
                            }
                            None if self.lenient => {
                                template
                                    .parameters
                                    .insert(name.name.clone(), Parameter::new("String"));
                            }
                            None => {}
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Parameters/{}", name.name));
                        }
                    }
                }
                "Mappings" => template.mappings = self.expr_map("`Mappings`", node),
                "Conditions" => {
                    for (name, condition) in self.mapping("`Conditions`", node).unwrap_or_default()
                    {
                        if self.for_each(name, "conditions") {
                            continue;
                        }
                        let before = self.errors();
                        match self.expr(condition, Context::Value) {
                            Some(condition) => {
                                template.conditions.insert(name.name.clone(), condition);
                            }
                            // Kept, so that what uses it finds it.
                            None if self.lenient => {
                                template
                                    .conditions
                                    .insert(name.name.clone(), Expr::Bool(true));
                            }
                            None => {}
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Conditions/{}", name.name));
                        }
                    }
                }
                "Resources" => {
                    let entries = self.mapping("`Resources`", node).unwrap_or_default();
                    self.resources(entries, &mut template);
                }
                "Outputs" => {
                    for (name, output) in self.mapping("`Outputs`", node).unwrap_or_default() {
                        if self.for_each(name, "outputs") {
                            continue;
                        }
                        let before = self.errors();
                        if let Some(output) = self.output(name, output) {
                            template.outputs.insert(name.name.clone(), output);
                        }
                        if self.errors() > before {
                            self.damaged.push(format!("Outputs/{}", name.name));
                        }
                    }
                }
                "Transform" if self.lenient => {
                    let mut names = Vec::new();
                    Self::transform_names(node, &mut names);
                    let list = names
                        .iter()
                        .map(|name| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let diagnostic = self.note(
                        key.span,
                        TRANSFORM_NOTE,
                        format!(
                            "the template is processed by {} before it is deployed: \
                             what the transform creates or rewrites is not checked",
                            if names.len() == 1 {
                                format!("the transform {list}")
                            } else {
                                format!("the transforms {list}")
                            }
                        ),
                    );
                    diagnostic.label = Some("transform".to_string());
                    self.transforms.extend(names);
                }
                "Globals" if serverless => template.globals = self.expr_map("`Globals`", node),
                "Rules" | "Hooks" if self.lenient => {
                    let diagnostic = self.note(
                        key.span,
                        UNCHECKED_NOTE,
                        format!("the `{}` section is not checked", key.name),
                    );
                    diagnostic.label = Some("not checked".to_string());
                }
                "Transform" | "Rules" | "Hooks" => {
                    let diagnostic = self.error(
                        key.span,
                        format!("the `{}` section is not supported", key.name),
                    );
                    diagnostic.label = Some("unsupported section".to_string());
                }
                _ => {
                    let diagnostic =
                        self.error(key.span, format!("unknown template section `{}`", key.name));
                    diagnostic.label = Some("unknown section".to_string());
                    diagnostic.help = Some(format!("expected one of: {}", SECTIONS.join(", ")));
                }
            }
        }
        template
    }

    /// Reads the resources into `template`. A large template's are read
    /// in slices side by side, each by a reader of its own; what they say
    /// is merged in the order of the resources, as one reader would.
    fn resources(&mut self, entries: &[(Key, Node)], template: &mut Template) {
        /// What became of one resource on a forked reader. (Each is moved
        /// once into the template: boxing the large variant would only add
        /// an allocation per resource.)
        #[allow(clippy::large_enum_variant)]
        enum Read {
            /// A loop: noted, not read.
            Loop,
            /// What could be read (nothing after an error that leaves no
            /// resource), and whether it had an error.
            Resource(Option<Resource>, bool),
        }
        let slices: Vec<&[(Key, Node)]> = entries.chunks(RESOURCES_PER_READER).collect();
        let read = |slice: &&[(Key, Node)]| {
            let mut reader = self.fork();
            let read: Vec<Read> = slice
                .iter()
                .map(|(name, node)| {
                    if reader.for_each(name, "resources") {
                        return Read::Loop;
                    }
                    let before = reader.errors();
                    let resource = reader.resource(name, node);
                    Read::Resource(resource, reader.errors() > before)
                })
                .collect();
            (read, reader.diagnostics)
        };
        let read = if entries.len() >= PARALLEL_RESOURCES {
            crate::parallel::map(&slices, read)
        } else {
            slices.iter().map(read).collect()
        };
        for ((resources, diagnostics), slice) in read.into_iter().zip(&slices) {
            self.diagnostics.extend(diagnostics);
            for (read, (name, _)) in resources.into_iter().zip(slice.iter()) {
                let Read::Resource(resource, damaged) = read else {
                    continue;
                };
                match resource {
                    Some(resource) => {
                        template.resources.insert(name.name.clone(), resource);
                    }
                    None if self.lenient => {
                        template
                            .resources
                            .insert(name.name.clone(), Resource::default());
                    }
                    None => {}
                }
                if damaged {
                    self.damaged.push(format!("Resources/{}", name.name));
                }
            }
        }
    }

    /// A `Fn::ForEach::Name` loop of the language extensions, where a
    /// section holds names: a note (when lenient), as what it makes is not
    /// checked, or an error when no transform would expand it.
    fn for_each(&mut self, name: &Key, what: &str) -> bool {
        if !self.lenient || !name.name.starts_with("Fn::ForEach::") {
            return false;
        }
        if !self.language_extensions {
            self.for_each_without_transform(name.span, &name.name);
            return true;
        }
        let diagnostic = self.note(
            name.span,
            UNCHECKED_NOTE,
            format!(
                "`{}` makes {what} by a loop: they are not checked",
                name.name
            ),
        );
        diagnostic.label = Some("not checked".to_string());
        true
    }

    /// `Fn::ForEach` is expanded by the `AWS::LanguageExtensions` transform
    /// only: without it, CloudFormation refuses the template.
    pub(super) fn for_each_without_transform(&mut self, at: Span, written: &str) {
        let diagnostic = self.error(
            at,
            format!("`{written}` needs the `{LANGUAGE_EXTENSIONS}` transform, which the template does not declare"),
        );
        diagnostic.code = Some(FOR_EACH_WITHOUT_TRANSFORM);
        diagnostic.label = Some("no transform expands this loop".to_string());
        diagnostic.help = Some(format!(
            "add `Transform: {LANGUAGE_EXTENSIONS}` to the template"
        ));
    }

    fn parameter(&mut self, name: &Key, node: &Node) -> Option<Parameter> {
        let what = format!("parameter `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut parameter = Parameter::default();
        let mut kind = None;
        for (key, value) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Type" => kind = self.string(&field, value),
                "Description" => parameter.description = self.string(&field, value),
                "Default" => parameter.default = self.expr(value, Context::Value),
                "AllowedValues" => {
                    parameter.allowed_values = match (&value.value, app_tag(value)) {
                        (Value::Seq(items), None) => items
                            .iter()
                            .filter_map(|item| self.expr(item, Context::Value))
                            .collect(),
                        _ => {
                            self.wrong_type(&field, value, "a list");
                            Vec::new()
                        }
                    }
                }
                "AllowedPattern" => parameter.allowed_pattern = self.string(&field, value),
                "ConstraintDescription" => {
                    parameter.constraint_description = self.string(&field, value);
                }
                "MinLength" => parameter.min_length = self.integer(&field, value),
                "MaxLength" => parameter.max_length = self.integer(&field, value),
                "MinValue" => parameter.min_value = self.integer(&field, value),
                "MaxValue" => parameter.max_value = self.integer(&field, value),
                "NoEcho" => parameter.no_echo = self.boolean(&field, value).unwrap_or(false),
                _ => self.unknown_key(key, &what, PARAMETER_KEYS),
            }
        }
        match kind {
            Some(kind) => parameter.kind = kind,
            None if entries.iter().any(|(key, _)| key.name == "Type") => return None,
            None => {
                let diagnostic = self.error(name.span, format!("{what} has no `Type`"));
                diagnostic.help = Some("add a type, e.g. `Type: String`".to_string());
                return None;
            }
        }
        Some(parameter)
    }

    fn resource(&mut self, name: &Key, node: &Node) -> Option<Resource> {
        let what = format!("resource `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut resource = Resource::default();
        let mut kind = None;
        for (key, value) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Type" => kind = self.string(&field, value),
                "Condition" => resource.condition = self.string(&field, value),
                "DependsOn" => {
                    resource.depends_on = match (&value.value, app_tag(value)) {
                        (Value::String(one), None) => vec![one.clone()],
                        (Value::Seq(items), None) => items
                            .iter()
                            .filter_map(|item| self.string(&field, item))
                            .collect(),
                        _ => {
                            self.wrong_type(&field, value, "a resource name or a list of them");
                            Vec::new()
                        }
                    }
                }
                "Metadata" => resource.metadata = self.expr(value, Context::Value),
                "Properties" => resource.properties = self.expr_map(&field, value),
                "CreationPolicy" => resource.creation_policy = self.expr(value, Context::Value),
                "UpdatePolicy" => resource.update_policy = self.expr(value, Context::Value),
                "DeletionPolicy" | "UpdateReplacePolicy"
                    if self.lenient && Self::is_intrinsic(value) =>
                {
                    // Read for its own errors; the model holds a literal only.
                    if self.expr(value, Context::Value).is_some() {
                        let diagnostic = self.note(
                            value.span,
                            UNCHECKED_NOTE,
                            format!(
                                "`{}` of {what} is an intrinsic function: its value is not checked",
                                key.name
                            ),
                        );
                        diagnostic.label = Some("not checked".to_string());
                    }
                }
                "DeletionPolicy" => resource.deletion_policy = self.string(&field, value),
                "UpdateReplacePolicy" => {
                    resource.update_replace_policy = self.string(&field, value);
                }
                // An old attribute of custom resources, still accepted.
                "Version" if self.lenient => {}
                "IgnoreGlobals" if self.serverless => {
                    resource.ignore_globals = self.expr(value, Context::Value);
                }
                _ => self.unknown_key(key, &what, RESOURCE_KEYS),
            }
        }
        match kind {
            Some(kind) => resource.kind = kind,
            None if entries.iter().any(|(key, _)| key.name == "Type") => return None,
            None => {
                let diagnostic = self.error(name.span, format!("{what} has no `Type`"));
                diagnostic.help = Some(
                    "add the resource type, e.g. `Type: AWS::EC2::LaunchTemplate`".to_string(),
                );
                return None;
            }
        }
        Some(resource)
    }

    fn output(&mut self, name: &Key, node: &Node) -> Option<Output> {
        let what = format!("output `{}`", name.name);
        let entries = self.mapping(&what, node)?;
        let mut output = Output::default();
        let mut value = None;
        let mut complete = true;
        for (key, node) in entries {
            let field = format!("`{}` of {what}", key.name);
            match key.name.as_str() {
                "Description" => output.description = self.string(&field, node),
                "Condition" => output.condition = self.string(&field, node),
                "Value" => {
                    value = self.expr(node, Context::Value);
                    complete &= value.is_some();
                }
                "Export" => {
                    output.export = self.export(&field, node);
                    complete &= output.export.is_some();
                }
                _ => self.unknown_key(key, &what, OUTPUT_KEYS),
            }
        }
        match value {
            Some(value) => output.value = value,
            None if !complete => return None,
            None => {
                self.error(name.span, format!("{what} has no `Value`"));
                return None;
            }
        }
        complete.then_some(output)
    }

    /// `Export: {Name: ...}`.
    fn export(&mut self, what: &str, node: &Node) -> Option<Expr> {
        let entries = self.mapping(what, node)?;
        let mut name = None;
        for (key, value) in entries {
            match key.name.as_str() {
                "Name" => name = Some(self.expr(value, Context::Value)),
                _ => self.unknown_key(key, what, &["Name"]),
            }
        }
        match name {
            Some(name) => name,
            None => {
                self.error(node.span, format!("{what} has no `Name`"));
                None
            }
        }
    }

    /// A mapping of names to values (`Metadata`, `Mappings`, `Properties`...).
    pub(super) fn expr_map(&mut self, what: &str, node: &Node) -> IndexMap<String, Expr> {
        let Some(entries) = self.mapping(what, node) else {
            return IndexMap::new();
        };
        entries
            .iter()
            .filter_map(|(key, value)| Some((key.name.clone(), self.expr(value, Context::Value)?)))
            .collect()
    }
}
