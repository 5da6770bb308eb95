//! Reporting: `jsonschema`'s errors turned into located `SchemaError`s.
//!
//! # Errors
//!
//! `anyOf`/`oneOf` failures are not reported as "not valid under any of the
//! schemas": the branch that got furthest (deepest error, then fewest
//! errors) is reported instead, and a choice between `required` lists
//! (`AWS::IAM::Policy` needs one of `Users`, `Groups`, `Roles`) becomes one
//! message naming them all.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::Location;
use serde_json::Value;

use super::keywords::AT_PROPERTY;
use super::{SchemaError, escape, unescape};

/// Turns one `jsonschema` error into `SchemaError`s: `anyOf`/`oneOf` into
/// the errors of their most relevant branch.
pub(super) fn report(error: ValidationError<'static>, out: &mut Vec<SchemaError>) {
    let parts = error.into_parts();
    let pointer = parts.instance_path.as_str().to_string();
    let schema_path = parts.schema_path;
    let instance = parts.instance;
    let push = |out: &mut Vec<SchemaError>, pointer: String, keyword: &str, message: String| {
        out.push(SchemaError {
            pointer,
            message,
            keyword: keyword.to_string(),
        });
    };
    match parts.kind {
        kind @ (ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. }) => {
            let (keyword, context) = match kind {
                ValidationErrorKind::OneOfNotValid { context } => ("oneOf", context),
                ValidationErrorKind::AnyOf { context } => ("anyOf", context),
                _ => return,
            };
            if let Some(names) = required_choice(&context, &pointer) {
                let message = if keyword == "oneOf" {
                    format!("exactly one of {} is required", names.join(", "))
                } else {
                    format!("at least one of {} is required", names.join(", "))
                };
                push(out, pointer, "required", message);
                return;
            }
            match best_branch(context, &pointer) {
                Some(branch) => {
                    for error in branch {
                        report(error, out);
                    }
                }
                None => push(
                    out,
                    pointer,
                    keyword,
                    "matches none of the allowed alternatives".to_string(),
                ),
            }
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            push(
                out,
                pointer,
                "oneOf",
                "matches more than one of the alternatives, of which exactly one is allowed"
                    .to_string(),
            );
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for name in unexpected {
                let at = format!("{pointer}/{}", escape(&name));
                push(
                    out,
                    at,
                    "additionalProperties",
                    format!("unknown property \"{name}\""),
                );
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            let message = match dependency_trigger(&schema_path) {
                Some(trigger) => {
                    format!("missing property \"{name}\", required when \"{trigger}\" is set")
                }
                None => format!("missing required property \"{name}\""),
            };
            push(out, pointer, "required", message);
        }
        ValidationErrorKind::Custom { keyword, message } => {
            // cfn-lint's keywords (`keywords.rs`) say which property an
            // error is about; the keyword is what the finding ID follows.
            if let Some((property, message)) = message.split_once(AT_PROPERTY) {
                let at = format!("{pointer}/{}", escape(property));
                let keyword = match keyword.as_str() {
                    "requiredXor" | "dependentExcluded" => "exclusive",
                    other => other,
                };
                push(out, at, keyword, message.to_string());
                return;
            }
            let keyword = match keyword.as_str() {
                "cfnType" => "type",
                "requiredXor" | "requiredOr" => "required",
                "enumCaseInsensitive" => "enum",
                other => other,
            };
            push(out, pointer, keyword, message);
        }
        ValidationErrorKind::PropertyNames { error } => {
            let inner = error.to_string();
            push(
                out,
                pointer,
                "propertyNames",
                format!("invalid property name: {inner}"),
            );
        }
        kind => {
            let keyword = kind.keyword().to_string();
            let message = describe(&kind, &instance);
            push(out, pointer, &keyword, message);
        }
    }
}

