//! CloudFormation resource provider schemas: embedded in the binary (or
//! read from a directory), compiled lazily once per resource type, and made
//! intrinsic-aware so that a `!Ref` where a string is expected passes while a
//! real error keeps its exact path.
//!
//! How a schema is rewritten before it is compiled is in `rewrite.rs`;
//! how `jsonschema`'s errors become messages, in `errors.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

mod archive;
mod attributes;
mod cfn_type;
mod document;
mod dynamic_reference;
pub(super) use dynamic_reference::is_dynamic_reference;
mod errors;
mod format;
mod keywords;
mod lazy;
mod pattern;
mod returned;
mod rewrite;

use errors::report;
use rewrite::{compile, compile_fragment};

/// The first error at each value (pointer), in order: several keywords can
/// fail on one value, and one mistake is one finding.
pub(crate) fn first_at_each_value(
    errors: impl IntoIterator<Item = SchemaError>,
) -> impl Iterator<Item = SchemaError> {
    let mut seen = std::collections::HashSet::new();
    errors
        .into_iter()
        .filter(move |error| seen.insert(error.pointer.clone()))
}

/// One schema violation inside a resource's `Properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaError {
    /// JSON pointer below `Properties`, e.g. `/LaunchTemplateData/BlockDeviceMappings/0/Ebs/VolumeType`.
    /// `""` is `Properties` itself. A missing required property is reported
    /// at the object that lacks it; an unknown property at the property.
    pub pointer: String,
    pub message: String,
    /// The JSON Schema keyword that failed (`enum`, `type`, `required`,
    /// `additionalProperties`...), for finding IDs. `schema` means the
    /// schema itself could not be compiled.
    pub keyword: String,
}

/// The intrinsic functions a property value may be instead of a literal.
const INTRINSICS: &[&str] = &[
    "Ref",
    "Fn::GetAtt",
    "Fn::Sub",
    "Fn::Join",
    "Fn::If",
    "Fn::Select",
    "Fn::Split",
    "Fn::Base64",
    "Fn::ImportValue",
    "Fn::FindInMap",
    "Fn::GetAZs",
    "Fn::Cidr",
    "Fn::Length",
    "Fn::ToJsonString",
    "Fn::Transform",
    "Fn::GetStackOutput",
];

/// One type's schema. Text is inflated, parsed and compiled on first use
/// only: most runs touch five types out of ~1900.
struct Entry {
    text: Text,
    document: crate::parallel::Once<Option<Value>>,
    compiled: OnceLock<Result<Validator, String>>,
    /// [`SchemaSet::attributes`], worked out on first use.
    attributes: OnceLock<Vec<String>>,
    /// [`SchemaSet::read_only_properties`], worked out on first use.
    read_only: OnceLock<Vec<String>>,
    /// The parts of the schema compiled so far (see `lazy.rs`).
    lazy: lazy::Lazy,
    /// How many times the whole schema has been compiled (see
    /// [`SchemaSet::compilations`]).
    whole_compilations: AtomicUsize,
}

enum Text {
    /// The type at this position of the embedded archive.
    Embedded(usize),
    Owned(String),
}

impl Entry {
    fn new(text: Text) -> Entry {
        Entry {
            text,
            document: crate::parallel::Once::new(),
            compiled: OnceLock::new(),
            attributes: OnceLock::new(),
            read_only: OnceLock::new(),
            lazy: lazy::Lazy::default(),
            whole_compilations: AtomicUsize::new(0),
        }
    }

    /// How many schemas, whole or in parts, have been compiled for the type.
    fn compilations(&self) -> usize {
        self.whole_compilations.load(Ordering::Relaxed) + self.lazy.compilations()
    }

    fn document(&self) -> Option<&Value> {
        self.document
            .get_or_init(|| {
                let parsed = match &self.text {
                    Text::Embedded(position) => archive::text(*position)
                        .ok()
                        .and_then(|text| document::parse(&text).ok()),
                    Text::Owned(text) => document::parse(text).ok(),
                };
                parsed.filter(Value::is_object)
            })
            .as_ref()
    }

