//! Compiling only the parts of a provider schema (or of a schema of one
//! value, a `Fragment`) that a template uses.
//!
//! Compiling a whole provider schema costs milliseconds (the launch
//! template's has hundreds of subschemas and patterns), while a resource
//! sets a handful of its properties. So a schema is cut into nodes at the
//! two places where a subschema applies to one part of the value and to
//! nothing else: each entry of `properties`, and `items` when it is one
//! schema, unless the subschema is a small leaf that is cheaper to compile
//! with its parent. A node is compiled with those children replaced by `true` (so
//! `required`, `additionalProperties`, `dependencies`, `oneOf`... still see
//! every name), and a child is compiled the first time a value has the
//! property (or the array an item). The errors are those of the whole
//! schema compiled at once: a value's errors are its node's plus its
//! children's, each child validated where the whole schema would (an
//! intrinsic in a child's place passes, as the rewrite's `if` would let it).
//!
//! A `$ref` at a child's place is followed here, so the child is the node
//! of the schema it names, shared by every place that names it. So is an
//! entry of a node's `allOf` that is only a `$ref` (what a `$ref` with
//! siblings becomes): the node it names is validated on the same value,
//! as the whole schema's `allOf` would. A `$ref`
//! deeper inside a node (in an `anyOf` branch, say) is compiled with the
//! node: the definitions it needs are copied along. Anything outside this
//! scheme (a reference to the document root, outside `definitions` and
//! `properties`, a cycle of references, a node that does not compile) makes
//! the type fall back to the whole schema compiled at once, whose results
//! this scheme reproduces.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::{Map, Value};

use super::errors::report;
use super::rewrite::{Patterns, build, rewrite_with, root_schema, wrap_value};
use super::{SchemaError, escape, is_intrinsic, unescape};

/// The nodes of one type's schema compiled so far.
#[derive(Default)]
pub(super) struct Lazy {
    /// By the node's JSON pointer in the provider document (`""` is the
    /// root); `None` for a node this scheme cannot compile. The lock is
    /// held only to find a node's cell; the cell is filled outside it, once:
    /// a thread that wants a node another is compiling does other work
    /// until it is there rather than compiling it again.
    nodes: Mutex<HashMap<String, Arc<Cell>>>,
    root: Root,
    /// How many nodes have been compiled (see `SchemaSet::compilations`).
    compiled: AtomicUsize,
    /// Set once a value needed what this scheme cannot do: the schema is
    /// then compiled whole, and no later value walks the nodes only to
    /// give up again.
    given_up: AtomicBool,
}

/// What the document's root is.
#[derive(Default, Clone, Copy)]
enum Root {
    /// A provider schema, whose root's validation keywords are the schema
    /// of `Properties`.
    #[default]
    Provider,
    /// A schema of one value (`Fragment`): the document itself.
    Document,
}

/// Where one node goes once compiled.
type Cell = crate::parallel::Once<Option<Arc<Node>>>;

/// One compiled node and the children that are validated on their own.
struct Node {
    validator: Validator,
    /// Each object-form subschema of `properties`, by property name.
    properties: HashMap<String, Child>,
    /// The object-form `items`.
    items: Option<Child>,
    /// Each entry of `allOf` that is only a `$ref`: it applies to the
    /// value itself, which the whole schema's `allOf` reports as the
    /// entry's own errors.
    all_of: Vec<Child>,
}

/// A child of a node: where its subschema is, and its node once compiled.
/// The node is kept here as well as in `Lazy::nodes` (which shares it
/// between the places that refer to it), so that a value reaching the
/// child finds it without following references or taking the lock.
struct Child {
    pointer: String,
    node: OnceLock<Option<Arc<Node>>>,
}

impl Child {
    fn new(pointer: String) -> Child {
        Child {
            pointer,
            node: OnceLock::new(),
        }
    }

    fn node(&self, lazy: &Lazy, document: &Value) -> Option<Arc<Node>> {
        if let Some(node) = self.node.get() {
            return node.clone();
        }
        // Not filled by `get_or_init`: finding the node may wait for
        // another thread (see `parallel::Once`), and threads that find it
        // at once find the same one.
        let node =
            resolve(document, &self.pointer).and_then(|pointer| lazy.node(document, pointer));
        self.node.get_or_init(|| node).clone()
    }
}

impl Lazy {
    /// For a schema of one value rather than a provider schema.
    pub(super) fn fragment() -> Lazy {
        Lazy {
            root: Root::Document,
            ..Lazy::default()
        }
    }

