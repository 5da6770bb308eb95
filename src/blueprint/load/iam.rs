//! IAM governance: the created role's name, path and permissions boundary,
//! the instance profile's path, inline policy statements, and the
//! blueprint-wide `iam` section that gives every role the stack creates a
//! boundary and a path. Names and paths are checked against IAM's limits
//! (<https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html>),
//! and every ARN is written so that it works in every partition.

use serde_json::{Map, Value as Json, json};

use super::raw::to_json;
use super::read::{Opt, first_column, opt_bool, opt_string};
use super::sources::decode_source;
use crate::blueprint::Source;
use crate::blueprint::decode::{Decoder, Fields, Located};
use crate::blueprint::field::{Field, Text, Ty};
use crate::blueprint::tags::ROLE_TAGS as MAX_ROLE_TAGS;
use crate::syntax::{Node, Value};

pub(in crate::blueprint) const IAM_FIELDS: &[Field] = &[
    Field::new(
        "cniUsesIrsa",
        Ty::Boolean,
        "Leave the CNI policy off the node role",
    ),
    Field::new(
        "ssmManagedInstance",
        Ty::Boolean,
        "Attach AmazonSSMManagedInstanceCore",
    ),
    Field::new(
        "extraManagedPolicies",
        Ty::STRINGS,
        "Extra managed policy ARNs, each starting `arn:${AWS::Partition}:`",
    )
    .long(
        "managed policy ARNs attached beside the standard ones, each starting \
        `arn:${AWS::Partition}:` and each listed once. A policy eksynth attaches \
        already (`AmazonEKSWorkerNodePolicy`, `AmazonEC2ContainerRegistryReadOnly`, \
        `AmazonEKS_CNI_Policy` unless `cniUsesIrsa`, `AmazonSSMManagedInstanceCore` \
        with `ssmManagedInstance`) may be listed, as eksctl and Terraform \
        configurations do: the role has it once",
    ),
    Field::new(
        "roleName",
        Ty::STRING,
        "An existing role (the stack creates none)",
    ),
    Field::new(
        "instanceProfileArn",
        Ty::Source,
        "An existing instance profile's ARN \
        (`arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/NAME`), \
        or `{parameter}` / `{import}` of one",
    ),
    Field::new(
        "createdRoleName",
        Ty::pattern("^[A-Za-z0-9+=,.@_-]+$", Some(64)),
        "The name of the role the stack creates (needs CAPABILITY_NAMED_IAM); not \
        in defaults",
    ),
    Field::new(
        "rolePath",
        Ty::pattern("^/([!-~]*/)?$", Some(512)),
        "The IAM path of the role the stack creates, or with `roleName` of the \
        existing role",
    ),
    Field::new(
        "instanceProfilePath",
        Ty::pattern("^/([!-~]*/)?$", Some(512)),
        "Self-managed: the instance profile's IAM path (default: the role's)",
    ),
    Field::new(
        "permissionsBoundary",
        Ty::Source,
        "A permissions boundary for the role the stack creates: a customer \
        managed policy's name, an ARN starting `arn:${AWS::Partition}:`, or \
        `{parameter}` / `{import}` of an ARN",
    ),
    Field::new(
        "policyStatements",
        Ty::Custom {
            schema: statements_schema,
            reads: "list of one or more [`policyStatement`](#policystatement)",
        },
        "IAM policy statements in an inline policy of the role the stack creates",
    ),
    Field::new(
        "roleTags",
        Ty::StringMap,
        "Tags of the role the stack creates (not with `roleName`)",
    )
    .long(
        "tags of the role the stack creates (its `Tags`), at most 50: keys of 1 \
        to 128 and values of up to 256 letters, digits, spaces and `_.:/=+-@`, \
        no key starting `aws:`. A group's tags merge over those of `defaults` \
        key by key. Refused with `roleName`: an existing role is tagged where \
        it is managed. Changed in place, without touching the nodes",
    ),
    Field::new(
        "roleDescription",
        Ty::Text(Text {
            pattern: Some("^[\\u0009\\u000A\\u000D\\u0020-\\u007E\\u00A1-\\u00FF]*$"),
            min_length: None,
            max_length: Some(1000),
            numbers: false,
        }),
        "The description of the role the stack creates (not with `roleName`)",
    )
    .long(
        "the description of the role the stack creates (its `Description`): at \
        most 1,000 characters, printable ASCII and Latin-1 (with tabs and line \
        breaks), as IAM takes it. Refused with `roleName`. Changed in place, \
        without touching the nodes",
    ),
];

