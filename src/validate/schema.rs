//! CloudFormation resource provider schemas: embedded in the binary (or
//! read from a directory), compiled lazily once per resource type, and made
//! intrinsic-aware so that a `!Ref` where a string is expected passes while a
//! real error keeps its exact path.
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
//!   enum deep inside keeps its pointer.
//! - `type` becomes the custom keyword `cfnType`, which accepts what
//!   CloudFormation converts: numbers where a string is expected, numeric
//!   strings where a number is, `"true"`/`"false"` where a boolean is. A
//!   boolean where a string is expected is still an error: CloudFormation
//!   would turn it into `"true"`, which is almost never what was meant.
//!   (The other keywords still apply by JSON type: `"100"` passes as an
//!   integer but is not compared with `minimum`.)
//! - Patterns written for Java/Python get `\A`/`\Z` as `^`/`$`; a pattern
//!   the ECMA 262 dialect cannot express is dropped rather than failing the
//!   whole type.
//! - Array-form `dependencies` and draft 2019's `dependentRequired` (which
//!   draft 7 ignores) become `dependencies` with `{"required": [...]}`
//!   subschemas, so an error can name the property that needs the missing
//!   one.
//! - `$ref`s are kept local: `resource-schema.json#/...` means this same
//!   document, any other external reference is dropped (nothing is ever
//!   fetched), and pointers are adjusted for the `else` the rewrite inserts.
//! - Only the validation part of the document is compiled: `handlers`,
//!   `tagging`, `$schema` and cfn-lint's own keywords (`requiredXor`,
//!   `dependentExcluded`, ...) are left out or inert. `format` is not
//!   asserted: cfn-lint's formats (`AWS::EC2::VPC.Id`...) are its own.
//!
//! # Errors
//!
//! `anyOf`/`oneOf` failures are not reported as "not valid under any of the
//! schemas": the branch that got furthest (deepest error, then fewest
//! errors) is reported instead, and a choice between `required` lists
//! (`AWS::IAM::Policy` needs one of `Users`, `Groups`, `Roles`) becomes one
//! message naming them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, OnceLock};

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError, Validator};
use serde_json::{Map, Value, json};

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
];

/// The vendored schemas, one per type; `schemas/refresh.sh` lists the same
/// types and `tests/schema.rs` checks the two agree with `manifest.txt`.
const EMBEDDED: &[(&str, &str)] = &[
    (
        "AWS::AutoScaling::AutoScalingGroup",
        include_str!("../../schemas/resources/aws_autoscaling_autoscalinggroup.json"),
    ),
    (
        "AWS::AutoScaling::LifecycleHook",
        include_str!("../../schemas/resources/aws_autoscaling_lifecyclehook.json"),
    ),
    (
        "AWS::AutoScaling::ScheduledAction",
        include_str!("../../schemas/resources/aws_autoscaling_scheduledaction.json"),
    ),
    (
        "AWS::AutoScaling::WarmPool",
        include_str!("../../schemas/resources/aws_autoscaling_warmpool.json"),
    ),
    (
        "AWS::CloudFormation::CustomResource",
        include_str!("../../schemas/resources/aws_cloudformation_customresource.json"),
    ),
    (
        "AWS::EC2::LaunchTemplate",
        include_str!("../../schemas/resources/aws_ec2_launchtemplate.json"),
    ),
    (
        "AWS::EC2::PlacementGroup",
        include_str!("../../schemas/resources/aws_ec2_placementgroup.json"),
    ),
    (
        "AWS::EC2::SecurityGroup",
        include_str!("../../schemas/resources/aws_ec2_securitygroup.json"),
    ),
    (
        "AWS::EC2::SecurityGroupEgress",
        include_str!("../../schemas/resources/aws_ec2_securitygroupegress.json"),
    ),
    (
        "AWS::EC2::SecurityGroupIngress",
        include_str!("../../schemas/resources/aws_ec2_securitygroupingress.json"),
    ),
    (
        "AWS::EC2::Volume",
        include_str!("../../schemas/resources/aws_ec2_volume.json"),
    ),
    (
        "AWS::EKS::AccessEntry",
        include_str!("../../schemas/resources/aws_eks_accessentry.json"),
    ),
    (
        "AWS::EKS::Nodegroup",
        include_str!("../../schemas/resources/aws_eks_nodegroup.json"),
    ),
    (
        "AWS::IAM::InstanceProfile",
        include_str!("../../schemas/resources/aws_iam_instanceprofile.json"),
    ),
    (
        "AWS::IAM::ManagedPolicy",
        include_str!("../../schemas/resources/aws_iam_managedpolicy.json"),
    ),
    (
        "AWS::IAM::Policy",
        include_str!("../../schemas/resources/aws_iam_policy.json"),
    ),
    (
        "AWS::IAM::Role",
        include_str!("../../schemas/resources/aws_iam_role.json"),
    ),
    (
        "AWS::IAM::RolePolicy",
        include_str!("../../schemas/resources/aws_iam_rolepolicy.json"),
    ),
    (
        "AWS::Lambda::Function",
        include_str!("../../schemas/resources/aws_lambda_function.json"),
    ),
    (
        "AWS::Lambda::Permission",
        include_str!("../../schemas/resources/aws_lambda_permission.json"),
    ),
    (
        "AWS::Logs::LogGroup",
        include_str!("../../schemas/resources/aws_logs_loggroup.json"),
    ),
    (
        "AWS::SSM::Parameter",
        include_str!("../../schemas/resources/aws_ssm_parameter.json"),
    ),
];