    /// The errors of `instance` (a resource's `Properties`) against the
    /// provider schema `document`, unsorted; `None` when the schema is
    /// beyond this scheme and must be compiled whole (for this value and
    /// every later one: see [`Lazy::given_up`]).
    pub(super) fn validate(&self, document: &Value, instance: &Value) -> Option<Vec<SchemaError>> {
        if self.given_up() {
            return None;
        }
        let errors = self.errors(document, instance);
        if errors.is_none() {
            self.given_up.store(true, Ordering::Relaxed);
        }
        errors
    }

    /// Whether a value has needed the whole schema.
    pub(super) fn given_up(&self) -> bool {
        self.given_up.load(Ordering::Relaxed)
    }

    fn errors(&self, document: &Value, instance: &Value) -> Option<Vec<SchemaError>> {
        let root = self.node(document, String::new())?;
        let mut errors = Vec::new();
        self.walk(
            document,
            &root,
            instance,
            &mut String::new(),
            &mut errors,
            0,
        )?;
        Some(errors)
    }

    /// `hops`: how many `allOf` references in a row led to this node on
    /// the same value, to give up on a cycle.
    fn walk(
        &self,
        document: &Value,
        node: &Node,
        instance: &Value,
        path: &mut String,
        errors: &mut Vec<SchemaError>,
        hops: usize,
    ) -> Option<()> {
        if !node.validator.is_valid(instance) {
            let start = errors.len();
            for error in node.validator.iter_errors(instance) {
                report(error.to_owned(), errors);
            }
            for error in &mut errors[start..] {
                error.pointer.insert_str(0, path);
            }
        }
        if !node.all_of.is_empty() {
            if hops >= MAX_REFERENCES {
                return None;
            }
            for child in &node.all_of {
                let child = child.node(self, document)?;
                self.walk(document, &child, instance, path, errors, hops + 1)?;
            }
        }
        match instance {
            Value::Object(map) if !node.properties.is_empty() => {
                for (name, value) in map {
                    let Some(child) = node.properties.get(name) else {
                        continue;
                    };
                    if is_intrinsic(value) {
                        continue;
                    }
                    let child = child.node(self, document)?;
                    let length = path.len();
                    path.push('/');
                    path.push_str(&escape(name));
                    self.walk(document, &child, value, path, errors, 0)?;
                    path.truncate(length);
                }
            }
            Value::Array(values) => {
                let Some(items) = &node.items else {
                    return Some(());
                };
                for (index, value) in values.iter().enumerate() {
                    if is_intrinsic(value) {
                        continue;
                    }
                    let child = items.node(self, document)?;
                    let length = path.len();
                    path.push('/');
                    path.push_str(&index.to_string());
                    self.walk(document, &child, value, path, errors, 0)?;
                    path.truncate(length);
                }
            }
            _ => {}
        }
        Some(())
    }

    /// The node at `pointer` (no `$ref` to follow there), compiled once.
    fn node(&self, document: &Value, pointer: String) -> Option<Arc<Node>> {
        let cell = Arc::clone(self.lock().entry(pointer.clone()).or_default());
        cell.get_or_init(|| {
            self.compiled.fetch_add(1, Ordering::Relaxed);
            compile_node(document, &pointer, self.root).map(Arc::new)
        })
        .clone()
    }

