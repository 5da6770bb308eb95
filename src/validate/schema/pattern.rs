//! `pattern` as a keyword of ours, whose regex is compiled the first time
//! a string meets it, once per process for each distinct pattern text.
//!
//! Compiling a regex costs far more than matching one, and most of the
//! patterns of a compiled schema never see a string: they sit in branches
//! and properties a resource does not set, and the same texts (an ARN, an
//! ID) recur across types, nodes and kinds of IAM policy. So the keyword
//! holds the text, and the regex is built on the first match by
//! `jsonschema` itself, as a one-keyword schema: the regex dialect, its
//! translation and its optimisations are exactly those of the built-in
//! keyword. A pattern that cannot be compiled matches everything, as a
//! pattern the rewrite leaves out would. The error is the built-in's, word
//! for word (see `errors.rs`).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use jsonschema::{Keyword, ValidationError, Validator};
use serde_json::{Map, Value};

use super::errors::show;

/// One pattern text and its regex, compiled on first use.
pub(super) struct Pattern {
    text: String,
    compiled: OnceLock<Option<Validator>>,
}

impl Pattern {
    /// The process-wide pattern for `text`.
    pub(super) fn get(text: &str) -> Arc<Pattern> {
        static PATTERNS: LazyLock<Mutex<HashMap<String, Arc<Pattern>>>> =
            LazyLock::new(Mutex::default);
        // A panic while holding the lock leaves the map as it was: every
        // insert is one call.
        let mut patterns = PATTERNS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pattern) = patterns.get(text) {
            return Arc::clone(pattern);
        }
        let pattern = Arc::new(Pattern {
            text: text.to_string(),
            compiled: OnceLock::new(),
        });
        patterns.insert(text.to_string(), Arc::clone(&pattern));
        pattern
    }

    /// Whether the pattern compiles (compiling it now if not done yet).
    pub(super) fn usable(&self) -> bool {
        self.compiled().is_some()
    }

    fn compiled(&self) -> Option<&Validator> {
        self.compiled
            .get_or_init(|| {
                static OPTIONS: LazyLock<jsonschema::ValidationOptions> = LazyLock::new(|| {
                    jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft7)
                        .offline()
                });
                let mut schema = Map::with_capacity(1);
                schema.insert("pattern".to_string(), Value::String(self.text.clone()));
                OPTIONS.build(&Value::Object(schema)).ok()
            })
            .as_ref()
    }

    /// Whether `value` matches: anything but a string does, as does
    /// anything when the pattern cannot be compiled.
    fn matches(&self, value: &Value) -> bool {
        !value.is_string() || self.compiled().is_none_or(|regex| regex.is_valid(value))
    }
}

/// The `pattern` keyword, for `jsonschema::options().with_keyword`. A value
/// that is not a string (which the rewrite never leaves) checks nothing.
pub(super) fn keyword(value: &Value) -> Box<dyn for<'i> Keyword<'i>> {
    Box::new(PatternKeyword(value.as_str().map(Pattern::get)))
}

struct PatternKeyword(Option<Arc<Pattern>>);

impl<'i> Keyword<'i> for PatternKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match &self.0 {
            Some(pattern) if !pattern.matches(instance) => Err(ValidationError::custom(format!(
                "{} does not match the pattern \"{}\"",
                show(instance),
                pattern.text
            ))),
            _ => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.0
            .as_ref()
            .is_none_or(|pattern| pattern.matches(instance))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Pattern;
    use crate::validate::schema::SchemaError;
    use crate::validate::schema::errors::report;
    use crate::validate::schema::rewrite::build;

    fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<SchemaError> {
        let mut out = Vec::new();
        for error in validator.iter_errors(value) {
            report(error.to_owned(), &mut out);
        }
        out
    }

    /// A regex is compiled when a string first meets its pattern, not
    /// when the schema is compiled nor for a value of another type.
    #[test]
    fn a_pattern_is_compiled_when_a_string_first_meets_it() {
        let text = "^only-here-[0-9]+$";
        let validator = build(&json!({ "pattern": text })).unwrap();
        let pattern = Pattern::get(text);
        assert!(validator.is_valid(&json!(12)));
        assert!(pattern.compiled.get().is_none());
        assert!(validator.is_valid(&json!("only-here-1")));
        assert!(pattern.compiled.get().is_some());
        assert!(!validator.is_valid(&json!("elsewhere")));
    }

    /// The keyword matches and reports as `jsonschema`'s own does, and a
    /// pattern it cannot compile matches everything.
    #[test]
    fn the_keyword_agrees_with_the_built_in_one() {
        let builtin = |pattern: &str| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .build(&json!({ "pattern": pattern }))
                .unwrap()
        };
        for (pattern, values) in [
            ("^ami-[0-9a-f]{8}$", vec!["ami-0123abcd", "ami-x", ""]),
            (r"^\S+$", vec!["a b", "ab"]),
            ("^(get|put)$", vec!["get", "post"]),
            (r"^\d+(?!x)", vec!["12x", "12", "x"]),
        ] {
            let ours = build(&json!({ "pattern": pattern })).unwrap();
            let theirs = builtin(pattern);
            for value in values {
                let value = json!(value);
                assert_eq!(
                    errors(&ours, &value),
                    errors(&theirs, &value),
                    "{pattern} {value}"
                );
            }
        }
        let broken = build(&json!({ "pattern": "(" }));
        assert!(broken.is_err(), "the meta-schema still checks the syntax");
        let keyword = super::keyword(&json!("[z-a]"));
        assert!(keyword.is_valid(&json!("anything")));
    }
}
