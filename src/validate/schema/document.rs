//! Reading a provider schema's JSON without its words for people.
//!
//! Descriptions make up about two thirds of a provider schema's text (the
//! launch template's: 57 of 82 KB). Nothing validates or reports them, and
//! the rewrite leaves them out of what it compiles (`rewrite.rs`), so they
//! are skipped as the text is read instead of being copied into the
//! document, then again into every part compiled. Only a schema's own
//! keywords are skipped: a property or definition that happens to be
//! named `description`, and any data (`enum`, `default`, `handlers`...),
//! are read as they are.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::rewrite::UNCOMPILED;

/// Parses `text` as [`serde_json::from_str`] does, leaving out the
/// keywords of every schema in it that the rewrite leaves out
/// ([`UNCOMPILED`]).
pub(super) fn parse(text: &str) -> serde_json::Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Read(Position::Schema).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// What a JSON value is, by where it sits.
#[derive(Clone, Copy)]
enum Position {
    /// A schema (or a list of schemas: `items`, `allOf`...).
    Schema,
    /// An object of schemas by name: `properties`, `definitions`...
    Named,
    /// Anything else, read as it is.
    Data,
}

/// What the value of `keyword` in a schema is.
fn position_of(keyword: &str) -> Position {
    match keyword {
        "properties" | "patternProperties" | "definitions" | "dependencies"
        | "dependentSchemas" => Position::Named,
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "contains"
        | "propertyNames"
        | "not"
        | "if"
        | "then"
        | "else"
        | "anyOf"
        | "oneOf"
        | "allOf" => Position::Schema,
        _ => Position::Data,
    }
}

struct Read(Position);

impl<'de> DeserializeSeed<'de> for Read {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Position::Data => Value::deserialize(deserializer),
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Read {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let item = match self.0 {
            Position::Schema => Position::Schema,
            _ => Position::Data,
        };
        let mut out = Vec::new();
        while let Some(value) = items.next_element_seed(Read(item))? {
            out.push(value);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            let value = match self.0 {
                Position::Named => entries.next_value_seed(Read(Position::Schema))?,
                _ if UNCOMPILED.contains(&key.as_str()) => {
                    entries.next_value::<IgnoredAny>()?;
                    continue;
                }
                _ => entries.next_value_seed(Read(position_of(&key)))?,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::parse;

    #[test]
    fn only_the_schemas_own_descriptions_are_left_out() {
        let text = r#"{
            "description": "a type", "typeName": "A::B::C",
            "properties": {
                "description": {"type": "string", "description": "a property named so"},
                "Items": {"items": [{"title": "t", "type": "integer"}], "anyOf": [{"$comment": "c"}]}
            },
            "definitions": {"X": {"enum": [{"description": "data"}], "default": {"title": "kept"}}},
            "handlers": {"create": {"description": "kept", "permissions": ["a"]}},
            "n": [1, -2, 2.5, null, true]
        }"#;
        assert_eq!(
            parse(text).unwrap(),
            json!({
                "typeName": "A::B::C",
                "properties": {
                    "description": {"type": "string"},
                    "Items": {"items": [{"type": "integer"}], "anyOf": [{}]}
                },
                "definitions": {"X": {"enum": [{"description": "data"}], "default": {"title": "kept"}}},
                "handlers": {"create": {"description": "kept", "permissions": ["a"]}},
                "n": [1, -2, 2.5, null, true]
            })
        );
        assert!(parse("{} x").is_err());
        assert!(parse("{").is_err());
    }

    /// What is left out is only what the rewrite leaves out anyway: every
    /// embedded provider schema, read without its descriptions, rewrites
    /// to the very schema it rewrites to when read whole.
    #[test]
    fn every_embedded_schema_compiles_the_same_without_its_descriptions() {
        use super::super::archive;
        use super::super::rewrite::{Patterns, rewrite_with, root_schema};
        let rewritten = |document: &serde_json::Value| {
            rewrite_with(
                &root_schema(document, |_, value| value.clone()),
                Patterns::Trusted,
            )
        };
        let mut shortened = 0;
        for position in 0..archive::len() {
            let text = archive::text(position).unwrap();
            let whole: serde_json::Value = serde_json::from_str(&text).unwrap();
            let lean = parse(&text).unwrap();
            shortened += usize::from(lean != whole);
            // Not `assert_eq!`: the schemas are too long to print.
            assert!(
                rewritten(&lean) == rewritten(&whole),
                "{}: a compiled keyword was left out",
                whole["typeName"]
            );
        }
        assert!(
            shortened > 1000,
            "only {shortened} schemas had words left out"
        );
    }
}