    /// How many nodes have been compiled so far.
    pub(super) fn compilations(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Cell>>> {
        // A panic while holding the lock leaves the map as it was: every
        // insert is one call.
        self.nodes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How many `$ref`s in a row are followed before giving up on a cycle.
const MAX_REFERENCES: usize = 32;

/// The pointer of the schema that applies at `pointer` once `$ref`s are
/// followed (draft 7: a `$ref` replaces its siblings). A reference to
/// another document is dropped by the rewrite, so its siblings apply.
/// `None` for what only the whole schema can do.
fn resolve(document: &Value, pointer: &str) -> Option<String> {
    let mut pointer = pointer.to_string();
    for _ in 0..MAX_REFERENCES {
        let schema = document.pointer(&pointer)?;
        let Some(Value::String(reference)) = schema.get("$ref") else {
            return Some(pointer);
        };
        let (target, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        if !(target.is_empty() || target == "resource-schema.json") {
            return Some(pointer);
        }
        // The document root and percent-encoded pointers mean something
        // else here than in the whole schema.
        if !fragment.starts_with('/') || fragment.contains('%') {
            return None;
        }
        pointer = fragment.to_string();
    }
    None
}

/// Compiles the node at `pointer` (`""`: the root, for a provider schema
/// `Properties` itself).
fn compile_node(document: &Value, pointer: &str, root: Root) -> Option<Node> {
    let mut properties = HashMap::new();
    let mut items = None;
    let mut all_of = Vec::new();
    let mut cut = |key: &str, value: &Value| -> Value {
        match (key, value) {
            ("allOf", Value::Array(entries)) => {
                let kept: Vec<Value> = entries
                    .iter()
                    .enumerate()
                    .filter(|(index, entry)| {
                        let only_reference = entry
                            .as_object()
                            .is_some_and(|map| map.len() == 1 && map.contains_key("$ref"));
                        if only_reference {
                            all_of.push(Child::new(format!("{pointer}/allOf/{index}")));
                        }
                        !only_reference
                    })
                    .map(|(_, entry)| entry.clone())
                    .collect();
                // Draft 7 wants at least one entry.
                Value::Array(if kept.is_empty() {
                    vec![Value::Bool(true)]
                } else {
                    kept
                })
            }
            ("properties", Value::Object(entries)) => Value::Object(
                entries
                    .iter()
                    .map(|(name, schema)| {
                        if !worth_cutting(schema) {
                            return (name.clone(), schema.clone());
                        }
                        let at = format!("{pointer}/properties/{}", escape(name));
                        properties.insert(name.clone(), Child::new(at));
                        (name.clone(), Value::Bool(true))
                    })
                    .collect(),
            ),
            ("items", Value::Object(_)) if worth_cutting(value) => {
                items = Some(Child::new(format!("{pointer}/items")));
                Value::Bool(true)
            }
            _ => value.clone(),
        }
    };
    let shallow = if pointer.is_empty() {
        let mut root = match (root, document) {
            (Root::Provider, _) => root_schema(document, cut),
            (Root::Document, Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), cut(key, value)))
                    .collect(),
            ),
            (Root::Document, other) => other.clone(),
        };
        // The definitions a node refers to are copied beside it (see
        // `with_references`): the root's own copy of all of them would only
        // be rewritten and crawled at every compile, and never used.
        if let Value::Object(map) = &mut root {
            map.remove("definitions");
        }
        root
    } else {
        match document.pointer(pointer)? {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), cut(key, value)))
                    .collect(),
            ),
            other => other.clone(),
        }
    };
    let validator = [Patterns::Trusted, Patterns::Checked]
        .into_iter()
        .find_map(|patterns| {
            let schema = with_references(document, rewrite_with(&shallow, patterns), patterns)?;
            build(&schema).ok()
        })?;
    Some(Node {
        validator,
        properties,
        items,
        all_of,
    })
}

/// Whether a child's subschema is compiled on its own, when a value has it:
/// one that refers elsewhere, nests schemas of its own, has a pattern (a
/// regex is costly to compile) or a long `enum`. A small leaf (a type, a
/// length, a short `enum`) costs less inside its parent than as a node.
fn worth_cutting(schema: &Value) -> bool {
    const LONG_ENUM: usize = 16;
    let Value::Object(map) = schema else {
        return false;
    };
    map.iter().any(|(key, value)| match key.as_str() {
        "enum" => value
            .as_array()
            .is_some_and(|values| values.len() > LONG_ENUM),
        "$ref"
        | "pattern"
        | "properties"
        | "patternProperties"
        | "items"
        | "anyOf"
        | "oneOf"
        | "allOf"
        | "not"
        | "if"
        | "additionalProperties"
        | "dependencies" => true,
        _ => false,
    })
}

/// The key under which a node with references sits in the document it is
/// compiled from, beside the definitions it refers to.
const NODE_KEY: &str = "eksynthNode";

/// `schema` (rewritten) as a document that can be compiled on its own:
/// itself when it has no `$ref`, else a document whose root refers to it
/// and that holds, at the pointers the rewrite gave them, the definitions
/// and root properties it refers to (and those they refer to).
fn with_references(document: &Value, schema: Value, patterns: Patterns) -> Option<Value> {
    let mut pending = Vec::new();
    references(&schema, &mut pending);
    if pending.is_empty() {
        return Some(schema);
    }
    let mut out = Map::new();
    out.insert("$ref".to_string(), Value::String(format!("#/{NODE_KEY}")));
    let mut copied: HashSet<(String, String)> = HashSet::new();
    while let Some(reference) = pending.pop() {
        let mut segments = reference.strip_prefix("#/")?.splitn(3, '/');
        let section = segments.next()?;
        let name = unescape(segments.next()?);
        if !matches!(section, "definitions" | "properties") {
            return None;
        }
        if !copied.insert((section.to_string(), name.clone())) {
            continue;
        }
        let original = document.get(section)?.get(&name)?;
        let rewritten = wrap_value(rewrite_with(original, patterns));
        references(&rewritten, &mut pending);
        out.entry(section)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()?
            .insert(name, rewritten);
    }
    out.insert(NODE_KEY.to_string(), schema);
    Some(Value::Object(out))
}

/// Every `$ref` string in a rewritten schema.
fn references(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => out.push(reference.clone()),
                    _ => references(value, out),
                }
            }
        }
        Value::Array(values) => values.iter().for_each(|value| references(value, out)),
        _ => {}
    }
}
