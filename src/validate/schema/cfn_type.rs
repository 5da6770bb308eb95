//! `cfnType`: JSON Schema's `type` with CloudFormation's conversions; and
//! `cfnIntrinsic`, which a value meets when it is an intrinsic function call.

use jsonschema::{Keyword, ValidationError};
use serde_json::Value;

use super::errors::show;
use super::is_intrinsic;

pub(super) struct CfnType {
    types: Vec<String>,
}

impl CfnType {
    pub(super) fn new(value: &Value) -> CfnType {
        let types = match value {
            Value::String(name) => vec![name.clone()],
            Value::Array(names) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        CfnType { types }
    }

    fn accepts(&self, instance: &Value) -> bool {
        // A schema naming no type we know constrains nothing.
        self.types.is_empty() || self.types.iter().any(|name| accepts(name, instance))
    }
}

fn accepts(type_name: &str, instance: &Value) -> bool {
    match (type_name, instance) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_) | Value::Number(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(number)) => {
            number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("integer", Value::String(text)) => text.parse::<i64>().is_ok(),
        ("number", Value::String(text)) => {
            // Rust also reads "inf" and "NaN"; CloudFormation does not.
            let plain = text
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
            plain && text.parse::<f64>().is_ok_and(f64::is_finite)
        }
        ("boolean", Value::String(text)) => {
            text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false")
        }
        ("object" | "array" | "null" | "boolean" | "string" | "number" | "integer", _) => false,
        // An unknown type name is the schema's problem, not the template's.
        _ => true,
    }
}

impl<'i> Keyword<'i> for CfnType {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.accepts(instance) {
            return Ok(());
        }
        let expected = self
            .types
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(" or ");
        Err(ValidationError::custom(format!(
            "{} is not of type {expected}",
            show(instance)
        )))
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.accepts(instance)
    }
}

/// `"cfnIntrinsic": true`: the value is an intrinsic function call (an
/// object with one key, an intrinsic's name). Only ever used as an `if`,
/// so its error message is never shown.
pub(super) struct CfnIntrinsic;

impl<'i> Keyword<'i> for CfnIntrinsic {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if is_intrinsic(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(
                "not an intrinsic function call".to_string(),
            ))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        is_intrinsic(instance)
    }
}
