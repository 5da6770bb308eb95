//! The intrinsic-tolerant rewrite of a provider schema, and its compiling.
//!
//! # How a provider schema is prepared
//!
//! The vendored files (see `schemas/README.md`) are kept byte for byte as
//! cfn-lint ships them. When a type is first validated its schema is
//! rewritten, then compiled with `jsonschema` as draft 7 (the files name a
//! meta-schema the crate does not know), offline:
//!
//! - Every position that describes a property *value* (each entry of
//!   `properties`, `patternProperties` and `definitions`, `items`,
//!   `additionalItems`, and `additionalProperties` when it is a schema)
//!   becomes `{"if": <an intrinsic>, "then": true, "else": <original>}`.
//!   An intrinsic is an object with exactly one key among the intrinsic
//!   function names. Because `else` reports the original's own errors, a bad
//!   enum deep inside keeps its pointer. In a condition (under `if`) an
//!   intrinsic matches nothing instead, so that a `then` never applies on
//!   a value that is not known; under `not` the two swap.
//! - `type` becomes the custom keyword `cfnType`, which accepts what
//!   CloudFormation converts: numbers where a string is expected, numeric
//!   strings where a number is, `"true"`/`"false"` where a boolean is. A
//!   boolean where a string is expected is still an error: CloudFormation
//!   would turn it into `"true"`, which is almost never what was meant.
//!   (The other keywords still apply by JSON type: `"100"` passes as an
//!   integer but is not compared with `minimum`.)
//! - Patterns written for Java/Python get `\A`/`\Z` as `^`/`$`; a pattern
//!   the ECMA 262 dialect cannot express is dropped (a `patternProperties`
//!   key becomes `.*`) rather than failing the whole type. `pattern` is a
//!   keyword of ours (`pattern.rs`) that compiles its regex when a string
//!   first meets it.
//! - Array-form `dependencies` and draft 2019's `dependentRequired` (which
//!   draft 7 ignores) become `dependencies` with `{"required": [...]}`
//!   subschemas, so an error can name the property that needs the missing
//!   one.
//! - `$ref`s are kept local: `resource-schema.json#/...` means this same
//!   document, any other external reference is dropped (nothing is ever
//!   fetched), and pointers are adjusted for the `else` the rewrite inserts.
//! - Only the validation part of the document is compiled: `handlers`,
//!   `tagging` and `$schema` are left out. cfn-lint's own keywords
//!   (`requiredXor`, `dependentExcluded`, ...) are custom keywords
//!   (`keywords.rs`). `format` is asserted for the formats `format.rs`
//!   knows (IP addresses, EC2 IDs), and passes for the rest.

use std::sync::LazyLock;

use jsonschema::Validator;
use serde_json::{Map, Value, json};

use super::cfn_type::{CfnIntrinsic, CfnType};
use super::format;
use super::keywords;
use super::pattern::{self, Pattern};

/// Compiles a whole provider schema: its root's schema of `Properties`,
/// as [`compile_fragment`] compiles a schema of one value.
pub(super) fn compile(document: &Value) -> Result<Validator, String> {
    compile_fragment(&root_schema(document, |_, value| value.clone()))
}

/// Compiles a schema of one value (an extension schema), rewritten like a
/// provider schema but taken whole.
/// Patterns are trusted first: checking each on its own costs more than
/// the whole compile, and only matters when that compile fails (the
/// meta-schema checks each pattern's syntax).
pub(super) fn compile_fragment(document: &Value) -> Result<Validator, String> {
    build(&rewrite_with(document, Patterns::Trusted)).or_else(|_| build(&rewrite(document)))
}

/// Compiles a schema already rewritten.
pub(super) fn build(schema: &Value) -> Result<Validator, String> {
    static OPTIONS: LazyLock<jsonschema::ValidationOptions> = LazyLock::new(|| {
        keywords::register(
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .offline()
                .should_validate_formats(false)
                .with_keyword("cfnType", |_, value, _| Ok(Box::new(CfnType::new(value))))
                .with_keyword("cfnIntrinsic", |_, _, _| Ok(Box::new(CfnIntrinsic)))
                .with_keyword("pattern", |_, value, _| Ok(pattern::keyword(value)))
                .with_keyword("format", |_, value, _| Ok(format::keyword(value))),
        )
    });
    OPTIONS.build(schema).map_err(|error| error.to_string())
}

/// Words for people and for other tools, which validate nothing: left out
/// of what is compiled (`jsonschema` would keep a copy of each as an
/// annotation), and of a provider schema as it is read (`document.rs`).
pub(super) const UNCOMPILED: &[&str] = &[
    "description",
    "markdownDescription",
    "title",
    "examples",
    "$comment",
    "insertionOrder",
    "relationshipRef",
    "arrayType",
];

