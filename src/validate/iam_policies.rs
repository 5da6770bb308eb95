//! IAM policy documents against cfn-lint's policy grammar: identity
//! policies (a role's, user's or group's inline policies, managed policies),
//! trust policies (`AssumeRolePolicyDocument`) and resource policies (bucket,
//! queue, topic, key, domain and repository policies), vendored in
//! `schemas/iam/`.
//!
//! cfn-lint keeps the grammar common to every kind in `policy.json` and one
//! schema per kind that refers to it as `policy#/...`. Here each kind's
//! schema gets `policy.json` merged in as `definitions/policy`, its
//! references made local, and is compiled like an extension schema
//! (`schema::Fragment`: an intrinsic passes wherever a value goes, so an
//! `Fn::Sub` ARN, an `Fn::If` statement or a `Ref` in a `Resource` list is
//! never a false alarm). A resource whose properties hold a `Fn::If` has
//! its documents checked again in each branch, as `branches.rs` does for
//! the provider schemas, so a statement chosen by a condition is judged
//! like one written in its place. Only the parts of the grammar a document uses are
//! compiled (a statement's `Condition`, with its key patterns, only when a
//! statement has one). A policy written as a JSON string is parsed and
//! checked the same way; a string that is not JSON is left alone, as
//! CloudFormation passes it to IAM untouched.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::Finding;
use super::branches::{variants, written_pointer};
use super::extensions::select;
use super::schema::{Fragment, SchemaError, first_at_each_value};
use crate::cfn::Template;

/// The kinds of policy document, each with its own schema and finding.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Identity,
    Trust,
    Resource,
    /// A private ECR repository's policy: a resource policy without
    /// `Resource`.
    Repository,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Kind::Identity => "E5008",
            Kind::Trust => "E5009",
            Kind::Resource | Kind::Repository => "E5010",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Identity => "identity policy",
            Kind::Trust => "trust policy",
            Kind::Resource | Kind::Repository => "resource policy",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Kind::Identity => {
                "each statement of an identity policy has `Effect`, one of `Action`/`NotAction` and one of `Resource`/`NotResource`, and no `Principal`"
            }
            Kind::Trust => {
                "each statement of a trust policy has `Effect`, one of `Action`/`NotAction` and one of `Principal`/`NotPrincipal`, and no `Resource`"
            }
            Kind::Resource => {
                "each statement of a resource policy has `Effect`, one of `Action`/`NotAction`, one of `Resource`/`NotResource` and one of `Principal`/`NotPrincipal`"
            }
            Kind::Repository => {
                "each statement of a repository policy has `Effect`, one of `Action`/`NotAction` and one of `Principal`/`NotPrincipal`"
            }
        }
    }
}

/// Where policy documents sit, as cfn-lint's rules E3510, E3512, E3513 and
/// E3530 list them: `(resource type, path below Properties, kind)`, `*`
/// being every item of a list.
const SITES: &[(&str, &str, Kind)] = &[
    (
        "AWS::IAM::Group",
        "Policies/*/PolicyDocument",
        Kind::Identity,
    ),
    ("AWS::IAM::GroupPolicy", "PolicyDocument", Kind::Identity),
    ("AWS::IAM::ManagedPolicy", "PolicyDocument", Kind::Identity),
    ("AWS::IAM::Policy", "PolicyDocument", Kind::Identity),
    (
        "AWS::IAM::Role",
        "Policies/*/PolicyDocument",
        Kind::Identity,
    ),
    ("AWS::IAM::Role", "AssumeRolePolicyDocument", Kind::Trust),
    ("AWS::IAM::RolePolicy", "PolicyDocument", Kind::Identity),
    (
        "AWS::IAM::User",
        "Policies/*/PolicyDocument",
        Kind::Identity,
    ),
    ("AWS::IAM::UserPolicy", "PolicyDocument", Kind::Identity),
    ("AWS::SSO::PermissionSet", "InlinePolicy", Kind::Identity),
    ("AWS::KMS::Key", "KeyPolicy", Kind::Resource),
    (
        "AWS::OpenSearchService::Domain",
        "AccessPolicies",
        Kind::Resource,
    ),
    ("AWS::S3::BucketPolicy", "PolicyDocument", Kind::Resource),
    ("AWS::SNS::TopicPolicy", "PolicyDocument", Kind::Resource),
    ("AWS::SQS::QueuePolicy", "PolicyDocument", Kind::Resource),
    (
        "AWS::ECR::Repository",
        "RepositoryPolicyText",
        Kind::Repository,
    ),
];

