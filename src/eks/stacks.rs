//! Splitting one lowered template into the stacks a blueprint asks for.
//!
//! The main stack keeps what every node group shares (the node security
//! group, the aws-auth provider); each other stack holds its node groups
//! with everything they alone use. A group stack reaches a shared resource
//! through an export of the main stack, imported as
//! `Fn::ImportValue: !Sub ${SharedStackName}-<output>`: the main stack is
//! deployed first, and CloudFormation refuses to delete an export another
//! stack still imports.

use std::collections::HashSet;

use indexmap::IndexMap;

use super::Lowered;
use crate::blueprint::Blueprint;
use crate::cfn::sub;
use crate::cfn::{Expr, Parameter, Resource, Template};
use crate::source::Span;

pub use crate::blueprint::SHARED_STACK_PARAMETER;

/// One stack of a blueprint: its name, template, and the blueprint
/// location of each resource.
#[derive(Debug)]
pub struct LoweredStack {
    pub name: String,
    /// Where the blueprint declares the stack.
    pub span: Span,
    pub template: Template,
    pub origins: IndexMap<String, Span>,
    /// As [`super::Lowered::field_origins`], for this stack's resources.
    pub field_origins: IndexMap<String, Span>,
}

/// Splits `lowered` into the blueprint's stacks, main stack first. A
/// blueprint with one stack gets its template back unchanged.
pub fn split(lowered: Lowered, blueprint: &Blueprint) -> Vec<LoweredStack> {
    let Lowered {
        template: whole,
        origins,
        field_origins,
        resource_stacks,
        output_stacks,
        ..
    } = lowered;
    let specs = &blueprint.stacks;
    if specs.len() <= 1 {
        let spec = &specs[0];
        return vec![LoweredStack {
            name: spec.name.clone(),
            span: spec.span,
            template: whole,
            origins,
            field_origins,
        }];
    }
    let mut templates: Vec<Template> = specs
        .iter()
        .enumerate()
        .map(|(index, _)| Template {
            description: Some(description(blueprint, index)),
            parameters: whole.parameters.clone(),
            ..Template::default()
        })
        .collect();
    let stack_of = |id: &str| resource_stacks.get(id).copied().unwrap_or(0);
    for (id, resource) in whole.resources {
        let index = stack_of(&id);
        templates[index].resources.insert(id, resource);
    }
    for (name, output) in whole.outputs {
        let index = output_stacks.get(&name).copied().unwrap_or(0);
        templates[index].outputs.insert(name, output);
    }

    let (main, groups) = templates.split_at_mut(1);
    let main = &mut main[0];
    let foreign: HashSet<String> = main.resources.keys().cloned().collect();
    for template in groups.iter_mut() {
        let mut imports = Imports {
            foreign: &foreign,
            exports: main,
            used: false,
        };
        for resource in template.resources.values_mut() {
            wait_by_import(resource, &foreign);
            for value in resource.properties.values_mut() {
                imports.rewrite(value);
            }
            for value in [
                &mut resource.metadata,
                &mut resource.creation_policy,
                &mut resource.update_policy,
            ]
            .into_iter()
            .flatten()
            {
                imports.rewrite(value);
            }
        }
        for output in template.outputs.values_mut() {
            imports.rewrite(&mut output.value);
        }
        if imports.used {
            template.parameters.insert(
                SHARED_STACK_PARAMETER.to_string(),
                Parameter::new("String")
                    .described(
                        "The name the main stack of this blueprint was deployed under; its exports are imported here",
                    )
                    .with_default(specs[0].name.as_str()),
            );
        }
    }
    templates.iter_mut().for_each(super::tidy_parameters);
    specs
        .iter()
        .zip(templates)
        .map(|(spec, template)| LoweredStack {
            name: spec.name.clone(),
            span: spec.span,
            origins: template
                .resources
                .keys()
                .filter_map(|id| origins.get(id).map(|span| (id.clone(), *span)))
                .collect(),
            field_origins: field_origins
                .iter()
                .filter(|(path, _)| {
                    let id = path.split('/').next().unwrap_or(path);
                    template.resources.contains_key(id)
                })
                .map(|(path, span)| (path.clone(), *span))
                .collect(),
            template,
        })
        .collect()
}

/// A group stack cannot name a resource of the main stack in `DependsOn`.
/// It names it in its metadata instead (`WaitsFor`), which the rewrite
/// below turns into an import of the main stack's export: CloudFormation
/// then creates the resource only once the export exists, and refuses to
/// delete the main stack's resource (an access entry a role shared across
/// stacks needs) while a group stack still imports it.
fn wait_by_import(resource: &mut Resource, foreign: &HashSet<String>) {
    let (waits, own): (Vec<String>, Vec<String>) = std::mem::take(&mut resource.depends_on)
        .into_iter()
        .partition(|id| foreign.contains(id));
    resource.depends_on = own;
    if waits.is_empty() {
        return;
    }
    let list = Expr::list(waits.iter().map(|id| Expr::reference(id.as_str())));
    match &mut resource.metadata {
        Some(Expr::Map(entries)) => {
            entries.insert(WAITS_FOR.to_string(), list);
        }
        _ => resource.metadata = Some(Expr::map([(WAITS_FOR, list)])),
    }
}

