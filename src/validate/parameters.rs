//! Parameters: a type CloudFormation knows (`E9002`), a default its own
//! constraints accept (`E9003`), and a parameter nothing uses (`W9004`).
//!
//! The types are those of the CloudFormation User Guide's
//! "Parameters template section syntax" and "Supported AWS-specific
//! parameter types" pages.

use std::collections::HashSet;

use super::Finding;
use crate::cfn::{Expr, Parameter, Template};

/// The AWS-specific types, each of which also has a `List<...>` form
/// (except key pairs) and an `AWS::SSM::Parameter::Value<...>` form.
const AWS_SPECIFIC: &[&str] = &[
    "AWS::EC2::AvailabilityZone::Name",
    "AWS::EC2::Image::Id",
    "AWS::EC2::Instance::Id",
    "AWS::EC2::KeyPair::KeyName",
    "AWS::EC2::SecurityGroup::GroupName",
    "AWS::EC2::SecurityGroup::Id",
    "AWS::EC2::Subnet::Id",
    "AWS::EC2::Volume::Id",
    "AWS::EC2::VPC::Id",
    "AWS::Route53::HostedZone::Id",
];

const BASIC: &[&str] = &[
    "String",
    "Number",
    "List<Number>",
    "CommaDelimitedList",
    "AWS::SSM::Parameter::Name",
];

/// Whether CloudFormation accepts `kind` as a parameter type.
fn known_type(kind: &str) -> bool {
    let list_item = |inner: &str| {
        // `List<String>` is undocumented but accepted.
        inner == "String" || inner == "Number" || AWS_SPECIFIC.contains(&inner)
    };
    if BASIC.contains(&kind) || AWS_SPECIFIC.contains(&kind) {
        return true;
    }
    if let Some(inner) = kind.strip_prefix("List<").and_then(|k| k.strip_suffix('>')) {
        return list_item(inner);
    }
    if let Some(inner) = kind
        .strip_prefix("AWS::SSM::Parameter::Value<")
        .and_then(|k| k.strip_suffix('>'))
    {
        let list = inner
            .strip_prefix("List<")
            .and_then(|k| k.strip_suffix('>'));
        return inner == "String"
            || inner == "CommaDelimitedList"
            || AWS_SPECIFIC.contains(&inner)
            || list.is_some_and(list_item);
    }
    false
}

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    let used = used_names(template);
    for (name, parameter) in &template.parameters {
        let base = format!("Parameters/{name}");
        if !known_type(&parameter.kind) {
            let known: Vec<&str> = BASIC.iter().chain(AWS_SPECIFIC).copied().collect();
            let help = match crate::suggest::closest(&parameter.kind, &known) {
                Some(best) => format!("did you mean `{best}`?"),
                None => "use `String`, `Number`, `CommaDelimitedList`, `List<Number>`, an AWS-specific type such as `AWS::EC2::Subnet::Id` (or its `List<...>`), or `AWS::SSM::Parameter::Value<...>`".to_string(),
            };
            findings.push(
                Finding::new(
                    "E9002",
                    format!("{base}/Type"),
                    format!("`{}` is not a parameter type", parameter.kind),
                )
                .help(help),
            );
        } else {
            check_default(parameter, &base, findings);
        }
        if !used.contains(name.as_str()) {
            findings.push(
                Finding::new("W9004", base, format!("parameter `{name}` is not used"))
                    .help("remove it, or refer to it: a stack asks for a value it then ignores"),
            );
        }
    }
}

/// Every name a `Ref` or `Fn::Sub` refers to anywhere in the template.
fn used_names<'a>(template: &'a Template) -> HashSet<&'a str> {
    let mut used = HashSet::new();
    let mut note = |expr: &'a Expr| {
        used.extend(expr.references().into_iter().map(|(name, _)| name));
    };
    for resource in template.resources.values() {
        resource.properties.values().for_each(&mut note);
        [
            &resource.metadata,
            &resource.creation_policy,
            &resource.update_policy,
        ]
        .into_iter()
        .flatten()
        .for_each(&mut note);
    }
    for output in template.outputs.values() {
        note(&output.value);
        if let Some(export) = &output.export {
            note(export);
        }
    }
    template.conditions.values().for_each(&mut note);
    used
}

