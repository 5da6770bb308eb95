//! The JSON emitter: long-form intrinsics, two-space indentation.
//!
//! The keys and their order come from [`Template::layout`], shared with the
//! YAML emitter; this module only spells values. Strings escape
//! every character YAML does not allow raw, so that the output can also be
//! read by YAML parsers (the template reader among them).

use std::io;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::{Map, Number, Value};

use super::expr::Expr;
use super::template::Template;

/// Emits a template as JSON with long-form intrinsics (`{"Ref": ...}`).
pub fn emit(template: &Template) -> String {
    let value = to_value(template);
    let mut out = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, YamlSafe(PrettyFormatter::new()));
    // Serializing a `Value` into memory only fails on a writer error, which a
    // `Vec` never raises.
    if value.serialize(&mut serializer).is_err() {
        return String::new();
    }
    // The formatter only writes what serde_json gives it plus ASCII escapes.
    let mut text = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    text.push('\n');
    text
}

fn string(s: &str) -> Value {
    Value::String(s.to_string())
}

/// The whole template as a JSON value, long-form intrinsics.
pub fn to_value(template: &Template) -> Value {
    expr(&template.layout())
}

/// A map of values as a JSON object, long-form intrinsics.
pub fn expr_map(entries: &IndexMap<String, Expr>) -> Value {
    Value::Object(
        entries
            .iter()
            .map(|(key, value)| (key.clone(), expr(value)))
            .collect::<Map<String, Value>>(),
    )
}

fn list(items: Vec<Value>) -> Value {
    Value::Array(items)
}

/// A long-form intrinsic: `{"Fn::Name": argument}` (or `Ref`, `Condition`).
fn call(key: &str, argument: Value) -> Value {
    Value::Object(Map::from_iter([(key.to_string(), argument)]))
}

/// One value as JSON, long-form intrinsics: what provider schemas see.
pub fn expr(expr_: &Expr) -> Value {
    match expr_ {
        Expr::Bool(b) => Value::Bool(*b),
        Expr::Int(i) => Value::from(*i),
        // JSON has no NaN or infinity (nor has CloudFormation); they are
        // written in YAML's spelling as strings so the output stays JSON.
        Expr::Float(f) => match Number::from_f64(*f) {
            Some(number) => Value::Number(number),
            None if f.is_nan() => string(".nan"),
            None if *f > 0.0 => string(".inf"),
            None => string("-.inf"),
        },
        Expr::String(s) => string(s),
        Expr::List(items) => list(items.iter().map(expr).collect()),
        Expr::Map(entries) => expr_map(entries),
        Expr::Ref(name) => call("Ref", string(name)),
        Expr::GetAtt {
            resource,
            attribute,
        } => call(
            "Fn::GetAtt",
            list(vec![string(resource), string(attribute)]),
        ),
        Expr::Sub {
            template,
            variables,
        } => {
            let argument = if variables.is_empty() {
                string(template)
            } else {
                list(vec![string(template), expr_map(variables)])
            };
            call("Fn::Sub", argument)
        }
        Expr::Base64(inner) => call("Fn::Base64", expr(inner)),
        Expr::Join { delimiter, items } => {
            call("Fn::Join", list(vec![string(delimiter), expr(items)]))
        }
        Expr::If {
            condition,
            then,
            otherwise,
        } => call(
            "Fn::If",
            list(vec![string(condition), expr(then), expr(otherwise)]),
        ),
        Expr::Select { index, list: items } => {
            call("Fn::Select", list(vec![expr(index), expr(items)]))
        }
        Expr::Split { delimiter, source } => {
            call("Fn::Split", list(vec![string(delimiter), expr(source)]))
        }
        Expr::GetAZs(region) => call("Fn::GetAZs", expr(region)),
        Expr::ImportValue(name) => call("Fn::ImportValue", expr(name)),
        Expr::FindInMap {
            map,
            top_key,
            second_key,
        } => call(
            "Fn::FindInMap",
            list(vec![string(map), expr(top_key), expr(second_key)]),
        ),
        Expr::Cidr { block, count, bits } => {
            call("Fn::Cidr", list(vec![expr(block), expr(count), expr(bits)]))
        }
        Expr::Equals(left, right) => call("Fn::Equals", list(vec![expr(left), expr(right)])),
        Expr::And(items) => call("Fn::And", list(items.iter().map(expr).collect())),
        Expr::Or(items) => call("Fn::Or", list(items.iter().map(expr).collect())),
        Expr::Not(inner) => call("Fn::Not", list(vec![expr(inner)])),
        Expr::Condition(name) => call("Condition", string(name)),
    }
}

/// serde_json's pretty printer, except that characters JSON allows raw
/// but YAML does not (DEL, C1 controls, BOM, non-characters, and the line
/// and paragraph separators that YAML 1.1 readers treat as line breaks)
/// are written as `\uXXXX` escapes.
struct YamlSafe<'a>(PrettyFormatter<'a>);

fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

impl Formatter for YamlSafe<'_> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(index) = rest.find(needs_escape) {
            writer.write_all(&rest.as_bytes()[..index])?;
            let c = rest[index..].chars().next().unwrap_or_default();
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = &rest[index + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}