    fn validator(&self) -> &Result<Validator, String> {
        // The document first: waiting for it inside this cell's init could
        // take up work that wants this same cell (see `parallel::Once`).
        let document = self.document();
        self.compiled.get_or_init(|| match document {
            Some(document) => {
                self.whole_compilations.fetch_add(1, Ordering::Relaxed);
                compile(document)
            }
            None => Err("the schema is not a JSON object".to_string()),
        })
    }
}

/// The schemas eksynth validates against.
pub struct SchemaSet {
    store: Store,
}

enum Store {
    /// One slot per type of the embedded archive, in its order, filled when
    /// the type is first looked at.
    /// Boxed, so that the ~1850 empty slots made at start are small.
    Embedded(Box<[OnceLock<Box<Entry>>]>),
    /// Read from a directory (`--schemas`).
    Dir(BTreeMap<String, Entry>),
}

impl SchemaSet {
    /// The schemas vendored in `schemas/` and embedded at build time.
    pub fn embedded() -> &'static SchemaSet {
        static SET: LazyLock<SchemaSet> = LazyLock::new(|| SchemaSet {
            store: Store::Embedded((0..archive::len()).map(|_| OnceLock::new()).collect()),
        });
        &SET
    }

    /// Reads every `*.json` file of `dir` whose `typeName` names a resource
    /// type: `schemas/resources.zip` unzipped, cfn-lint's
    /// `data/schemas/resources` (or `data/schemas`, whose `resources/` is
    /// used), or any folder of provider schemas whatever their file names. Other JSON files
    /// (indexes, manifests) are skipped. Two files for one type, a file that
    /// is not JSON, or no schema at all are errors.
    pub fn from_dir(dir: &Path) -> Result<SchemaSet, String> {
        let mut entries = read_dir_schemas(dir)?;
        if entries.is_empty() && dir.join("resources").is_dir() {
            entries = read_dir_schemas(&dir.join("resources"))?;
        }
        if entries.is_empty() {
            return Err(
                "no resource provider schema (a JSON file with a `typeName`) found".to_string(),
            );
        }
        Ok(SchemaSet {
            store: Store::Dir(entries),
        })
    }

    /// The resource types with a schema, sorted.
    pub fn types<'a>(&'a self) -> impl Iterator<Item = &'a str> {
        let (embedded, dir) = match &self.store {
            Store::Embedded(_) => (Some(archive::types().map(|name| -> &'a str { name })), None),
            Store::Dir(entries) => (None, Some(entries.keys().map(String::as_str))),
        };
        embedded
            .into_iter()
            .flatten()
            .chain(dir.into_iter().flatten())
    }

    /// Whether a schema exists for the type.
    pub fn has(&self, resource_type: &str) -> bool {
        match &self.store {
            Store::Embedded(_) => archive::position(resource_type).is_some(),
            Store::Dir(entries) => entries.contains_key(resource_type),
        }
    }

    /// The embedded text of the type's schema, byte for byte as vendored
    /// (`None` when the type is not embedded). Schemas read from a directory
    /// are not kept as text.
    pub fn embedded_text(resource_type: &str) -> Option<String> {
        archive::text(archive::position(resource_type)?)
            .ok()
            .map(String::from)
    }

    /// How many times a schema, whole or a part of one (see `lazy.rs`), has
    /// been compiled in this set so far: each is compiled once, however
    /// many values are validated against it, which tests check with this.
    pub fn compilations(&self) -> usize {
        match &self.store {
            Store::Embedded(slots) => slots
                .iter()
                .filter_map(OnceLock::get)
                .map(|entry| entry.compilations())
                .sum(),
            Store::Dir(entries) => entries.values().map(Entry::compilations).sum(),
        }
    }

    /// The type's entry, made on first use.
    fn entry(&self, resource_type: &str) -> Option<&Entry> {
        match &self.store {
            Store::Embedded(slots) => {
                let position = archive::position(resource_type)?;
                Some(slots[position].get_or_init(|| Box::new(Entry::new(Text::Embedded(position)))))
            }
            Store::Dir(entries) => entries.get(resource_type),
        }
    }

    /// Compiles the type's schema now (if not done already); `Err` says why
    /// it cannot be compiled. `None` when there is no schema for the type.
    pub fn check(&self, resource_type: &str) -> Option<Result<(), String>> {
        let entry = self.entry(resource_type)?;
        Some(entry.validator().as_ref().map(|_| ()).map_err(Clone::clone))
    }

    /// Validates a resource's `Properties` (long-form intrinsics). `None`
    /// when there is no schema for the type. The errors are sorted by
    /// pointer, then message. A schema that cannot be compiled gives one
    /// error with keyword `schema` rather than silently passing.
    pub fn validate(&self, resource_type: &str, properties: &Value) -> Option<Vec<SchemaError>> {
        let entry = self.entry(resource_type)?;
        // `Properties: !If [...]` is as legitimate as any intrinsic value.
        let intrinsic = is_intrinsic(properties);
        let masked = dynamic_reference::masked(properties);
        let properties = masked.as_ref().unwrap_or(properties);
        // Only the parts of the schema this value uses are compiled, unless
        // the schema is beyond that (then it is compiled whole, below).
        if !entry.lazy.given_up()
            && let Some(document) = entry.document()
        {
            if intrinsic {
                return Some(Vec::new());
            }
            if let Some(errors) = entry.lazy.validate(document, properties) {
                return Some(sorted(errors));
            }
        }
        let validator = match entry.validator() {
            Ok(validator) => validator,
            Err(reason) => {
                return Some(vec![SchemaError {
                    pointer: String::new(),
                    message: format!("the schema for `{resource_type}` cannot be used: {reason}"),
                    keyword: "schema".to_string(),
                }]);
            }
        };
        if intrinsic {
            return Some(Vec::new());
        }
        Some(errors(validator, properties))
    }
}

/// The errors of `value` against a whole compiled schema, sorted.
fn errors(validator: &Validator, value: &Value) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    for error in validator.iter_errors(value) {
        report(error.to_owned(), &mut errors);
    }
    sorted(errors)
}

