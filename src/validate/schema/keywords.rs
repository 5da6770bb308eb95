//! cfn-lint's own keywords in the provider schemas, which a standard
//! validator ignores: `requiredXor`, `requiredOr`, `dependentExcluded`,
//! `enumCaseInsensitive`, `uniqueKeys` and `maxUniqueItems`, as custom
//! keywords of `jsonschema`. (`dependentRequired` is rewritten into
//! `dependencies` instead, in `rewrite.rs`.)
//!
//! A property whose value is `Fn::If` may turn out absent (`AWS::NoValue`
//! in one branch): it counts as present where presence is required, and as
//! absent where presence is an error, so that a conditional property is
//! never a false alarm.

use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Value};

use super::errors::show;

/// Separates a property name from the message in a custom error that is
/// about one property of the object rather than the object itself:
/// `errors.rs` moves such an error to the property.
pub(super) const AT_PROPERTY: char = '\u{1}';

/// The keywords, for `jsonschema::options().with_keyword`.
pub(super) fn register(
    options: jsonschema::ValidationOptions<'static>,
) -> jsonschema::ValidationOptions<'static> {
    options
        .with_keyword("requiredXor", |_, value, _| {
            Ok(Box::new(Choice::new(value, true)))
        })
        .with_keyword("requiredOr", |_, value, _| {
            Ok(Box::new(Choice::new(value, false)))
        })
        .with_keyword("dependentExcluded", |_, value, _| {
            Ok(Box::new(Excluded::new(value)))
        })
        .with_keyword("enumCaseInsensitive", |_, value, _| {
            Ok(Box::new(CaseInsensitiveEnum::new(value)))
        })
        .with_keyword("uniqueKeys", |_, value, _| {
            Ok(Box::new(UniqueKeys::new(value)))
        })
        .with_keyword("maxUniqueItems", |_, value, _| {
            Ok(Box::new(MaxUniqueItems::new(value)))
        })
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the value may be absent once conditions are resolved.
fn conditional(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|map| map.len() == 1 && map.contains_key("Fn::If"))
}

/// A property that is surely set: present, and not `Fn::If`.
fn surely_set(object: &Map<String, Value>, name: &str) -> bool {
    object.get(name).is_some_and(|value| !conditional(value))
}

fn at_property(name: &str, message: String) -> ValidationError<'static> {
    ValidationError::custom(format!("{name}{AT_PROPERTY}{message}"))
}

/// `requiredXor` (exactly one of the names) or `requiredOr` (at least one).
struct Choice {
    names: Vec<String>,
    exclusive: bool,
}

impl Choice {
    fn new(value: &Value, exclusive: bool) -> Choice {
        Choice {
            names: names(value),
            exclusive,
        }
    }

    fn errors(&self, instance: &Value) -> Vec<ValidationError<'static>> {
        let Value::Object(object) = instance else {
            return Vec::new();
        };
        if self.names.is_empty() {
            return Vec::new();
        }
        if !self.names.iter().any(|name| object.contains_key(name)) {
            let message = if self.exclusive {
                format!("exactly one of {} is required", quoted(&self.names))
            } else {
                format!("at least one of {} is required", quoted(&self.names))
            };
            return vec![ValidationError::custom(message)];
        }
        if !self.exclusive {
            return Vec::new();
        }
        let set: Vec<&String> = self
            .names
            .iter()
            .filter(|name| surely_set(object, name))
            .collect();
        if set.len() < 2 {
            return Vec::new();
        }
        // One error, at the second property set: the first is where the
        // author started, the second is the one that conflicts.
        let others = quoted(&[set[0].clone()]);
        vec![at_property(
            set[1],
            format!(
                "\"{}\" cannot be set together with {others}: only one of {} is allowed",
                set[1],
                quoted(&self.names)
            ),
        )]
    }
}

impl<'i> Keyword<'i> for Choice {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.errors(instance).into_iter().next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.errors(instance).is_empty()
    }
}

/// `dependentExcluded`: when a property is set, others must not be.
struct Excluded {
    rules: Vec<(String, Vec<String>)>,
}

impl Excluded {
    fn new(value: &Value) -> Excluded {
        let rules = value
            .as_object()
            .map(|map| {
                map.iter()
                    .map(|(name, excluded)| (name.clone(), names(excluded)))
                    .collect()
            })
            .unwrap_or_default();
        Excluded { rules }
    }