/// The message for the kinds that need nothing but themselves and the value.
fn describe(kind: &ValidationErrorKind, instance: &Value) -> String {
    let value = show(instance);
    let count = match instance {
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        Value::String(text) => text.chars().count(),
        _ => 0,
    };
    let plural = |n: u64, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    match kind {
        ValidationErrorKind::Enum { options } => {
            let options = options.as_array().map(Vec::as_slice).unwrap_or_default();
            const SHOWN: usize = 12;
            let mut listed = options
                .iter()
                .take(SHOWN)
                .map(show)
                .collect::<Vec<_>>()
                .join(", ");
            if options.len() > SHOWN {
                listed.push_str(&format!(", ... ({} more)", options.len() - SHOWN));
            }
            format!("{value} is not one of {listed}")
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{value} is not {}", show(expected_value))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{value} does not match the pattern \"{pattern}\"")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!(
                "{value} is shorter than {} (it has {count})",
                plural(*limit, "character")
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!(
                "{value} is longer than {} (it has {count})",
                plural(*limit, "character")
            )
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{value} is less than the minimum of {limit}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{value} is greater than the maximum of {limit}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{value} must be greater than {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{value} must be less than {limit}")
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("{value} is not a multiple of {multiple_of}")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "expected at least {}, found {count}",
                plural(*limit, "item")
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("expected at most {}, found {count}", plural(*limit, "item"))
        }
        ValidationErrorKind::AdditionalItems { limit } => {
            format!(
                "expected at most {}, found {count}",
                plural(*limit as u64, "item")
            )
        }
        ValidationErrorKind::MinProperties { limit } => {
            format!(
                "expected at least {}, found {count}",
                plural(*limit, "property")
            )
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!(
                "expected at most {}, found {count}",
                plural(*limit, "property")
            )
        }
        ValidationErrorKind::UniqueItems => "has duplicate items".to_string(),
        ValidationErrorKind::Contains => "no item has the expected form".to_string(),
        ValidationErrorKind::FalseSchema | ValidationErrorKind::Not { .. } => {
            format!("{value} is not allowed here")
        }
        ValidationErrorKind::Format { format } => format!("{value} is not a valid {format}"),
        ValidationErrorKind::Type { .. } => format!("{value} has the wrong type"),
        other => format!("{value}: {} failed", other.keyword()),
    }
}

/// When every branch of an `anyOf`/`oneOf` fails only for missing
/// properties of this same object, one name per branch: the names a
/// message should offer as a choice.
fn required_choice(
    context: &[Vec<ValidationError<'static>>],
    pointer: &str,
) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for branch in context {
        let [error] = branch.as_slice() else {
            return None;
        };
        let ValidationErrorKind::Required { property } = error.kind() else {
            return None;
        };
        if error.instance_path().as_str() != pointer {
            return None;
        }
        names.push(format!("\"{}\"", property.as_str()?));
    }
    (!names.is_empty()).then_some(names)
}

/// The branch that describes the value best: one that does not fail on the
/// value's very type, then the one whose errors go deepest (the value got
/// furthest into it), then the one with fewest errors; the first on ties.
fn best_branch(
    context: Vec<Vec<ValidationError<'static>>>,
    pointer: &str,
) -> Option<Vec<ValidationError<'static>>> {
    let depth = |location: &Location| location.as_str().matches('/').count();
    let score = |branch: &Vec<ValidationError<'static>>| {
        let wrong_type = branch.iter().all(|error| {
            error.instance_path().as_str() == pointer
                && matches!(error.kind(), ValidationErrorKind::Custom { keyword, .. } if keyword == "cfnType")
        });
        let deepest = branch
            .iter()
            .map(|error| depth(error.instance_path()))
            .max()
            .unwrap_or(0);
        (!wrong_type, deepest, usize::MAX - branch.len())
    };
    let mut best: Option<(_, Vec<ValidationError<'static>>)> = None;
    for branch in context {
        if branch.is_empty() {
            continue;
        }
        let candidate = score(&branch);
        if best.as_ref().is_none_or(|(score, _)| candidate > *score) {
            best = Some((candidate, branch));
        }
    }
    best.map(|(_, branch)| branch)
}

/// The property that made a `dependencies` requirement apply, from a schema
/// path ending in `.../dependencies/<property>/required`.
fn dependency_trigger(schema_path: &Location) -> Option<String> {
    let segments: Vec<&str> = schema_path.as_str().split('/').collect();
    match segments.as_slice() {
        [.., "dependencies", trigger, "required"] => Some(unescape(trigger)),
        _ => None,
    }
}

/// A value as it appears in a message: JSON, cut short if long (inside
/// the quotes for a string, so it still reads as one).
pub(super) fn show(value: &Value) -> String {
    const LIMIT: usize = 60;
    let cut = |text: &str| -> Option<String> {
        (text.chars().count() > LIMIT).then(|| text.chars().take(LIMIT).collect::<String>() + "...")
    };
    match value {
        Value::String(text) => match cut(text) {
            Some(short) => Value::String(short).to_string(),
            None => value.to_string(),
        },
        _ => {
            let text = value.to_string();
            cut(&text).unwrap_or(text)
        }
    }
}