/// Errors sorted by pointer, then message, without repeats.
pub(super) fn sorted(mut errors: Vec<SchemaError>) -> Vec<SchemaError> {
    errors.sort_by(|a, b| {
        (&a.pointer, &a.message, &a.keyword).cmp(&(&b.pointer, &b.message, &b.keyword))
    });
    errors.dedup();
    errors
}

/// A schema for one value inside a resource's `Properties` (cfn-lint's
/// extension schemas), compiled as a provider schema is: intrinsics pass,
/// and cfn-lint's keywords apply.
pub struct Fragment {
    document: Value,
    /// The parts of the schema compiled so far, as for a provider schema.
    lazy: lazy::Lazy,
    /// The whole schema compiled at once, when the parts cannot be.
    whole: OnceLock<Result<Validator, String>>,
}

impl Fragment {
    pub fn new(document: Value) -> Fragment {
        Fragment {
            document,
            lazy: lazy::Lazy::fragment(),
            whole: OnceLock::new(),
        }
    }

    fn whole(&self) -> &Result<Validator, String> {
        self.whole.get_or_init(|| compile_fragment(&self.document))
    }

    /// Why the schema cannot be used, if it cannot (compiling it whole),
    /// for tests that the vendored schemas can.
    #[cfg(test)]
    pub(crate) fn broken(&self) -> Option<&str> {
        self.whole().as_ref().err().map(String::as_str)
    }

    /// The errors of a value, pointers relative to it, sorted. Only the
    /// parts of the schema the value uses are compiled (see `lazy.rs`); a
    /// schema that cannot be compiled reports nothing (see
    /// [`Fragment::broken`]).
    pub fn validate(&self, value: &Value) -> Vec<SchemaError> {
        if is_intrinsic(value) {
            return Vec::new();
        }
        match self.lazy.validate(&self.document, value) {
            Some(errors) => sorted(errors),
            None => self.validate_whole(value),
        }
    }