/// One type's schema. Text is parsed and compiled on first use only: most
/// runs touch five types out of the twenty (or out of ~1900 with a cfn-lint
/// directory).
struct Entry {
    text: Text,
    document: OnceLock<Option<Value>>,
    compiled: OnceLock<Result<Validator, String>>,
    /// [`SchemaSet::attributes`], worked out on first use.
    attributes: OnceLock<Vec<String>>,
    /// [`SchemaSet::read_only_properties`], worked out on first use.
    read_only: OnceLock<Vec<String>>,
}

enum Text {
    Static(&'static str),
    Owned(String),
}

impl Entry {
    fn new(text: Text) -> Entry {
        Entry {
            text,
            document: OnceLock::new(),
            compiled: OnceLock::new(),
            attributes: OnceLock::new(),
            read_only: OnceLock::new(),
        }
    }

    fn document(&self) -> Option<&Value> {
        self.document
            .get_or_init(|| {
                let text = match &self.text {
                    Text::Static(text) => text,
                    Text::Owned(text) => text.as_str(),
                };
                serde_json::from_str(text).ok().filter(Value::is_object)
            })
            .as_ref()
    }

    fn validator(&self) -> &Result<Validator, String> {
        self.compiled.get_or_init(|| match self.document() {
            Some(document) => compile(document),
            None => Err("the schema is not a JSON object".to_string()),
        })
    }
}

/// The schemas eksynth validates against.
pub struct SchemaSet {
    entries: BTreeMap<String, Entry>,
}

impl SchemaSet {
    /// The schemas vendored in `schemas/` and embedded at build time.
    pub fn embedded() -> &'static SchemaSet {
        static SET: LazyLock<SchemaSet> = LazyLock::new(|| SchemaSet {
            entries: EMBEDDED
                .iter()
                .map(|(name, text)| (name.to_string(), Entry::new(Text::Static(text))))
                .collect(),
        });
        &SET
    }