/// The keywords of the provider schema's root that matter for `Properties`;
/// the rest (`handlers`, `tagging`, `primaryIdentifier`...) is metadata.
const ROOT_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "definitions",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "requiredXor",
    "requiredOr",
    "dependentExcluded",
];

/// The schema of `Properties` itself: the validation keywords of the
/// document's root, each passed through `copy` (keyword, value), and
/// `"type": "object"`.
pub(super) fn root_schema(document: &Value, mut copy: impl FnMut(&str, &Value) -> Value) -> Value {
    let mut root = Map::new();
    root.insert("type".to_string(), json!("object"));
    if let Value::Object(map) = document {
        for key in ROOT_KEYWORDS {
            if let Some(value) = map.get(*key) {
                root.insert((*key).to_string(), copy(key, value));
            }
        }
    }
    Value::Object(root)
}

/// Whether each pattern is compiled on its own first, to leave out one
/// that cannot be (`Checked`), or trusted (`Trusted`: cheaper, and right
/// whenever the whole schema then compiles, as the keyword lets a pattern
/// it cannot compile match everything).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Patterns {
    Checked,
    Trusted,
}

/// The schema an intrinsic function call matches: one key, an intrinsic's
/// name. A keyword of ours (see `cfn_type.rs`): compiling it is a lookup,
/// where the same test in plain JSON Schema (`minProperties`,
/// `maxProperties`, `propertyNames` with an `enum`) is compiled anew at
/// every value position.
fn intrinsic_schema() -> Value {
    json!({ "cfnIntrinsic": true })
}

/// Where a subschema sits: in a condition (`if`), an intrinsic's value is
/// unknown, so it matches nothing and the `then` does not apply; anywhere
/// else it matches everything.
#[derive(Clone, Copy, PartialEq)]
enum Position {
    Value,
    Condition,
}

/// A value position: an intrinsic passes (fails, in a condition), anything
/// else meets the original.
fn wrap(schema: Value, position: Position) -> Value {
    match schema {
        // `true` accepts intrinsics already; `false` rejects them too.
        Value::Bool(_) => schema,
        // Built by hand: `json!` would copy `schema` through serde.
        _ => {
            let mut map = Map::with_capacity(3);
            map.insert("if".to_string(), intrinsic_schema());
            map.insert("then".to_string(), Value::Bool(position == Position::Value));
            map.insert("else".to_string(), schema);
            Value::Object(map)
        }
    }
}

/// A subschema rewritten, and wrapped when it sits at a value position.
fn rewrite_entry(schema: &Value, wrapped: bool, position: Position, patterns: Patterns) -> Value {
    let schema = rewrite_at(schema, position, patterns);
    if wrapped {
        wrap(schema, position)
    } else {
        schema
    }
}