    /// [`Fragment::validate`] against the whole schema compiled at once.
    fn validate_whole(&self, value: &Value) -> Vec<SchemaError> {
        match self.whole() {
            Ok(validator) if !is_intrinsic(value) => errors(validator, value),
            _ => Vec::new(),
        }
    }

    /// The errors of a value from the parts of the schema it uses and from
    /// the whole schema, for tests that the two agree.
    #[cfg(test)]
    pub(crate) fn both_ways(&self, value: &Value) -> (Option<Vec<SchemaError>>, Vec<SchemaError>) {
        let lazy = self.lazy.validate(&self.document, value).map(sorted);
        (lazy, self.validate_whole(value))
    }
}

/// Lists the types; the schemas themselves are too long to be useful here.
impl std::fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSet")
            .field("types", &self.types().collect::<Vec<_>>())
            .finish()
    }
}

/// The provider schemas among the `*.json` files of `dir`, by type.
fn read_dir_schemas(dir: &Path) -> Result<BTreeMap<String, Entry>, String> {
    let read = std::fs::read_dir(dir).map_err(|error| error.to_string())?;
    let mut files = Vec::new();
    for entry in read {
        let path = entry.map_err(|error| error.to_string())?.path();
        if path.is_file()
            && path
                .extension()
                .is_some_and(|extension| extension == "json")
        {
            files.push(path);
        }
    }
    // Sorted so that which file is "first" in an error does not depend on
    // the file system.
    files.sort();
    /// Only the name is read eagerly; the rest is parsed on first use.
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "typeName")]
        type_name: Option<Value>,
    }
    let mut entries = BTreeMap::new();
    let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in files {
        // Capped like every input, so that a stray file cannot fill the memory.
        let text = crate::source::read_file(&file)
            .map_err(|error| error.to_string())
            .and_then(|bytes| crate::syntax::text_of(bytes).map_err(|error| error.to_string()))
            .map_err(|error| format!("{}: {error}", file.display()))?;
        // Any JSON file may sit here (an index, a manifest): only an object
        // with a string `typeName` is a schema.
        let head: Head = match serde_json::from_str(&text) {
            Ok(head) => head,
            // Valid JSON of another shape.
            Err(error) if error.classify() == serde_json::error::Category::Data => continue,
            Err(error) => return Err(format!("{}: {error}", file.display())),
        };
        let Some(Value::String(type_name)) = head.type_name else {
            continue;
        };
        if let Some(first) = origin.get(&type_name) {
            return Err(format!(
                "{} and {} both define `{type_name}`",
                first.display(),
                file.display()
            ));
        }
        origin.insert(type_name.clone(), file);
        entries.insert(type_name, Entry::new(Text::Owned(text)));
    }
    Ok(entries)
}