/// The default against the parameter's own constraints, as CloudFormation
/// checks it when the stack is created without a value for it.
fn check_default(parameter: &Parameter, base: &str, findings: &mut Vec<Finding>) {
    let Some(default) = &parameter.default else {
        return;
    };
    let Some(text) = literal_text(default) else {
        return;
    };
    // A dynamic reference is resolved when the stack is deployed.
    if text.contains("{{resolve:") {
        return;
    }
    let path = format!("{base}/Default");
    let mut problem = |message: String| {
        findings.push(
            Finding::new("E9003", path.clone(), message)
                .help("CloudFormation refuses to create the stack when the default breaks the parameter's own constraints"),
        );
    };
    let kind = parameter.kind.as_str();
    let list = kind == "CommaDelimitedList" || kind.starts_with("List<");
    let items: Vec<&str> = if list {
        text.split(',').map(str::trim).collect()
    } else {
        vec![text.as_str()]
    };
    if !parameter.allowed_values.is_empty() {
        let allowed: Vec<String> = parameter
            .allowed_values
            .iter()
            .filter_map(literal_text)
            .collect();
        // Only literal allowed values can be compared.
        // A list default may also be one allowed value as a whole.
        if allowed.len() == parameter.allowed_values.len()
            && !allowed.contains(&text)
            && let Some(item) = items.iter().find(|item| {
                let equal = allowed.iter().any(|a| a == *item)
                    || kind == "Number" && numbers_equal(a_number(item), &allowed);
                !equal
            })
        {
            problem(format!(
                "the default `{item}` is not one of the allowed values: {}",
                allowed.join(", ")
            ));
            return;
        }
    }
    if kind == "Number" || kind == "List<Number>" {
        for item in &items {
            let Some(number) = a_number(item) else {
                problem(format!("the default `{item}` is not a number"));
                return;
            };
            if let Some(min) = parameter.min_value
                && number < min as f64
            {
                problem(format!("the default {item} is below `MinValue` ({min})"));
            }
            if let Some(max) = parameter.max_value
                && number > max as f64
            {
                problem(format!("the default {item} is above `MaxValue` ({max})"));
            }
        }
        return;
    }
    let length = text.chars().count() as i64;
    if let Some(min) = parameter.min_length
        && length < min
    {
        problem(format!(
            "the default is {length} characters long, below `MinLength` ({min})"
        ));
    }
    if let Some(max) = parameter.max_length
        && length > max
    {
        problem(format!(
            "the default is {length} characters long, above `MaxLength` ({max})"
        ));
    }
    if let Some(pattern) = &parameter.allowed_pattern
        && let Some(matcher) = full_match(pattern)
        && !matcher(&text)
        && let Some(item) = items.iter().find(|item| !matcher(item))
    {
        problem(format!(
            "the default `{item}` does not match `AllowedPattern` `{pattern}`"
        ));
    }
}

/// A scalar as CloudFormation hands it to a stack: as text.
fn literal_text(value: &Expr) -> Option<String> {
    match value {
        Expr::String(s) => Some(s.clone()),
        Expr::Int(i) => Some(i.to_string()),
        Expr::Float(f) => Some(f.to_string()),
        Expr::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn a_number(text: &str) -> Option<f64> {
    text.trim().parse().ok()
}

fn numbers_equal(number: Option<f64>, allowed: &[String]) -> bool {
    number.is_some_and(|n| allowed.iter().any(|a| a_number(a) == Some(n)))
}

/// A test of whether a whole string matches `pattern`, as CloudFormation
/// applies `AllowedPattern`; `None` when the pattern is beyond the regular
/// expression dialect at hand (it is then not judged).
fn full_match(pattern: &str) -> Option<impl Fn(&str) -> bool> {
    let schema = serde_json::json!({"type": "string", "pattern": format!("^(?:{pattern})$")});
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .ok()?;
    Some(move |text: &str| validator.is_valid(&serde_json::Value::String(text.to_string())))
}

#[cfg(test)]
mod tests {
    use super::known_type;

    #[test]
    fn parameter_types_cloudformation_documents_are_known() {
        for kind in [
            "String",
            "Number",
            "List<Number>",
            "CommaDelimitedList",
            "AWS::EC2::VPC::Id",
            "List<AWS::EC2::Subnet::Id>",
            "AWS::SSM::Parameter::Name",
            "AWS::SSM::Parameter::Value<String>",
            "AWS::SSM::Parameter::Value<List<String>>",
            "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
            "AWS::SSM::Parameter::Value<List<AWS::EC2::SecurityGroup::Id>>",
        ] {
            assert!(known_type(kind), "{kind}");
        }
        for kind in [
            "string",
            "Integer",
            "AWS::EC2::Vpc::Id",
            "List<Strings>",
            "AWS::SSM::Parameter::Value<Number>",
        ] {
            assert!(!known_type(kind), "{kind}");
        }
    }
}