    /// Reads every `*.json` file of `dir` whose `typeName` names a resource
    /// type: our `schemas/resources`, cfn-lint's `data/schemas/resources`
    /// (or `data/schemas`, whose `resources/` is used), or any folder of
    /// provider schemas whatever their file names. Other JSON files
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
        Ok(SchemaSet { entries })
    }

    /// The resource types with a schema, sorted.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Whether a schema exists for the type.
    pub fn has(&self, resource_type: &str) -> bool {
        self.entries.contains_key(resource_type)
    }

    /// Compiles the type's schema now (if not done already); `Err` says why
    /// it cannot be compiled. `None` when there is no schema for the type.
    pub fn check(&self, resource_type: &str) -> Option<Result<(), String>> {
        let entry = self.entries.get(resource_type)?;
        Some(entry.validator().as_ref().map(|_| ()).map_err(Clone::clone))
    }

    /// Validates a resource's `Properties` (long-form intrinsics). `None`
    /// when there is no schema for the type. The errors are sorted by
    /// pointer, then message. A schema that cannot be compiled gives one
    /// error with keyword `schema` rather than silently passing.
    pub fn validate(&self, resource_type: &str, properties: &Value) -> Option<Vec<SchemaError>> {
        let entry = self.entries.get(resource_type)?;
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
        // `Properties: !If [...]` is as legitimate as any intrinsic value.
        if is_intrinsic(properties) {
            return Some(Vec::new());
        }
        let mut errors = Vec::new();
        for error in validator.iter_errors(properties) {
            report(error.to_owned(), &mut errors);
        }
        errors.sort_by(|a, b| {
            (&a.pointer, &a.message, &a.keyword).cmp(&(&b.pointer, &b.message, &b.keyword))
        });
        errors.dedup();
        Some(errors)
    }

    /// Attribute names `Fn::GetAtt` may use (the schema's `readOnlyProperties`,
    /// dotted: `LatestVersionNumber`, `Endpoint.Address`), in schema order,
    /// then the [`SETTABLE_ATTRIBUTES`] of the type. Paths through arrays
    /// (`*`) are left out: they cannot be read with `Fn::GetAtt`. Worked out
    /// once per type.
    pub fn attributes(&self, resource_type: &str) -> Option<&[String]> {
        let entry = self.entries.get(resource_type)?;
        let paths = self.property_paths(resource_type, "readOnlyProperties")?;
        let names = entry.attributes.get_or_init(|| {
            let mut names = Vec::new();
            for path in paths {
                if path.iter().any(|segment| segment == "*") {
                    continue;
                }
                push_unique(&mut names, path.join("."));
            }
            for (kind, name) in SETTABLE_ATTRIBUTES {
                if *kind == resource_type {
                    push_unique(&mut names, name.to_string());
                }
            }
            names
        });
        Some(names)
    }

    /// Top-level property names that are read-only and so cannot be set.
    /// Worked out once per type.
    pub fn read_only_properties(&self, resource_type: &str) -> Option<&[String]> {
        let entry = self.entries.get(resource_type)?;
        let paths = self.property_paths(resource_type, "readOnlyProperties")?;
        let names = entry.read_only.get_or_init(|| {
            let mut names = Vec::new();
            for path in paths {
                if let Some(first) = path.into_iter().next() {
                    push_unique(&mut names, first);
                }
            }
            names
        });
        Some(names)
    }

    /// Property paths whose change replaces the resource (`createOnlyProperties`),
    /// in schema order: the schema's pointer below `/properties/`, segments
    /// unescaped and joined with `/`, `*` standing for any array item
    /// (`LaunchTemplateName`, `SecurityGroupIngress/*/FromPort`).
    pub fn create_only_properties(&self, resource_type: &str) -> Option<Vec<String>> {
        let paths = self.property_paths(resource_type, "createOnlyProperties")?;
        let mut names = Vec::new();
        for path in paths {
            push_unique(&mut names, path.join("/"));
        }
        Some(names)
    }

    /// The `/properties/...` pointers listed under `key`, as unescaped
    /// segments below `properties`; anything else is ignored.
    fn property_paths(&self, resource_type: &str, key: &str) -> Option<Vec<Vec<String>>> {
        let document = self.entries.get(resource_type)?.document()?;
        let listed = document.get(key).and_then(Value::as_array);
        Some(
            listed
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|pointer| pointer.strip_prefix("/properties/"))
                .filter(|rest| !rest.is_empty())
                .map(|rest| rest.split('/').map(unescape).collect())
                .collect(),
        )
    }
}

/// Attributes `Fn::GetAtt` reads that are not read-only properties, so that
/// the schemas do not list them: settable properties CloudFormation also
/// returns as attributes.
const SETTABLE_ATTRIBUTES: &[(&str, &str)] = &[
    ("AWS::EC2::SecurityGroup", "VpcId"),
    ("AWS::SSM::Parameter", "Type"),
    ("AWS::SSM::Parameter", "Value"),
    ("AWS::EKS::Nodegroup", "ClusterName"),
    ("AWS::EKS::Nodegroup", "NodegroupName"),
];