/// `iam.policyStatements` in the JSON Schema.
fn statements_schema(doc: &str) -> Json {
    json!({"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/policyStatement"}, "description": doc})
}

/// The blueprint-wide `iam` section: what every role the stack creates
/// gets, node roles (unless a group says otherwise) and the aws-auth
/// provider's role alike.
pub(in crate::blueprint) const TOP_IAM_FIELDS: &[Field] = &[
    Field::new(
        "permissionsBoundary",
        Ty::Source,
        "A permissions boundary for the role the stack creates: a customer \
        managed policy's name, an ARN starting `arn:${AWS::Partition}:`, or \
        `{parameter}` / `{import}` of an ARN",
    ),
    Field::new(
        "rolePath",
        Ty::pattern("^/([!-~]*/)?$", Some(512)),
        "The IAM path of the roles the stack creates",
    ),
];

/// What an action or resource list of a statement takes.
const RESOLVED_IN_STATEMENTS: &str = "One or several; `${AWS::Partition}`, `${AWS::AccountId}`, \
    `${AWS::Region}`, `${AWS::URLSuffix}` and `${AWS::StackName}` are resolved";

/// The keys of an IAM policy statement, in IAM's own spelling.
pub(in crate::blueprint) const STATEMENT_FIELDS: &[Field] = &[
    Field::new("Sid", Ty::pattern("^[A-Za-z0-9]+$", None), "")
        .long("the statement's ID: letters and digits"),
    Field::new("Effect", Ty::OneOf(|| EFFECTS.to_vec()), "")
        .required_when("yes")
        .long("whether the statement allows or denies"),
    Field::new("Action", Ty::OneOrMany(&Ty::STRING), RESOLVED_IN_STATEMENTS),
    Field::new(
        "NotAction",
        Ty::OneOrMany(&Ty::STRING),
        RESOLVED_IN_STATEMENTS,
    ),
    Field::new(
        "Resource",
        Ty::OneOrMany(&Ty::STRING),
        RESOLVED_IN_STATEMENTS,
    ),
    Field::new(
        "NotResource",
        Ty::OneOrMany(&Ty::STRING),
        RESOLVED_IN_STATEMENTS,
    ),
    Field::new(
        "Condition",
        Ty::Mapping,
        "Condition operators, as IAM writes them",
    ),
];

/// What a policy statement's `Effect` may be.
const EFFECTS: &[&str] = &["Allow", "Deny"];
/// The pseudo parameters a policy statement may use: `Fn::Sub` resolves
/// them; any other `${...}` would be taken for a template reference.
const STATEMENT_VARIABLES: &[&str] = &[
    "${AWS::Partition}",
    "${AWS::AccountId}",
    "${AWS::Region}",
    "${AWS::URLSuffix}",
    "${AWS::StackName}",
];

#[derive(Clone, Default)]
pub(super) struct IamSpec {
    pub(super) cni_uses_irsa: Opt<bool>,
    pub(super) ssm_managed_instance: Opt<bool>,
    pub(super) extra_managed_policies: Opt<Vec<String>>,
    pub(super) role_name: Opt<String>,
    pub(super) instance_profile_arn: Opt<Source>,
    pub(super) created_role_name: Opt<String>,
    pub(super) role_path: Opt<String>,
    pub(super) instance_profile_path: Opt<String>,
    /// The boundary's ARN text (a policy name already made an ARN).
    pub(super) permissions_boundary: Opt<Source>,
    pub(super) policy_statements: Opt<Vec<serde_json::Value>>,
    pub(super) role_tags: Vec<(Located<String>, Located<String>)>,
    pub(super) role_description: Opt<String>,
}

