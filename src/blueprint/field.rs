//! One declaration per blueprint field: its name, the type of value it
//! takes, where it applies, its default and its documentation. Each section
//! of the loader keeps the table of its object beside its decoder; the
//! decoder accepts exactly the names of that table (with "did you mean"
//! among them), and the JSON Schema and the field reference are written
//! from the same tables.

use serde_json::{Map, Value, json};

/// A field of one object of the blueprint format.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    /// One line for editors: the JSON Schema's `description` (none when
    /// empty), and the reference's text when `long` is empty.
    pub doc: &'static str,
    /// The reference's text (Markdown), when it says more than `doc`.
    pub long: &'static str,
    /// The value used when the field is left out, in words (none when
    /// empty).
    pub default: &'static str,
    pub need: Need,
    /// The kind of node group a node group field applies to.
    pub kind: Kind,
    /// Whether `defaults` may set the field: not for names of one group.
    pub in_defaults: bool,
}

/// Whether a field must be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    Optional,
    /// Always, and the JSON Schema says so.
    Required,
    /// When the words say (the loader checks it; the JSON Schema, which
    /// cannot see the condition, does not).
    When(&'static str),
}

/// Which node groups a field applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Any,
    Managed,
    SelfManaged,
}

/// The value a field takes.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    /// A string, or with `numbers` also a number written without quotes.
    Text(Text),
    /// An integer within `min` and `max` (no upper bound when `None`).
    Integer {
        min: i64,
        max: Option<i64>,
    },
    Boolean,
    /// An ISO 8601 duration of hours, minutes and seconds.
    Duration,
    /// Exactly this string.
    Const(&'static str),
    /// One of the names the loader's own choice list accepts.
    OneOf(fn() -> Vec<&'static str>),
    /// A literal, `{parameter: ...}` or `{import: ...}`.
    Source,
    /// An object of the format, by its definition's name.
    Object(&'static str),
    /// A list of items of one type.
    List {
        item: &'static Ty,
        min: Option<u32>,
        max: Option<u32>,
    },
    /// A mapping of names to strings.
    StringMap,
    /// Any mapping.
    Mapping,
    /// One value of a type, or a list of one or more.
    OneOrMany(&'static Ty),
    /// One of several types.
    Either(&'static [Ty]),
    /// Any value.
    Anything,
    /// A shape the variants above do not describe: the schema, given the
    /// field's `doc`, and what the reference says it takes.
    Custom {
        schema: fn(&str) -> Value,
        reads: &'static str,
    },
}

/// A string's constraints.
#[derive(Clone, Copy, Debug)]
pub struct Text {
    pub pattern: Option<&'static str>,
    pub min_length: Option<u32>,
    pub max_length: Option<u32>,
    /// A number written without quotes is taken as its text.
    pub numbers: bool,
}

impl Ty {
    pub const STRING: Ty = Ty::Text(Text {
        pattern: None,
        min_length: None,
        max_length: None,
        numbers: false,
    });
    /// A string or a number (`"1.33"` or `1.33`).
    pub const STRING_OR_NUMBER: Ty = Ty::Text(Text {
        pattern: None,
        min_length: None,
        max_length: None,
        numbers: true,
    });
    pub const STRINGS: Ty = Ty::list(&Ty::STRING);

    /// A string matching `pattern`, of at most `max_length` characters.
    pub const fn pattern(pattern: &'static str, max_length: Option<u32>) -> Ty {
        Ty::Text(Text {
            pattern: Some(pattern),
            min_length: None,
            max_length,
            numbers: false,
        })
    }

    pub const fn integer(min: i64, max: i64) -> Ty {
        Ty::Integer {
            min,
            max: Some(max),
        }
    }

    pub const fn list(item: &'static Ty) -> Ty {
        Ty::List {
            item,
            min: None,
            max: None,
        }
    }

    /// The JSON Schema of a value of this type, without a description.
    pub fn schema(&self) -> Value {
        match self {
            Ty::Text(text) => {
                let mut schema = Map::new();
                schema.insert(
                    "type".into(),
                    if text.numbers {
                        json!(["string", "number"])
                    } else {
                        json!("string")
                    },
                );
                if let Some(pattern) = text.pattern {
                    schema.insert("pattern".into(), json!(pattern));
                }
                if let Some(min) = text.min_length {
                    schema.insert("minLength".into(), json!(min));
                }
                if let Some(max) = text.max_length {
                    schema.insert("maxLength".into(), json!(max));
                }
                Value::Object(schema)
            }
            Ty::Integer { min, max } => match max {
                Some(max) => json!({"type": "integer", "minimum": min, "maximum": max}),
                None => json!({"type": "integer", "minimum": min}),
            },
            Ty::Boolean => json!({"type": "boolean"}),
            Ty::Duration => {
                json!({"type": "string", "pattern": "^PT([0-9]+H)?([0-9]+M)?([0-9]+S)?$"})
            }
            Ty::Const(value) => json!({ "const": value }),
            Ty::OneOf(names) => json!({ "enum": names() }),
            Ty::Source => json!({"$ref": "#/definitions/source"}),
            Ty::Object(name) => json!({ "$ref": format!("#/definitions/{name}") }),
            Ty::List { item, min, max } => {
                let mut schema = Map::new();
                schema.insert("type".into(), json!("array"));
                schema.insert("items".into(), item.schema());
                if let Some(min) = min {
                    schema.insert("minItems".into(), json!(min));
                }
                if let Some(max) = max {
                    schema.insert("maxItems".into(), json!(max));
                }
                Value::Object(schema)
            }
            Ty::StringMap => {
                json!({"type": "object", "additionalProperties": {"type": ["string", "number"]}})
            }
            Ty::Mapping => json!({"type": "object"}),
            Ty::OneOrMany(item) => json!({"oneOf": [
                item.schema(),
                {"type": "array", "items": item.schema(), "minItems": 1}
            ]}),
            Ty::Either(choices) => {
                json!({ "oneOf": choices.iter().map(Ty::schema).collect::<Vec<_>>() })
            }
            Ty::Anything => json!({}),
            Ty::Custom { schema, .. } => schema(""),
        }
    }

    /// What the reference says a value of this type is (Markdown).
    pub fn reads(&self) -> String {
        match self {
            Ty::Text(text) => {
                let what = if text.numbers {
                    "string or number"
                } else {
                    "string"
                };
                match (text.pattern, text.max_length) {
                    (Some(pattern), Some(max)) => {
                        format!("{what} matching `{pattern}`, at most {max} characters")
                    }
                    (Some(pattern), None) => format!("{what} matching `{pattern}`"),
                    (None, Some(max)) => format!("{what} of at most {max} characters"),
                    (None, None) => what.to_string(),
                }
            }
            Ty::Integer {
                min,
                max: Some(max),
            } => format!("integer, {min} to {max}"),
            Ty::Integer { min, max: None } => format!("integer, at least {min}"),
            Ty::Boolean => "`true` or `false`".to_string(),
            Ty::Duration => "ISO 8601 duration (`PT15M`)".to_string(),
            Ty::Const(value) => format!("`{value}`"),
            Ty::OneOf(names) => {
                let names: Vec<String> = names().iter().map(|name| format!("`{name}`")).collect();
                format!("one of {}", names.join(", "))
            }
            Ty::Source => "[value source](#source)".to_string(),
            Ty::Object(name) => format!("[`{name}`](#{})", name.to_lowercase()),
            Ty::List { item, .. } => format!("list of {}", item.reads()),
            Ty::StringMap => "mapping of names to strings".to_string(),
            Ty::Mapping => "mapping".to_string(),
            Ty::OneOrMany(item) => format!("{0}, or a list of one or more", item.reads()),
            Ty::Either(choices) => {
                let choices: Vec<String> = choices.iter().map(Ty::reads).collect();
                choices.join(", or ")
            }
            Ty::Anything => "any value".to_string(),
            Ty::Custom { reads, .. } => reads.to_string(),
        }
    }
}

impl Field {
    /// An optional field of any group, with no default and no more to say.
    pub const fn new(name: &'static str, ty: Ty, doc: &'static str) -> Field {
        Field {
            name,
            ty,
            doc,
            long: "",
            default: "",
            need: Need::Optional,
            kind: Kind::Any,
            in_defaults: true,
        }
    }

    pub const fn long(self, long: &'static str) -> Field {
        Field { long, ..self }
    }

    pub const fn default(self, default: &'static str) -> Field {
        Field { default, ..self }
    }

    pub const fn required(self) -> Field {
        Field {
            need: Need::Required,
            ..self
        }
    }

    pub const fn required_when(self, when: &'static str) -> Field {
        Field {
            need: Need::When(when),
            ..self
        }
    }

    pub const fn managed(self) -> Field {
        Field {
            kind: Kind::Managed,
            ..self
        }
    }

    pub const fn self_managed(self) -> Field {
        Field {
            kind: Kind::SelfManaged,
            ..self
        }
    }

    /// Names one group, so `defaults` cannot set it.
    pub const fn per_group(self) -> Field {
        Field {
            in_defaults: false,
            ..self
        }
    }

    /// The field's JSON Schema, its description included. A choice between
    /// types says what it is before the choices; a custom shape places its
    /// own description.
    pub fn schema(&self) -> Value {
        match self.ty {
            Ty::Custom { schema, .. } => schema(self.doc),
            Ty::Either(_) if !self.doc.is_empty() => {
                let mut out = Map::new();
                out.insert("description".into(), json!(self.doc));
                if let Value::Object(choices) = self.ty.schema() {
                    out.extend(choices);
                }
                Value::Object(out)
            }
            _ => {
                let mut schema = self.ty.schema();
                if let (Value::Object(map), false) = (&mut schema, self.doc.is_empty()) {
                    map.insert("description".into(), json!(self.doc));
                }
                schema
            }
        }
    }
}

/// Whether a table declares a field of this name.
pub fn declares(fields: &[Field], name: &str) -> bool {
    fields.iter().any(|field| field.name == name)
}

/// The range a table declares for its integer field `name`.
pub fn range(fields: &[Field], name: &str) -> (i64, i64) {
    match fields
        .iter()
        .find(|field| field.name == name)
        .map(|field| field.ty)
    {
        Some(Ty::Integer { min, max }) => (min, max.unwrap_or(i64::MAX)),
        _ => {
            debug_assert!(false, "field {name} is not a declared integer");
            (i64::MIN, i64::MAX)
        }
    }
}

/// The names of a table's fields, in its order.
pub fn names(fields: &[Field]) -> Vec<&'static str> {
    fields.iter().map(|field| field.name).collect()
}

/// The names of a loader choice list.
pub fn choices<T>(list: &[(&'static str, T)]) -> Vec<&'static str> {
    list.iter().map(|(name, _)| *name).collect()
}