const COMMON: &str = include_str!("../../schemas/iam/policy.json");

/// The kind's schema with the common grammar merged in, compiled once.
fn schema(kind: Kind) -> &'static Fragment {
    static IDENTITY: LazyLock<Fragment> =
        LazyLock::new(|| merged(include_str!("../../schemas/iam/policy_identity.json")));
    static TRUST: LazyLock<Fragment> =
        LazyLock::new(|| merged(include_str!("../../schemas/iam/policy_trust.json")));
    static RESOURCE: LazyLock<Fragment> =
        LazyLock::new(|| merged(include_str!("../../schemas/iam/policy_resource.json")));
    static REPOSITORY: LazyLock<Fragment> =
        LazyLock::new(|| merged(include_str!("../../schemas/iam/policy_resource_ecr.json")));
    match kind {
        Kind::Identity => &IDENTITY,
        Kind::Trust => &TRUST,
        Kind::Resource => &RESOURCE,
        Kind::Repository => &REPOSITORY,
    }
}

/// Where the common grammar goes inside a kind's schema.
const COMMON_AT: &str = "#/definitions/policy";

/// One document: the kind's schema, with `policy.json` as
/// `definitions/policy` and every reference pointing into the one document.
fn merged(text: &str) -> Fragment {
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Bool(false));
    let mut common = parse(COMMON);
    localize(&mut common, &|reference| {
        reference
            .strip_prefix('#')
            .map(|pointer| format!("{COMMON_AT}{pointer}"))
    });
    let mut document = parse(text);
    localize(&mut document, &|reference| {
        reference
            .strip_prefix("policy#")
            .map(|pointer| format!("{COMMON_AT}{pointer}"))
    });
    if let Value::Object(map) = &mut document {
        map.remove("$id");
        if let Value::Object(definitions) = map
            .entry("definitions")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            definitions.insert("policy".to_string(), common);
        }
    }
    Fragment::new(document)
}

/// Rewrites every `$ref` that `relocate` maps, and puts each `$ref` that
/// has sibling keywords under an `allOf` of its own: cfn-lint applies the
/// siblings (a statement list's `items` next to the `$ref` of one
/// statement), which draft 7 would ignore.
fn localize(schema: &mut Value, relocate: &dyn Fn(&str) -> Option<String>) {
    match schema {
        Value::Object(map) => {
            for value in map.values_mut() {
                localize(value, relocate);
            }
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(local) = relocate(reference)
            {
                map.insert("$ref".to_string(), Value::String(local));
            }
            // `cfnLint` only names the rules that use a definition.
            map.remove("cfnLint");
            if map.len() > 1
                && let Some(reference) = map.remove("$ref")
            {
                let mut only = Map::new();
                only.insert("$ref".to_string(), reference);
                map.insert("allOf".to_string(), Value::Array(vec![Value::Object(only)]));
            }
        }
        Value::Array(items) => {
            for item in items {
                localize(item, relocate);
            }
        }
        _ => {}
    }
}

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let sites: Vec<&(&str, &str, Kind)> = SITES
            .iter()
            .filter(|(kind, _, _)| *kind == resource.kind)
            .collect();
        if sites.is_empty() {
            continue;
        }
        let properties = crate::cfn::json::expr_map(&resource.properties);
        for (branch, variant) in variants(&properties) {
            let place = |pointer: &str| {
                let pointer = written_pointer(&properties, pointer, branch);
                format!("Resources/{id}/Properties{pointer}")
            };
            for (_, path, kind) in &sites {
                let mut documents = Vec::new();
                select(&variant, path, String::new(), &mut documents);
                for (at, document) in documents {
                    check_document(&resource.kind, *kind, document, &at, &place, findings);
                }
            }
        }
    }
}