impl IamSpec {
    /// A group's `iam` over the one of `defaults`, field by field.
    pub(super) fn over(self, d: IamSpec) -> IamSpec {
        IamSpec {
            cni_uses_irsa: self.cni_uses_irsa.or(d.cni_uses_irsa),
            ssm_managed_instance: self.ssm_managed_instance.or(d.ssm_managed_instance),
            extra_managed_policies: self.extra_managed_policies.or(d.extra_managed_policies),
            role_name: self.role_name.or(d.role_name),
            instance_profile_arn: self.instance_profile_arn.or(d.instance_profile_arn),
            created_role_name: self.created_role_name.or(d.created_role_name),
            role_path: self.role_path.or(d.role_path),
            instance_profile_path: self.instance_profile_path.or(d.instance_profile_path),
            permissions_boundary: self.permissions_boundary.or(d.permissions_boundary),
            policy_statements: self.policy_statements.or(d.policy_statements),
            role_tags: {
                let mut tags = d.role_tags;
                for (key, value) in self.role_tags {
                    match tags.iter_mut().find(|(k, _)| k.value == key.value) {
                        Some(slot) => *slot = (key, value),
                        None => tags.push((key, value)),
                    }
                }
                tags
            },
            role_description: self.role_description.or(d.role_description),
        }
    }
}

pub(super) fn decode_iam(d: &mut Decoder, node: &Node) -> IamSpec {
    let Some(mut f) = d.fields("iam", node, IAM_FIELDS) else {
        return IamSpec::default();
    };
    let spec = IamSpec {
        cni_uses_irsa: opt_bool(d, &mut f, "iam.", "cniUsesIrsa"),
        ssm_managed_instance: opt_bool(d, &mut f, "iam.", "ssmManagedInstance"),
        extra_managed_policies: f
            .get("extraManagedPolicies")
            .and_then(|n| extra_managed_policies(d, n)),
        role_name: opt_string(d, &mut f, "iam.", "roleName"),
        instance_profile_arn: instance_profile_arn(d, &mut f),
        created_role_name: role_name(d, &mut f),
        role_path: path(d, &mut f, "rolePath", "iam.rolePath"),
        instance_profile_path: path(d, &mut f, "instanceProfilePath", "iam.instanceProfilePath"),
        permissions_boundary: permissions_boundary(d, &mut f, "iam.permissionsBoundary"),
        policy_statements: f.get("policyStatements").and_then(|n| statements(d, n)),
        role_tags: f.get("roleTags").map_or_else(Vec::new, |n| role_tags(d, n)),
        role_description: role_description(d, &mut f),
    };
    f.finish(d, "`iam`");
    spec
}

/// `iam.roleTags`: at most 50, each within IAM's lengths and characters
/// (the provider schema's `Tag` of `AWS::IAM::Role`; IAM User Guide,
/// "Tagging IAM resources").
fn role_tags(d: &mut Decoder, node: &Node) -> Vec<(Located<String>, Located<String>)> {
    let tags = d.string_map("iam.roleTags", node);
    if tags.len() > MAX_ROLE_TAGS {
        let message = format!(
            "`iam.roleTags` has {} tags; IAM keeps at most {MAX_ROLE_TAGS} on a role",
            tags.len()
        );
        d.error(node.span, message);
    }
    for (key, value) in &tags {
        crate::blueprint::limits::check_tag(d, key, value);
        for (text, what) in [(key, "key"), (value, "value")] {
            if !crate::blueprint::tags::iam_text(&text.value) {
                let message = format!(
                    "the {what} of role tag `{}` holds a character IAM refuses",
                    key.value
                );
                d.error(text.span, message).help =
                    Some("IAM tags take letters, digits, spaces and `_.:/=+-@` only".into());
            }
        }
    }
    tags
}

