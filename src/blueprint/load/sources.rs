//! Values that come from a literal, a template parameter or an import, and
//! the rule that one parameter has one type wherever it is used.

use std::collections::HashMap;

use crate::blueprint::decode::{Decoder, Located};
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::*;
use crate::source::Span;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const SOURCE_FIELDS: &[Field] = &[
    Field::new("parameter", Ty::STRING_OR_NUMBER, "")
        .long("a template parameter's name: the stack takes the value at deploy time"),
    Field::new("default", Ty::STRING_OR_NUMBER, "").long("the parameter's default"),
    Field::new("import", Ty::STRING_OR_NUMBER, "")
        .long("an export's name: the value another stack exports (`Fn::ImportValue`)"),
];

pub(super) fn decode_source(d: &mut Decoder, field: &str, node: &Node) -> Option<Located<Source>> {
    if let Value::Map(_) = node.value {
        let mut fields = d.fields(field, node, SOURCE_FIELDS)?;
        let parameter = fields
            .get("parameter")
            .and_then(|n| d.string(&format!("{field}.parameter"), n));
        let default = fields
            .get("default")
            .and_then(|n| d.string_or_number(&format!("{field}.default"), n));
        let import = fields
            .get("import")
            .and_then(|n| d.string(&format!("{field}.import"), n));
        fields.finish(d, &format!("`{field}`"));
        return match (parameter, import) {
            (Some(name), None) => {
                if !check_parameter_name(d, &name) {
                    return None;
                }
                Some(Located::new(
                    Source::Parameter {
                        name: name.value,
                        default: default.map(|v| v.value),
                    },
                    node.span,
                ))
            }
            (None, Some(export)) => Some(Located::new(Source::Import(export.value), node.span)),
            (Some(_), Some(_)) => {
                d.error(
                    node.span,
                    format!("`{field}` has both `parameter` and `import`"),
                )
                .help = Some("a value comes from either a parameter or an import".into());
                None
            }
            (None, None) => {
                d.error(
                    node.span,
                    format!("`{field}` needs `parameter: Name` or `import: ExportName`"),
                )
                .help = Some("or write the value itself as a string".into());
                None
            }
        };
    }
    d.string_or_number(field, node)
        .map(|s| Located::new(Source::Literal(s.value), s.span))
}

/// A template parameter's name is a logical ID: 1 to 255 letters and digits.
pub(super) fn check_parameter_name(d: &mut Decoder, name: &Located<String>) -> bool {
    let ok = !name.value.is_empty()
        && name.value.len() <= 255
        && name.value.chars().all(|c| c.is_ascii_alphanumeric());
    if !ok {
        let message = format!(
            "parameter name `{}` is not a valid CloudFormation logical ID",
            name.value
        );
        d.error(name.span, message).help =
            Some("use letters and digits only, e.g. `ClusterName`".into());
    }
    ok
}

pub(super) fn check_literal(
    d: &mut Decoder,
    value: &Located<Source>,
    field: &str,
    problem: impl Fn(&str) -> Option<String>,
) {
    if let Source::Literal(text) = &value.value
        && let Some(problem) = problem(text)
    {
        d.error(value.span, format!("`{field}` `{text}` {problem}"));
    }
}

/// One template parameter may serve several fields only when they need the
/// same parameter type, and none takes a name eksynth declares itself.
pub(super) fn check_parameters(
    d: &mut Decoder,
    cluster: &Cluster,
    iam: &RoleDefaults,
    groups: &[NodeGroup],
) {
    let mut seen: HashMap<&str, (&'static str, Span)> = HashMap::new();
    for (name, kind, span) in parameter_uses(cluster, iam, groups) {
        if name.starts_with(IMAGE_PARAMETER_PREFIX) {
            let message = format!("parameter name `{name}` is reserved for node images");
            d.error(span, message).help =
                Some("choose a name that does not start with `ImageId`".into());
            continue;
        }
        if name == SHARED_STACK_PARAMETER {
            let message = format!("parameter name `{name}` is reserved");
            d.error(span, message).help = Some(
                "a node group stack names its blueprint's main stack with it; choose another name"
                    .into(),
            );
            continue;
        }
        match seen.get(&name) {
            Some((other, first)) if *other != kind => {
                let message = format!(
                    "parameter `{name}` is used as {kind} here and as {other} at line {}",
                    first.line
                );
                d.error(span, message).help =
                    Some("a parameter has one type; give each use its own name".into());
            }
            Some(_) => {}
            None => {
                seen.insert(name, (kind, span));
            }
        }
    }
}