/// A name as one segment of a JSON pointer (`~` and `/` escaped).
pub(super) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// One segment of a JSON pointer as the name it stands for.
pub(super) fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn is_intrinsic(value: &Value) -> bool {
    match value.as_object() {
        Some(map) if map.len() == 1 => map.keys().all(|key| INTRINSICS.contains(&key.as_str())),
        _ => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use serde_json::Map;

    use super::*;
    use crate::source::SourceFile;

    /// The templates of the validation corpus and of the examples.
    pub(crate) fn templates() -> Vec<(String, crate::cfn::Template)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut add = |dir: &Path| {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path
                    .extension()
                    .is_some_and(|extension| extension == "yaml" || extension == "json")
                {
                    paths.push(path);
                }
            }
        };
        add(&root.join("tests/validate"));
        for example in std::fs::read_dir(root.join("examples")).unwrap() {
            add(&example.unwrap().path());
        }
        paths.sort();
        let mut templates = Vec::new();
        for path in paths {
            let name = path.display().to_string();
            let file = Arc::new(SourceFile::new(
                name.clone(),
                std::fs::read_to_string(&path).unwrap(),
            ));
            let Ok(root) = crate::syntax::parse(&file) else {
                continue;
            };
            // Blueprints have no `Resources`.
            let template = crate::cfn::read::read_lenient(&file, &root).template;
            if !template.resources.is_empty() {
                templates.push((name, template));
            }
        }
        templates
    }

    /// The value with every literal changed one way (`how`), for errors at
    /// every depth: strings emptied, numbers negative, a stray key in every
    /// object, every list's first item repeated. Intrinsics are kept.
    pub(crate) fn mutated(value: &Value, how: usize) -> Value {
        match value {
            _ if is_intrinsic(value) => value.clone(),
            Value::String(_) if how == 0 => Value::String(String::new()),
            Value::Number(_) if how == 1 => Value::from(-1),
            Value::Object(map) => {
                let mut map: Map<String, Value> = map
                    .iter()
                    .map(|(key, value)| (key.clone(), mutated(value, how)))
                    .collect();
                if how == 2 {
                    map.insert("Stray".to_string(), Value::from(true));
                }
                Value::Object(map)
            }
            Value::Array(items) => {
                let mut items: Vec<Value> = items.iter().map(|item| mutated(item, how)).collect();
                if how == 3
                    && let Some(first) = items.first()
                {
                    items.push(first.clone());
                }
                Value::Array(items)
            }
            other => other.clone(),
        }
    }

    /// A schema the parts cannot follow (here a reference to the root) is
    /// compiled whole for the value that needs it, and for every value
    /// after, with the whole schema's errors.
    #[test]
    fn a_schema_beyond_the_parts_is_validated_whole_from_then_on() {
        let fragment = Fragment::new(serde_json::json!({
            "type": "object",
            "properties": {
                "Nested": {"$ref": "#"},
                "Size": {"type": "integer", "maximum": 3},
            },
        }));
        let small = serde_json::json!({"Size": 5});
        let nested = serde_json::json!({"Nested": {"Size": 9}});
        let (lazy, whole) = fragment.both_ways(&small);
        assert_eq!(lazy, Some(whole.clone()));
        assert_eq!(
            whole.iter().map(|e| e.pointer.as_str()).collect::<Vec<_>>(),
            ["/Size"]
        );
        assert!(!fragment.lazy.given_up());
        let errors = fragment.validate(&nested);
        assert!(fragment.lazy.given_up());
        assert_eq!(
            errors
                .iter()
                .map(|e| e.pointer.as_str())
                .collect::<Vec<_>>(),
            ["/Nested/Size"]
        );
        assert_eq!(fragment.both_ways(&small).0, None);
        assert_eq!(fragment.validate(&small), whole);
    }

    /// How much of a schema is compiled never changes a finding: every
    /// resource of the corpus (many with a deliberate mistake) and of the
    /// examples, as written and with its values changed every way
    /// `mutated` knows, gets the same errors from the nodes compiled lazily
    /// as from the whole schema compiled at once.
    #[test]
    fn compiling_lazily_gives_the_errors_of_the_whole_schema() {
        let set = SchemaSet::embedded();
        let mut compared = 0;
        let mut with_errors = 0;
        for (name, template) in templates() {
            for (id, resource) in &template.resources {
                let Some(entry) = set.entry(&resource.kind) else {
                    continue;
                };
                let written = crate::cfn::json::expr_map(&resource.properties);
                let variants = std::iter::once(written.clone())
                    .chain((0..4).map(|how| mutated(&written, how)));
                for properties in variants {
                    if is_intrinsic(&properties) {
                        continue;
                    }
                    let masked = dynamic_reference::masked(&properties);
                    let properties = masked.as_ref().unwrap_or(&properties);
                    let document = entry.document().unwrap();
                    let Some(lazy) = entry.lazy.validate(document, properties) else {
                        continue;
                    };
                    let whole = errors(entry.validator().as_ref().unwrap(), properties);
                    assert_eq!(sorted(lazy), whole, "{name}: {id}: {properties}");
                    compared += 1;
                    with_errors += usize::from(!whole.is_empty());
                }
            }
        }
        assert!(compared > 1000, "only {compared} values compared");
        assert!(with_errors > 500, "only {with_errors} values with errors");
    }
}