/// `iam.roleDescription`: up to 1,000 characters of what IAM takes.
fn role_description(d: &mut Decoder, f: &mut Fields<'_>) -> Opt<String> {
    let description = opt_string(d, f, "iam.", "roleDescription")?;
    let allowed = |c: char| matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{a1}'..='\u{ff}');
    if let Some(c) = description.value.chars().find(|&c| !allowed(c)) {
        let message = format!(
            "`iam.roleDescription` holds `{}`, which IAM refuses in a description",
            c.escape_default()
        );
        d.error(description.span, message).help =
            Some("IAM takes printable ASCII and Latin-1 characters, tabs and line breaks".into());
        return None;
    }
    let length = description.value.chars().count();
    if length > 1000 {
        let message =
            format!("`iam.roleDescription` has {length} characters; IAM takes at most 1000");
        d.error(description.span, message);
        return None;
    }
    Some(description)
}

/// `iam.extraManagedPolicies`: policy ARNs, each written with
/// `${AWS::Partition}` (a literal partition is an error at that item, as
/// in every IAM field: the template must deploy in every partition), each
/// once. A standard policy eksynth attaches itself may be listed too: it
/// is attached once (see `eks::iam`).
fn extra_managed_policies(d: &mut Decoder, node: &Node) -> Opt<Vec<String>> {
    let items = d.string_list("iam.extraManagedPolicies", node)?;
    let mut ok = true;
    for (index, policy) in items.iter().enumerate() {
        if items[..index].iter().any(|p| p.value == policy.value) {
            ok = false;
            d.error(
                policy.span,
                format!("`iam.extraManagedPolicies` lists `{}` twice", policy.value),
            )
            .help = Some("list each policy once: a role has each managed policy once".into());
        } else if !policy.value.starts_with("arn:") {
            ok = false;
            d.error(policy.span, format!("`{}` is not a policy ARN", policy.value))
                .help = Some(
                "write the full ARN, `arn:${AWS::Partition}:iam::aws:policy/NAME` for an AWS managed policy".into(),
            );
        } else if partition_problem(d, policy, "iam.extraManagedPolicies") {
            ok = false;
        }
    }
    ok.then(|| {
        Located::new(
            items.into_iter().map(|policy| policy.value).collect(),
            node.span,
        )
    })
}

#[derive(Clone, Default)]
pub(in crate::blueprint) struct TopIam {
    pub(in crate::blueprint) permissions_boundary: Opt<Source>,
    pub(in crate::blueprint) role_path: Opt<String>,
}

pub(super) fn decode_top_iam(d: &mut Decoder, node: &Node) -> TopIam {
    let Some(mut f) = d.fields("iam", node, TOP_IAM_FIELDS) else {
        return TopIam::default();
    };
    let top = TopIam {
        permissions_boundary: permissions_boundary(d, &mut f, "iam.permissionsBoundary"),
        role_path: path(d, &mut f, "rolePath", "iam.rolePath"),
    };
    f.finish(d, "the blueprint's `iam`");
    top
}

/// A permissions boundary: a customer managed policy's name (in the
/// account the stack is deployed to) or a policy ARN, returned as the ARN
/// text, with `${AWS::Partition}` (and `${AWS::AccountId}` for a name); or
/// a policy ARN from a template parameter or an import, as `kmsKeyId` may
/// be.
pub(super) fn permissions_boundary(
    d: &mut Decoder,
    f: &mut Fields<'_>,
    field: &str,
) -> Opt<Source> {
    let node = f.get("permissionsBoundary")?;
    if let Value::Map(_) = node.value {
        return decode_source(d, field, node);
    }
    let text = d.string(field, node)?;
    policy_arn(d, text, field).map(|arn| Located::new(Source::Literal(arn.value), arn.span))
}