fn rewrite_map(value: &Value, wrapped: bool, position: Position, patterns: Patterns) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, schema)| {
                    (
                        key.clone(),
                        rewrite_entry(schema, wrapped, position, patterns),
                    )
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn rewrite_list(value: &Value, wrapped: bool, position: Position, patterns: Patterns) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|schema| rewrite_entry(schema, wrapped, position, patterns))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Rewrites one subschema and, recursively, every subschema in it (see the
/// module documentation). Keywords that hold no subschema are copied.
pub(super) fn rewrite(schema: &Value) -> Value {
    rewrite_at(schema, Position::Value, Patterns::Checked)
}

/// [`rewrite`], with patterns checked or trusted.
pub(super) fn rewrite_with(schema: &Value, patterns: Patterns) -> Value {
    rewrite_at(schema, Position::Value, patterns)
}

/// A value position's wrapper around a schema already rewritten.
pub(super) fn wrap_value(schema: Value) -> Value {
    wrap(schema, Position::Value)
}

fn rewrite_at(schema: &Value, position: Position, patterns: Patterns) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut dependencies = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "properties" | "definitions" => {
                out.insert(key.clone(), rewrite_map(value, true, position, patterns));
            }
            "patternProperties" => {
                let Value::Object(entries) = rewrite_map(value, true, position, patterns) else {
                    continue;
                };
                // A key pattern that cannot be used matches any name rather
                // than losing the whole schema.
                let entries = entries
                    .into_iter()
                    .map(|(pattern, schema)| {
                        (
                            usable_pattern(&pattern, patterns).unwrap_or_else(|| ".*".to_string()),
                            schema,
                        )
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(entries));
            }
            "additionalProperties" | "additionalItems" => {
                out.insert(key.clone(), rewrite_entry(value, true, position, patterns));
            }
            "items" => {
                let items = match value {
                    Value::Array(_) => rewrite_list(value, true, position, patterns),
                    _ => rewrite_entry(value, true, position, patterns),
                };
                out.insert(key.clone(), items);
            }
            "anyOf" | "oneOf" | "allOf" => {
                out.insert(key.clone(), rewrite_list(value, false, position, patterns));
            }
            "if" => {
                out.insert(
                    key.clone(),
                    rewrite_at(value, Position::Condition, patterns),
                );
            }
            // Under `not`, what passes fails: an intrinsic must make the
            // inner schema fail for the whole to pass, and the reverse.
            "not" => {
                let flipped = match position {
                    Position::Value => Position::Condition,
                    Position::Condition => Position::Value,
                };
                out.insert(key.clone(), rewrite_at(value, flipped, patterns));
            }
            "then" | "else" | "contains" | "propertyNames" => {
                out.insert(key.clone(), rewrite_at(value, position, patterns));
            }
            "dependencies" | "dependentRequired" | "dependentSchemas" => {
                let Value::Object(entries) = value else {
                    continue;
                };
                for (property, dependency) in entries {
                    let dependency = match dependency {
                        Value::Array(_) => {
                            let mut map = Map::with_capacity(1);
                            map.insert("required".to_string(), dependency.clone());
                            Value::Object(map)
                        }
                        _ => rewrite_at(dependency, position, patterns),
                    };
                    dependencies.insert(property.clone(), dependency);
                }
            }
            "type" => {
                out.insert("cfnType".to_string(), value.clone());
            }
            "pattern" => {
                if let Some(pattern) = value.as_str().and_then(|p| usable_pattern(p, patterns)) {
                    out.insert(key.clone(), Value::String(pattern));
                }
            }
            "$ref" => {
                if let Some(reference) = value.as_str().and_then(local_reference) {
                    out.insert(key.clone(), Value::String(reference));
                }
            }
            // Nothing is fetched, and the document's own meta-schema is not
            // one draft 7 knows.
            "$schema" | "$id" => {}
            name if UNCOMPILED.contains(&name) => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !dependencies.is_empty() {
        out.insert("dependencies".to_string(), Value::Object(dependencies));
    }
    Value::Object(out)
}

/// A `pattern` in the regex dialect `jsonschema` accepts (ECMA 262). The
/// schemas come from Java and Python tooling: their `\A` and `\Z` (start
/// and end of text) are `^` and `$` here, as no pattern is multi-line.
fn translated_pattern(pattern: &str) -> String {
    let mut translated = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            translated.push(c);
            continue;
        }
        match chars.next() {
            Some('A') => translated.push('^'),
            Some('Z') => translated.push('$'),
            Some(next) => {
                translated.push('\\');
                translated.push(next);
            }
            None => translated.push('\\'),
        }
    }
    translated
}

/// A pattern translated, or `None` if it cannot be compiled (checked only
/// with `Patterns::Checked`): one bad pattern should not cost the whole
/// type its checks.
fn usable_pattern(pattern: &str, patterns: Patterns) -> Option<String> {
    let translated = translated_pattern(pattern);
    (patterns == Patterns::Trusted || Pattern::get(&translated).usable()).then_some(translated)
}

/// A `$ref` as a pointer into the rewritten document, or `None` for a
/// reference to another document (left unchecked rather than fetched).
fn local_reference(reference: &str) -> Option<String> {
    let (document, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    if !(document.is_empty() || document == "resource-schema.json") {
        return None;
    }
    let segments: Vec<&str> = fragment.split('/').skip(1).collect();
    if fragment.is_empty() || !fragment.starts_with('/') {
        return Some("#".to_string() + fragment);
    }
    // Below every wrapped position the original now sits under `else`.
    let mut out: Vec<&str> = Vec::new();
    let mut index = 0;
    while index < segments.len() {
        let segment = segments[index];
        out.push(segment);
        index += 1;
        let wrapped = match segment {
            "properties" | "patternProperties" | "definitions" if index < segments.len() => {
                out.push(segments[index]);
                index += 1;
                true
            }
            "items" => {
                if segments
                    .get(index)
                    .is_some_and(|next| next.parse::<usize>().is_ok())
                {
                    out.push(segments[index]);
                    index += 1;
                }
                true
            }
            "additionalProperties" | "additionalItems" => true,
            _ => false,
        };
        if wrapped && index < segments.len() {
            out.push("else");
        }
    }
    Some(format!("#/{}", out.join("/")))
}