/// The metadata key under which a group stack's resource names what it
/// waits for in the main stack.
const WAITS_FOR: &str = "WaitsFor";

/// The description of stack `index`, naming what it holds.
fn description(blueprint: &Blueprint, index: usize) -> String {
    let names: Vec<&str> = blueprint
        .node_groups
        .iter()
        .filter(|g| g.stack == index)
        .map(|g| g.name.value.as_str())
        .collect();
    if let Some(written) = &blueprint.description {
        return format!("{written} ({})", blueprint.stacks[index].name);
    }
    let generated = "Generated by eksynth; edit the blueprint, not this file.";
    match (index, names.is_empty()) {
        (0, true) => format!(
            "Shared resources of the EKS node group stacks of `{}`. {generated}",
            blueprint.stacks[0].name
        ),
        (0, false) => format!(
            "EKS node groups: {}, and the resources the node group stacks of `{}` share. {generated}",
            names.join(", "),
            blueprint.stacks[0].name
        ),
        _ => format!("EKS node groups: {}. {generated}", names.join(", ")),
    }
}

/// Rewrites a group stack's references to resources of the main stack into
/// imports of the main stack's exports, adding the exports it lacks.
struct Imports<'a> {
    /// The main stack's resources.
    foreign: &'a HashSet<String>,
    exports: &'a mut Template,
    used: bool,
}

impl Imports<'_> {
    fn rewrite(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Ref(id) if self.foreign.contains(id.as_str()) => {
                let value = Expr::reference(id.as_str());
                *expr = self.import(&value, id, "");
                return;
            }
            Expr::GetAtt {
                resource,
                attribute,
            } if self.foreign.contains(resource.as_str()) => {
                let value = Expr::get_att(resource.as_str(), attribute.as_str());
                *expr = self.import(&value, resource, attribute);
                return;
            }
            Expr::Sub {
                template,
                variables,
            } => {
                let mut added = Vec::new();
                *template = sub::rename(template, |name| {
                    let (resource, attribute) = name.split_once('.').unwrap_or((name, ""));
                    if variables.contains_key(name) || !self.foreign.contains(resource) {
                        return None;
                    }
                    let value = match attribute {
                        "" => Expr::reference(resource),
                        _ => Expr::get_att(resource, attribute),
                    };
                    // A variable name cannot hold the dot of `X.Attribute`.
                    let variable: String = name.chars().filter(|c| *c != '.').collect();
                    added.push((variable.clone(), self.import(&value, resource, attribute)));
                    Some(variable)
                });
                variables.extend(added);
            }
            _ => {}
        }
        for child in expr.children_mut() {
            self.rewrite(child);
        }
    }

    /// `Fn::ImportValue` of the main stack's export of `value`, exporting it
    /// when no output does yet.
    fn import(&mut self, value: &Expr, resource: &str, attribute: &str) -> Expr {
        self.used = true;
        let existing = self
            .exports
            .outputs
            .iter()
            .find(|(_, output)| output.value == *value && output.export.is_some())
            .map(|(name, _)| name.clone());
        let name = existing.unwrap_or_else(|| {
            let name = format!("{resource}{attribute}");
            let description = match attribute {
                "" => format!("`{resource}`, imported by the node group stacks"),
                _ => format!("The {attribute} of `{resource}`, imported by the node group stacks"),
            };
            super::output(self.exports, &name, &description, value.clone());
            name
        });
        Expr::ImportValue(Box::new(Expr::sub(format!(
            "${{{SHARED_STACK_PARAMETER}}}-{name}"
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_references_to_the_main_stack_become_imported_variables() {
        let mut main = Template::default();
        main.resources
            .insert("Shared".into(), Resource::new("AWS::EC2::SecurityGroup"));
        let foreign: HashSet<String> = ["Shared".to_string()].into();
        let mut imports = Imports {
            foreign: &foreign,
            exports: &mut main,
            used: false,
        };
        let mut value = Expr::Sub {
            template: "${Shared} ${ Shared.GroupId } ${Local} ${!Shared} ${Own}".into(),
            variables: IndexMap::from([("Own".to_string(), Expr::str("o"))]),
        };
        imports.rewrite(&mut value);
        assert!(imports.used);
        let import = |name: &str| {
            Expr::ImportValue(Box::new(Expr::sub(format!("${{SharedStackName}}-{name}"))))
        };
        assert_eq!(
            value,
            Expr::Sub {
                template: "${Shared} ${SharedGroupId} ${Local} ${!Shared} ${Own}".into(),
                variables: IndexMap::from([
                    ("Own".to_string(), Expr::str("o")),
                    ("Shared".to_string(), import("Shared")),
                    ("SharedGroupId".to_string(), import("SharedGroupId")),
                ]),
            }
        );
        // The main stack exports what was imported.
        let exported: Vec<&String> = main.outputs.keys().collect();
        assert_eq!(exported, ["Shared", "SharedGroupId"]);
        assert_eq!(
            main.outputs["SharedGroupId"].value,
            Expr::get_att("Shared", "GroupId")
        );
    }
}