/// An existing instance profile: an ARN, which may name
/// `${AWS::Partition}` and `${AWS::AccountId}` (written `Fn::Sub`), or
/// `{parameter}` / `{import}` of one.
pub(super) fn instance_profile_arn(d: &mut Decoder, f: &mut Fields<'_>) -> Opt<Source> {
    const FIELD: &str = "iam.instanceProfileArn";
    let node = f.get("instanceProfileArn")?;
    if let Value::Map(_) = node.value {
        return decode_source(d, FIELD, node);
    }
    let text = d.string(FIELD, node)?;
    let shape = text
        .value
        .strip_prefix("arn:")
        .and_then(|rest| rest.split_once(":iam::"))
        .and_then(|(partition, rest)| Some((partition, rest.split_once(":instance-profile/")?)));
    let ok = shape.is_some_and(|(partition, (account, name))| {
        let partition_ok = partition == "${AWS::Partition}"
            || (!partition.is_empty()
                && partition
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-'));
        let account_ok = account == "${AWS::AccountId}"
            || (account.len() == 12 && account.chars().all(|c| c.is_ascii_digit()));
        partition_ok && account_ok && !name.is_empty() && !name.ends_with('/')
    });
    if !ok {
        d.error(text.span, format!("`{FIELD}` `{}` is not an instance profile ARN", text.value))
            .help = Some("an instance profile ARN looks like `arn:${AWS::Partition}:iam::123456789012:instance-profile/NAME` (or `${AWS::AccountId}` for the stack's account), or write `{parameter: Name}` or `{import: ExportName}`".into());
        return None;
    }
    Some(Located::new(Source::Literal(text.value), text.span))
}

/// A literal permissions boundary, as the ARN text.
fn policy_arn(d: &mut Decoder, text: Located<String>, field: &str) -> Opt<String> {
    let value = &text.value;
    if !value.starts_with("arn:") {
        if !is_iam_name(value, 128) {
            d.error(text.span, format!("`{value}` is neither a policy name nor a policy ARN"))
                .help = Some("write a customer managed policy's name (up to 128 letters, digits and `+=,.@_-`) or its ARN, `arn:${AWS::Partition}:iam::${AWS::AccountId}:policy/NAME`".into());
            return None;
        }
        return Some(Located::new(
            format!("arn:${{AWS::Partition}}:iam::${{AWS::AccountId}}:policy/{value}"),
            text.span,
        ));
    }
    if partition_problem(d, &text, field) {
        return None;
    }
    let policy = value
        .strip_prefix("arn:${AWS::Partition}:iam::")
        .and_then(|rest| rest.split_once(":policy/"))
        .filter(|(account, name)| {
            let account_ok = *account == "aws"
                || *account == "${AWS::AccountId}"
                || (account.len() == 12 && account.chars().all(|c| c.is_ascii_digit()));
            account_ok && !name.is_empty() && !name.ends_with('/')
        });
    if policy.is_none() {
        d.error(text.span, format!("`{value}` is not an IAM policy ARN"))
            .help = Some("a policy ARN looks like `arn:${AWS::Partition}:iam::123456789012:policy/NAME` (or `${AWS::AccountId}` for the stack's account)".into());
        return None;
    }
    Some(text)
}

/// A literal partition in an ARN (`arn:aws:`) is refused: the same
/// template must deploy in China and GovCloud.
pub(super) fn partition_problem(d: &mut Decoder, text: &Located<String>, field: &str) -> bool {
    let Some(rest) = text.value.strip_prefix("arn:") else {
        return false;
    };
    if rest.starts_with("${AWS::Partition}:") {
        return false;
    }
    d.error(
        text.span,
        format!("`{field}` names a partition: `{}`", text.value),
    )
    .help = Some(
        "write `arn:${AWS::Partition}:...` so that the template deploys in every partition".into(),
    );
    true
}

/// An IAM path: `/`, or `/`-delimited text of printable ASCII, at most
/// 512 characters.
pub(super) fn path(d: &mut Decoder, f: &mut Fields<'_>, key: &str, field: &str) -> Opt<String> {
    let text = d.string(field, f.get(key)?)?;
    let value = &text.value;
    let ok = value.len() <= 512
        && value.starts_with('/')
        && value.ends_with('/')
        && value.chars().all(|c| ('\u{21}'..='\u{7e}').contains(&c));
    if !ok {
        d.error(text.span, format!("`{value}` is not an IAM path"))
            .help = Some(
            "an IAM path starts and ends with `/` (`/` alone, or `/platform/nodes/`), with at most 512 printable ASCII characters and no spaces".into(),
        );
        return None;
    }
    Some(text)
}

/// The name of the role the stack creates: IAM allows 64 letters, digits
/// and `+=,.@_-`.
pub(super) fn role_name(d: &mut Decoder, f: &mut Fields<'_>) -> Opt<String> {
    let text = d.string("iam.createdRoleName", f.get("createdRoleName")?)?;
    if !is_iam_name(&text.value, 64) {
        let message = if text.value.len() > 64 {
            format!(
                "role name `{}` is {} characters long; IAM allows 64",
                text.value,
                text.value.len()
            )
        } else {
            format!("`{}` is not a valid IAM role name", text.value)
        };
        d.error(text.span, message).help =
            Some("use up to 64 letters, digits and `+=,.@_-`".into());
        return None;
    }
    Some(text)
}

fn is_iam_name(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c))
}