/// Lists the types; the schemas themselves are too long to be useful here.
impl std::fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSet")
            .field("types", &self.entries.keys().collect::<Vec<_>>())
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
        let text = std::fs::read_to_string(&file)
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

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn is_intrinsic(value: &Value) -> bool {
    match value.as_object() {
        Some(map) if map.len() == 1 => map.keys().all(|key| INTRINSICS.contains(&key.as_str())),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Compiling

fn compile(document: &Value) -> Result<Validator, String> {
    let schema = prepare(document);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .offline()
        .should_validate_formats(false)
        .with_keyword("cfnType", |_, value, _| Ok(Box::new(CfnType::new(value))))
        .build(&schema)
        .map_err(|error| error.to_string())
}

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
];

/// The provider schema rewritten for validating a resource's `Properties`.
fn prepare(document: &Value) -> Value {
    let mut root = Map::new();
    root.insert("type".to_string(), json!("object"));
    if let Value::Object(map) = document {
        for key in ROOT_KEYWORDS {
            if let Some(value) = map.get(*key) {
                root.insert((*key).to_string(), value.clone());
            }
        }
    }
    rewrite(&Value::Object(root))
}

/// The schema an intrinsic function call matches: one key, an intrinsic's name.
fn intrinsic_schema() -> Value {
    json!({
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "propertyNames": { "enum": INTRINSICS },
    })
}

/// A value position: an intrinsic passes, anything else meets the original.
fn wrap(schema: Value) -> Value {
    match schema {
        // `true` accepts intrinsics already; `false` rejects them too.
        Value::Bool(_) => schema,
        _ => json!({ "if": intrinsic_schema(), "then": true, "else": schema }),
    }
}

fn rewrite_map(value: &Value, wrapped: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, schema)| {
                    let schema = rewrite(schema);
                    (key.clone(), if wrapped { wrap(schema) } else { schema })
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn rewrite_list(value: &Value, wrapped: bool) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|schema| {
                    let schema = rewrite(schema);
                    if wrapped { wrap(schema) } else { schema }
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Rewrites one subschema and, recursively, every subschema in it (see the
/// module documentation). Keywords that hold no subschema are copied.
fn rewrite(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut dependencies = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "properties" | "definitions" => {
                out.insert(key.clone(), rewrite_map(value, true));
            }
            "patternProperties" => {
                let Value::Object(entries) = rewrite_map(value, true) else {
                    continue;
                };
                // A key pattern that cannot be used matches any name rather
                // than losing the whole schema.
                let entries = entries
                    .into_iter()
                    .map(|(pattern, schema)| {
                        (
                            usable_pattern(&pattern).unwrap_or_else(|| ".*".to_string()),
                            schema,
                        )
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(entries));
            }
            "additionalProperties" | "additionalItems" => {
                out.insert(key.clone(), wrap(rewrite(value)));
            }
            "items" => {
                let items = match value {
                    Value::Array(_) => rewrite_list(value, true),
                    _ => wrap(rewrite(value)),
                };
                out.insert(key.clone(), items);
            }
            "anyOf" | "oneOf" | "allOf" => {
                out.insert(key.clone(), rewrite_list(value, false));
            }
            "not" | "if" | "then" | "else" | "contains" | "propertyNames" => {
                out.insert(key.clone(), rewrite(value));
            }
            "dependencies" | "dependentRequired" | "dependentSchemas" => {
                let Value::Object(entries) = value else {
                    continue;
                };
                for (property, dependency) in entries {
                    let dependency = match dependency {
                        Value::Array(_) => json!({ "required": dependency }),
                        _ => rewrite(dependency),
                    };
                    dependencies.insert(property.clone(), dependency);
                }
            }
            "type" => {
                out.insert("cfnType".to_string(), value.clone());
            }
            "pattern" => {
                if let Some(pattern) = value.as_str().and_then(usable_pattern) {
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

/// A `pattern` in the regex dialect `jsonschema` accepts (ECMA 262), or
/// `None` if it cannot be. The schemas come from Java and Python tooling:
/// their `\A` and `\Z` (start and end of text) are `^` and `$` here, as no
/// pattern is multi-line. A pattern that still does not compile is left
/// out: one bad pattern should not cost the whole type its checks.
fn usable_pattern(pattern: &str) -> Option<String> {
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
    static CHECK: LazyLock<jsonschema::ValidationOptions> = LazyLock::new(|| {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .offline()
    });
    CHECK
        .build(&json!({ "pattern": translated }))
        .is_ok()
        .then_some(translated)
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

// ---------------------------------------------------------------------------
// `cfnType`: JSON Schema's `type` with CloudFormation's conversions

struct CfnType {
    types: Vec<String>,
}

impl CfnType {
    fn new(value: &Value) -> CfnType {
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

// ---------------------------------------------------------------------------
// Reporting

/// Turns one `jsonschema` error into `SchemaError`s: `anyOf`/`oneOf` into
/// the errors of their most relevant branch.
fn report(error: ValidationError<'static>, out: &mut Vec<SchemaError>) {
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
                let at = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
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
            let keyword = if keyword == "cfnType" {
                "type"
            } else {
                keyword.as_str()
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
fn show(value: &Value) -> String {
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