    fn errors(&self, instance: &Value) -> Vec<ValidationError<'static>> {
        let Value::Object(object) = instance else {
            return Vec::new();
        };
        let mut reported: Vec<&str> = Vec::new();
        let mut errors = Vec::new();
        for (name, excluded) in &self.rules {
            if !surely_set(object, name) {
                continue;
            }
            for other in excluded {
                // Rules are often symmetric (A excludes B, B excludes A):
                // one conflict is one error, at the later of the two.
                if !surely_set(object, other) || reported.contains(&other.as_str()) {
                    continue;
                }
                let (first, second) = order(object, name, other);
                if reported.contains(&second) {
                    continue;
                }
                reported.push(second);
                errors.push(at_property(
                    second,
                    format!("\"{second}\" cannot be set together with \"{first}\""),
                ));
            }
        }
        errors
    }
}

/// The two names in the order the object holds them.
fn order<'a>(object: &Map<String, Value>, a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    let position = |name: &str| object.keys().position(|key| key == name);
    if position(a) <= position(b) {
        (a, b)
    } else {
        (b, a)
    }
}

impl<'i> Keyword<'i> for Excluded {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.errors(instance).into_iter().next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.errors(instance).is_empty()
    }

    fn iter_errors(
        &self,
        instance: &'i Value,
    ) -> Box<dyn Iterator<Item = ValidationError<'i>> + 'i> {
        Box::new(self.errors(instance).into_iter())
    }
}

/// `enumCaseInsensitive`: an enum of strings compared without case.
struct CaseInsensitiveEnum {
    options: Vec<Value>,
}

impl CaseInsensitiveEnum {
    fn new(value: &Value) -> CaseInsensitiveEnum {
        CaseInsensitiveEnum {
            options: value.as_array().cloned().unwrap_or_default(),
        }
    }

    fn accepts(&self, instance: &Value) -> bool {
        self.options.is_empty()
            || self.options.iter().any(|option| match (option, instance) {
                (Value::String(option), Value::String(value)) => option.eq_ignore_ascii_case(value),
                (option, value) => option == value,
            })
            // Structured values (an intrinsic) are other keywords' business.
            || matches!(instance, Value::Object(_) | Value::Array(_))
    }
}

impl<'i> Keyword<'i> for CaseInsensitiveEnum {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.accepts(instance) {
            return Ok(());
        }
        let listed = self.options.iter().map(show).collect::<Vec<_>>().join(", ");
        Err(ValidationError::custom(format!(
            "{} is not one of {listed} (in any case)",
            show(instance)
        )))
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.accepts(instance)
    }
}

/// `uniqueKeys`: no two items of an array share the values of these keys.
struct UniqueKeys {
    keys: Vec<String>,
}

impl UniqueKeys {
    fn new(value: &Value) -> UniqueKeys {
        UniqueKeys { keys: names(value) }
    }

    /// The index of the first item that repeats an earlier one's keys.
    fn duplicate(&self, instance: &Value) -> Option<usize> {
        let items = instance.as_array()?;
        if self.keys.is_empty() {
            return None;
        }
        let mut seen: Vec<Vec<&Value>> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let Value::Object(object) = item else {
                continue;
            };
            let mut values = Vec::with_capacity(self.keys.len());
            for key in &self.keys {
                match object.get(key) {
                    // Only literal values can be compared.
                    Some(value @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
                        values.push(value);
                    }
                    _ => break,
                }
            }
            if values.len() != self.keys.len() {
                continue;
            }
            if seen.contains(&values) {
                return Some(index);
            }
            seen.push(values);
        }
        None
    }
}

impl<'i> Keyword<'i> for UniqueKeys {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.duplicate(instance) {
            None => Ok(()),
            Some(index) => Err(at_property(
                &index.to_string(),
                format!(
                    "item {index} repeats the {} of an earlier item, which must be unique",
                    quoted(&self.keys)
                ),
            )),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.duplicate(instance).is_none()
    }
}

/// `maxUniqueItems`: at most this many different items.
struct MaxUniqueItems {
    limit: Option<u64>,
}

impl MaxUniqueItems {
    fn new(value: &Value) -> MaxUniqueItems {
        MaxUniqueItems {
            limit: value.as_u64(),
        }
    }

    fn count(&self, instance: &Value) -> Option<(u64, u64)> {
        let limit = self.limit?;
        let items = instance.as_array()?;
        let mut distinct: Vec<&Value> = Vec::new();
        for item in items {
            if !distinct.contains(&item) {
                distinct.push(item);
            }
        }
        let count = distinct.len() as u64;
        (count > limit).then_some((count, limit))
    }
}

impl<'i> Keyword<'i> for MaxUniqueItems {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.count(instance) {
            None => Ok(()),
            Some((count, limit)) => Err(ValidationError::custom(format!(
                "expected at most {limit} different items, found {count}"
            ))),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.count(instance).is_none()
    }
}