/// `iam.policyStatements`: IAM policy statements, put in an inline policy
/// of the node role.
pub(super) fn statements(d: &mut Decoder, node: &Node) -> Opt<Vec<Json>> {
    let mut out = Vec::new();
    let mut ok = true;
    for item in d.list("iam.policyStatements", node) {
        match statement(d, item) {
            Some(statement) => out.push(statement),
            None => ok = false,
        }
    }
    if out.is_empty() && ok {
        d.error(node.span, "`iam.policyStatements` is empty").help =
            Some("list at least one statement, or leave the field out".into());
        return None;
    }
    ok.then(|| Located::new(out, node.span))
}

fn statement(d: &mut Decoder, node: &Node) -> Option<Json> {
    let mut f = d.fields("iam.policyStatements[]", node, STATEMENT_FIELDS)?;
    let errors = d.diagnostics.iter().filter(|x| x.is_error()).count();
    let mut out = Map::new();
    // Missing keys are reported after unknown ones, so that a misspelt
    // key is reported once, with its suggestion.
    let mut missing: Vec<(&str, String, String)> = Vec::new();
    if let Some(sid) = f.get("Sid").and_then(|n| d.string("Sid", n)) {
        if sid.value.is_empty() || !sid.value.chars().all(|c| c.is_ascii_alphanumeric()) {
            d.error(sid.span, format!("`Sid` `{}` is not valid", sid.value))
                .help = Some("a statement ID holds only letters and digits".into());
        }
        out.insert("Sid".into(), Json::String(sid.value));
    }
    match f.get("Effect") {
        Some(n) => {
            if let Some(effect) = d.string("Effect", n) {
                if !EFFECTS.contains(&effect.value.as_str()) {
                    d.error(
                        effect.span,
                        format!(
                            "`Effect` is `{}`; IAM takes `Allow` or `Deny`",
                            effect.value
                        ),
                    );
                }
                out.insert("Effect".into(), Json::String(effect.value));
            }
        }
        None => {
            if !f.given("Effect") {
                missing.push((
                    "Effect",
                    "a policy statement has no `Effect`".into(),
                    "add `Effect: Allow` (or `Deny`)".into(),
                ));
            }
        }
    }
    for (positive, negative, example) in [
        ("Action", "NotAction", "`Action: s3:GetObject`"),
        (
            "Resource",
            "NotResource",
            "`Resource: arn:${AWS::Partition}:s3:::my-bucket/*`",
        ),
    ] {
        let (pos, neg) = (f.get(positive), f.get(negative));
        match (pos, neg) {
            (Some(_), Some(n)) => {
                d.error(
                    n.span,
                    format!("a statement has both `{positive}` and `{negative}`"),
                )
                .help = Some("keep one of them".into());
            }
            (None, None) => {
                if !f.given(positive) && !f.given(negative) {
                    missing.push((
                        positive,
                        format!("a policy statement has no `{positive}`"),
                        format!("add {example} (or `{negative}`)"),
                    ));
                }
            }
            (Some(n), None) => {
                out.extend(one_or_many(d, positive, n).map(|v| (positive.to_string(), v)));
            }
            (None, Some(n)) => {
                out.extend(one_or_many(d, negative, n).map(|v| (negative.to_string(), v)));
            }
        }
    }
    if let Some(n) = f.get("Condition") {
        if matches!(n.value, Value::Map(_)) {
            if let Some(condition) = to_json(d, "Condition", n) {
                check_strings(d, n);
                out.insert("Condition".into(), condition);
            }
        } else {
            d.wrong_type("Condition", n, "a mapping of condition operators");
        }
    }
    let misspelt = f.finish(d, "a policy statement");
    for (field, message, help) in missing {
        if !misspelt.contains(&field) {
            d.error(first_column(node.span), message).help = Some(help);
        }
    }
    let after = d.diagnostics.iter().filter(|x| x.is_error()).count();
    (after == errors).then_some(Json::Object(out))
}