/// Checks the document at `at` (a pointer below `Properties`); `place`
/// makes a pointer below `Properties` the template path of a finding.
fn check_document(
    resource_kind: &str,
    kind: Kind,
    document: &Value,
    at: &str,
    place: &dyn Fn(&str) -> String,
    findings: &mut Vec<Finding>,
) {
    let (errors, inside_text) = match document {
        // IAM reads the text; CloudFormation passes it on as it is.
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(parsed) => (schema(kind).validate(&parsed), true),
            Err(_) => return,
        },
        _ => (schema(kind).validate(document), false),
    };
    // S3 takes two statements with one `Sid` (cfn-lint skips it too).
    let taken = errors.into_iter().filter(|error| {
        !(resource_kind == "AWS::S3::BucketPolicy" && error.keyword == "uniqueKeys")
    });
    for error in first_at_each_value(taken) {
        findings.push(finding(kind, at, place, inside_text, error));
    }
}

fn finding(
    kind: Kind,
    at: &str,
    place: &dyn Fn(&str) -> String,
    inside_text: bool,
    error: SchemaError,
) -> Finding {
    let (path, message) = if inside_text {
        let inside = if error.pointer.is_empty() {
            "the document".to_string()
        } else {
            format!("`{}`", error.pointer)
        };
        (
            place(at),
            format!(
                "{} (JSON text), at {inside}: {}",
                kind.name(),
                error.message
            ),
        )
    } else {
        (
            place(&format!("{at}{}", error.pointer)),
            format!("{}: {}", kind.name(), error.message),
        )
    };
    Finding::new(kind.id(), path, message).help(kind.help())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_schema_compiles() {
        for kind in [
            Kind::Identity,
            Kind::Trust,
            Kind::Resource,
            Kind::Repository,
        ] {
            assert_eq!(schema(kind).broken(), None);
        }
    }

    /// Compiling a policy schema in parts never changes a finding: every
    /// policy document of the validation corpus and of the examples, as
    /// written and changed every way `mutated` knows, gets the same errors
    /// from the parts as from the whole schema.
    #[test]
    fn compiling_lazily_gives_the_errors_of_the_whole_schema() {
        use crate::validate::schema::tests::{mutated, templates};
        let mut compared = 0;
        let mut with_errors = 0;
        for (name, template) in templates() {
            for (id, resource) in &template.resources {
                let properties = crate::cfn::json::expr_map(&resource.properties);
                for (_, path, kind) in SITES.iter().filter(|(kind, ..)| *kind == resource.kind) {
                    let mut documents = Vec::new();
                    select(&properties, path, String::new(), &mut documents);
                    for (at, document) in documents {
                        let document = match document {
                            Value::String(text) => match serde_json::from_str(text) {
                                Ok(parsed) => parsed,
                                Err(_) => continue,
                            },
                            other => other.clone(),
                        };
                        let variants = std::iter::once(document.clone())
                            .chain((0..4).map(|how| mutated(&document, how)));
                        for variant in variants {
                            let (lazy, whole) = schema(*kind).both_ways(&variant);
                            assert_eq!(lazy, Some(whole.clone()), "{name}: {id}{at}: {variant}");
                            compared += 1;
                            with_errors += usize::from(!whole.is_empty());
                        }
                    }
                }
            }
        }
        assert!(compared > 100, "only {compared} documents compared");
        assert!(with_errors > 50, "only {with_errors} documents with errors");
    }
}