/// A string or a list of strings, each checked for the variables
/// `Fn::Sub` would read and for a literal partition.
fn one_or_many(d: &mut Decoder, field: &str, node: &Node) -> Option<Json> {
    let items = match &node.value {
        Value::Seq(_) => {
            let items = d.string_list(field, node)?;
            if items.is_empty() {
                d.error(node.span, format!("`{field}` is empty"));
                return None;
            }
            items
        }
        _ => vec![d.string(field, node)?],
    };
    for item in &items {
        check_text(d, field, item);
    }
    let mut values: Vec<Json> = items.into_iter().map(|s| Json::String(s.value)).collect();
    Some(match (&node.value, values.len()) {
        (Value::Seq(_), _) | (_, 2..) => Json::Array(values),
        _ => values.remove(0),
    })
}

fn check_strings(d: &mut Decoder, node: &Node) {
    match &node.value {
        Value::String(s) => check_text(d, "Condition", &Located::new(s.clone(), node.span)),
        Value::Seq(items) => items.iter().for_each(|n| check_strings(d, n)),
        Value::Map(entries) => entries.iter().for_each(|(_, n)| check_strings(d, n)),
        _ => {}
    }
}

fn check_text(d: &mut Decoder, field: &str, text: &Located<String>) {
    if partition_problem(d, text, field) {
        return;
    }
    let mut rest = text.value.as_str();
    while let Some(start) = rest.find("${") {
        let tail = &rest[start..];
        let known = STATEMENT_VARIABLES.iter().find(|v| tail.starts_with(**v));
        match known {
            Some(variable) => rest = &tail[variable.len()..],
            None => {
                let variable = tail.find('}').map_or(tail, |end| &tail[..=end]);
                d.error(
                    text.span,
                    format!("`{field}` holds `{variable}`, which eksynth cannot resolve"),
                )
                .help = Some(format!(
                    "the statement is written through `Fn::Sub`, which resolves {}; IAM policy variables such as `${{aws:username}}` are not supported here",
                    STATEMENT_VARIABLES.join(", ")
                ));
                return;
            }
        }
    }
}

/// The fields that shape the role and profile the stack creates mean
/// nothing for an existing role, and a managed group's instance profile
/// is made by EKS.
pub(super) fn check_created_role(d: &mut Decoder, iam: &IamSpec, existing: bool, managed: bool) {
    if existing {
        let fields = [
            (
                "createdRoleName",
                iam.created_role_name.as_ref().map(|v| v.span),
            ),
            (
                "permissionsBoundary",
                iam.permissions_boundary.as_ref().map(|v| v.span),
            ),
            (
                "instanceProfilePath",
                iam.instance_profile_path.as_ref().map(|v| v.span),
            ),
            ("roleTags", iam.role_tags.first().map(|(key, _)| key.span)),
            (
                "roleDescription",
                iam.role_description.as_ref().map(|v| v.span),
            ),
        ];
        for (field, span) in fields {
            if let Some(span) = span {
                d.error(
                    span,
                    format!("`iam.{field}` applies to the role the stack creates, but `iam.roleName` names an existing one"),
                )
                .help = Some("remove it, or remove `iam.roleName` to let the stack create the role".into());
            }
        }
        if let Some(statements) = &iam.policy_statements {
            d.error(
                statements.span,
                "`iam.policyStatements` applies to the role the stack creates, but `iam.roleName` names an existing one",
            )
            .help = Some("grant them where the existing role is managed".into());
        }
    } else if managed && let Some(path) = &iam.instance_profile_path {
        d.error(
            path.span,
            "managed node groups make their own instance profile",
        )
        .help = Some("EKS creates it; remove `iam.instanceProfilePath`".into());
    }
}
