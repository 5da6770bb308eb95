//! Validation of a CloudFormation template, offline: every resource against
//! its provider schema, and the checks a schema cannot express (references,
//! quotas, update policies, signal wiring, security defaults, tags).
//!
//! It works on the `cfn::Template` model only, so a template read from any
//! file is checked the same way as one eksynth synthesized.

mod attributes;
mod backup;
mod branches;
mod catalogs;
mod cfn_init;
mod cloudfront;
mod dynamodb;
mod eks;
mod extensions;
mod functions;
mod iam_policies;
mod identifiers;
mod modules;
mod network;
mod parameters;
mod policies;
mod quotas;
mod references;
mod role_paths;
pub mod schema;
mod security;
mod serverless;
mod structure;
mod tags;
mod values;
mod volumes;

use crate::cfn::{Expr, Template};
pub use schema::SchemaSet;
use std::fmt::Write as _;

/// A finding's level is a diagnostic's severity: findings become
/// diagnostics unchanged.
pub use crate::diagnostic::Severity as Level;

/// One finding about a template.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Stable identifier, e.g. `E2001`; suppressions name it.
    pub id: &'static str,
    pub level: Level,
    /// Where in the template, e.g. `Resources/NodeGroup/Properties/MaxSize`.
    pub path: String,
    pub message: String,
    pub help: Option<String>,
}

impl Finding {
    pub(crate) fn new(
        id: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        let level = Level::of_id(id);
        Finding {
            id,
            level,
            path: path.into(),
            message: message.into(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }

    /// The logical ID of the resource the finding is about, if any.
    pub fn resource(&self) -> Option<&str> {
        let rest = self.path.strip_prefix("Resources/")?;
        Some(rest.split('/').next().unwrap_or(rest))
    }
}

/// Every finding ID, its level and what it means: the reference for
/// suppressions and for the book's findings reference.
pub const FINDINGS: &[(&str, &str)] = &[
    ("E0001", "the blueprint itself is invalid"),
    (
        "E0002",
        "the file cannot be read as a CloudFormation template",
    ),
    (
        "I0004",
        "the template declares a transform: what the transform creates or rewrites is not checked",
    ),
    (
        "I0005",
        "a legal construct beyond the checks (`Rules`, an intrinsic function eksynth does not know, an intrinsic in a deletion policy): not checked",
    ),
    (
        "E0006",
        "`Fn::ForEach` without the `AWS::LanguageExtensions` transform that expands it",
    ),
    (
        "W0003",
        "a blueprint parameter that no resource uses, so no template declares it",
    ),
    (
        "E1001",
        "a property value is not one of the values the schema allows",
    ),
    ("E1002", "a property value has the wrong type"),
    ("E1003", "a required property is missing"),
    ("E1004", "a property the resource type does not have"),
    (
        "E1005",
        "a property value breaks another schema rule (pattern, length, range...)",
    ),
    ("E1006", "a read-only property is set"),
    (
        "E1007",
        "an invalid `DeletionPolicy` or `UpdateReplacePolicy`",
    ),
    (
        "I1008",
        "a module: the resources it is made of are not checked",
    ),
    (
        "I1009",
        "a local path that `aws cloudformation package` replaces with an S3 location",
    ),
    (
        "E1010",
        "properties that exclude each other are set together",
    ),
    ("E1011", "`Tags` on a module"),
    (
        "E1012",
        "a property value not in the format its schema names (an IP address, an EC2 ID)",
    ),
    (
        "W1000",
        "the resource type has no schema, so its properties were not checked",
    ),
    ("E2001", "`Ref` to something that does not exist"),
    ("E2002", "`Fn::GetAtt` of a resource that does not exist"),
    (
        "E2003",
        "`Fn::GetAtt` of an attribute the resource type does not have",
    ),
    ("E2004", "`Fn::Sub` variable that does not resolve"),
    ("E2005", "`DependsOn` names a resource that does not exist"),
    ("E2006", "a condition that does not exist"),
    ("E2007", "resources depend on each other in a cycle"),
    ("E2008", "`Fn::FindInMap` of a mapping that does not exist"),
    (
        "E2009",
        "the name of an `Fn::ImportValue` is a list, an object, a boolean or another import",
    ),
    (
        "E2010",
        "an `Fn::GetStackOutput` that is not an object of `StackName`, `OutputName` and optionally `Region` and `RoleArn`",
    ),
    (
        "E2011",
        "SAM's `IgnoreGlobals` names a property that the `Globals` section does not set for the resource's type",
    ),
    (
        "E2012",
        "conditions that refer to each other in a cycle (`Condition: X` inside `Fn::And`, `Fn::Or`, `Fn::Not`)",
    ),
    (
        "E2013",
        "a SAM resource without a property the SAM transform requires (an API's `StageName`)",
    ),
    ("E3001", "more than 500 resources"),
    ("E3002", "more than 200 parameters"),
    ("E3003", "more than 200 outputs"),
    ("E3004", "an invalid logical ID"),
    (
        "I3005",
        "the template is larger than 51,200 bytes: `deploy` and `package` upload it to S3",
    ),
    ("E3006", "the template is larger than 1 MB"),
    ("E3007", "user data larger than 16 KB"),
    ("E3008", "user data not encoded with `Fn::Base64`"),
    (
        "W3009",
        "more than 80% of the resource, parameter or output limit",
    ),
    (
        "E4001",
        "`MinInstancesInService` is not lower than `MaxSize`",
    ),
    (
        "E4002",
        "an Auto Scaling group's or a node group's sizes out of order (`MinSize`, `DesiredCapacity` or `DesiredSize`, `MaxSize`)",
    ),
    ("W4003", "a rolling update together with a replacing update"),
    (
        "E4004",
        "a creation policy waits for more signals than the group launches",
    ),
    (
        "E4005",
        "a malformed ISO 8601 duration (`PauseTime`, `Timeout`)",
    ),
    (
        "E4006",
        "the group waits for signals its instances never send, or send for another resource",
    ),
    (
        "W4007",
        "a rolling update pauses for signals for less time than a node has to signal",
    ),
    (
        "W5001",
        "IMDSv1 allowed (`HttpTokens` not `required`, or computed by a function that can give `optional`)",
    ),
    (
        "W5002",
        "IMDS hop limit above 1: containers can reach the node's credentials",
    ),
    ("E5003", "IMDS hop limit outside 1 to 64"),
    ("W5004", "an unencrypted EBS volume"),
    (
        "E5005",
        "SSH open to the whole internet: one CIDR or several of one security group covering every address, or a managed node group's `RemoteAccess` key without source security groups",
    ),
    ("W5006", "a hard-coded `arn:aws:` partition"),
    ("W5007", "an IAM policy that allows every action"),
    (
        "W5020",
        "kubelet: anonymous requests allowed (`authentication.anonymous.enabled`, `--anonymous-auth`)",
    ),
    (
        "W5021",
        "kubelet: webhook (bearer token) authentication off",
    ),
    ("W5022", "kubelet: `AlwaysAllow` authorization"),
    ("W5023", "kubelet: the unauthenticated read-only port open"),
    ("W5024", "kubelet: `protectKernelDefaults` off"),
    (
        "W5025",
        "Bottlerocket: a superpowered host container (the admin container enabled)",
    ),
    (
        "W5026",
        "Bottlerocket: kernel lockdown off (`kernel.lockdown: none`)",
    ),
    (
        "W5027",
        "the node role given `AdministratorAccess` or `IAMFullAccess`",
    ),
    (
        "W5028",
        "the node role allowed `iam:PassRole`, `iam:CreateAccessKey` or `iam:AttachRolePolicy` on every resource",
    ),
    (
        "W5029",
        "a node-role trust policy that any AWS principal may assume",
    ),
    (
        "W5030",
        "user data that turns IMDSv1 back on at boot (`modify-instance-metadata-options --http-tokens optional`)",
    ),
    (
        "I5031",
        "a managed node group on an existing launch template (`launchTemplate`): eksynth cannot check its IMDS settings or volume encryption",
    ),
    (
        "E5008",
        "an IAM identity policy that IAM's policy grammar refuses",
    ),
    (
        "E5009",
        "an IAM trust policy (`AssumeRolePolicyDocument`) that IAM's policy grammar refuses",
    ),
    (
        "E5010",
        "a resource policy (bucket, queue, topic, key, repository...) that IAM's policy grammar refuses",
    ),
    (
        "E5011",
        "a security group rule's CIDR that EC2 and the provider schema refuse or read as another block (spaces, leading zeros, host bits set)",
    ),
    ("E6001", "a tag key that appears twice in one list of tags"),
    (
        "E6002",
        "an EBS volume's size, IOPS or throughput outside what its type and size allow",
    ),
    (
        "E7001",
        "a security group rule for `tcp`, `udp` or `icmp` without `FromPort` and `ToPort`",
    ),
    (
        "W7002",
        "ports on a security group rule whose protocol has none",
    ),
    (
        "E7003",
        "`-1` as only one of a security group rule's `FromPort` and `ToPort`",
    ),
    (
        "E7004",
        "inline Lambda code (`ZipFile`) without a Node.js or Python `Runtime`",
    ),
    (
        "E7005",
        "a block device mapping without `Ebs` whose `VirtualName` is no instance store name",
    ),
    ("E7006", "an EC2 instance type that does not exist"),
    (
        "E7007",
        "a Lambda runtime with which functions can no longer be created or updated",
    ),
    ("W7008", "a deprecated Lambda runtime"),
    (
        "E7009",
        "a DynamoDB table's `AttributeDefinitions` and key schemas disagree",
    ),
    (
        "E7010",
        "an AWS Backup lifecycle that deletes recovery points less than 90 days after moving them to cold storage",
    ),
    (
        "E7011",
        "a role with a `Path` other than `/` taken by `Ref` where its ARN is built from its name (CodeBuild's `ServiceRole`)",
    ),
    (
        "E7012",
        "a Route 53 record its record set's `Type` does not take",
    ),
    ("E7013", "`TTL` on a Route 53 alias record"),
    (
        "E7014",
        "a bucket ACL other than the owner's without `OwnershipControls`",
    ),
    (
        "E7015",
        "a CloudFront alias that is not a lowercase host name",
    ),
    ("E8001", "an access entry type EKS does not know"),
    (
        "E8002",
        "`KubernetesGroups` or `AccessPolicies` on an access entry that is not `STANDARD`",
    ),
    (
        "E8003",
        "an access entry username with a prefix EKS reserves",
    ),
    (
        "E8004",
        "a launch template's instance profile given by both `Arn` and `Name`",
    ),
    (
        "E8005",
        "an Auto Scaling group with neither subnets nor Availability Zones",
    ),
    ("W8006", "nodes with public IP addresses"),
    (
        "E9001",
        "a resource attribute (`CreationPolicy`, `UpdatePolicy`, `Metadata`) with a key or value its resource type does not take",
    ),
    ("E9002", "a parameter type CloudFormation does not know"),
    (
        "E9003",
        "a parameter default that its own constraints refuse",
    ),
    ("W9004", "a parameter nothing uses"),
    ("W9005", "a condition nothing uses"),
    (
        "E9006",
        "a condition that is not a boolean function or another condition",
    ),
    ("E9007", "two outputs export the same name"),
    (
        "E9008",
        "a logical ID that names both a parameter and a resource",
    ),
    (
        "E9009",
        "two resources of one type with the same primary identifier (two roles with one `RoleName`)",
    ),
    (
        "E9010",
        "`${Name}` in a plain string, where only `Fn::Sub` fills it in",
    ),
    ("E9011", "an output whose value is not a string"),
    (
        "E9012",
        "an `AWS::CloudFormation::Init` configuration that `cfn-init` does not read as meant",
    ),
    ("E9013", "a template without resources"),
];

/// Finding IDs that were renamed, and their new names: a suppression of
/// an old ID still applies to the new one, and is told of the rename.
pub const RENAMED: &[(&str, &str)] = &[("W3005", "I3005")];

/// The current name of a finding ID, old names included.
pub fn current_id(id: &str) -> Option<&'static str> {
    FINDINGS
        .iter()
        .map(|(known, _)| *known)
        .find(|known| *known == id)
        .or_else(|| {
            RENAMED
                .iter()
                .find(|(old, _)| *old == id)
                .map(|(_, new)| *new)
        })
}

/// What validation needs besides the template.
pub struct Context<'a> {
    pub schemas: &'a SchemaSet,
    /// The size of the template file in bytes, when known.
    pub template_bytes: Option<usize>,
    /// How to split a template that is too large, for the help of the
    /// findings about its size: a blueprint says it in its own terms.
    pub split_help: &'a str,
}

/// How to split a template that is too large, said of any template.
pub const SPLIT_HELP: &str = "split the node groups into several stacks";

/// Validates a template against the schemas and every other check. The
/// findings come sorted by path, then ID.
pub fn validate(template: &Template, context: &Context<'_>) -> Vec<Finding> {
    let schemas = context.schemas;
    let resources: Vec<(&String, &crate::cfn::Resource)> = template.resources.iter().collect();
    // The checks are independent, and their findings are sorted at the end:
    // they run side by side, the schema checks (most of the work) first and
    // in slices of resources, so that the work spreads evenly.
    let mut work: Vec<Check<'_>> = resources
        .chunks(RESOURCES_PER_CHECK)
        .map(|slice| -> Check<'_> {
            Box::new(move |findings: &mut Vec<Finding>| {
                for (id, resource) in slice {
                    schema_check(id, resource, schemas, findings);
                }
            })
        })
        .collect();
    work.extend([
        Box::new(|f: &mut Vec<Finding>| iam_policies::check(template, f)) as Check<'_>,
        Box::new(|f: &mut Vec<Finding>| references::check(template, schemas, f)),
        Box::new(|f: &mut Vec<Finding>| quotas::check(template, context, f)),
        Box::new(|f: &mut Vec<Finding>| policies::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| security::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| network::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| tags::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| volumes::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| extensions::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| dynamodb::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| backup::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| cloudfront::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| modules::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| functions::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| catalogs::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| serverless::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| role_paths::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| attributes::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| cfn_init::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| parameters::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| structure::check(template, f)),
        Box::new(|f: &mut Vec<Finding>| identifiers::check(template, schemas, f)),
        Box::new(|f: &mut Vec<Finding>| eks::check(template, f)),
    ]);
    let mut findings: Vec<Finding> = crate::parallel::map(&work, |check| {
        let mut findings = Vec::new();
        check(&mut findings);
        findings
    })
    .into_iter()
    .flatten()
    .collect();
    // A Lambda runtime the provider schema does not list has its `E1001`;
    // what the lifecycle table says of it would repeat that one mistake.
    let unlisted: std::collections::HashSet<String> = findings
        .iter()
        .filter(|finding| finding.id == "E1001")
        .map(|finding| finding.path.clone())
        .collect();
    findings.retain(|finding| {
        !matches!(finding.id, "W7008" | "E7007") || !unlisted.contains(&finding.path)
    });
    findings.sort_by(|a, b| (&a.path, a.id, &a.message).cmp(&(&b.path, b.id, &b.message)));
    findings.dedup();
    findings
}

/// One piece of [`validate`]'s work: it adds what it finds.
type Check<'a> = Box<dyn Fn(&mut Vec<Finding>) + Sync + 'a>;

/// Resources per piece of the schema checks.
const RESOURCES_PER_CHECK: usize = 16;

/// Whether a resource type is a module (`Org::Service::Name::MODULE`),
/// which CloudFormation replaces with the resources it is made of.
fn is_module(kind: &str) -> bool {
    kind.ends_with("::MODULE")
}

/// The properties where `aws cloudformation package` takes a local path
/// and puts the S3 location of what it uploads: the type, the property, and
/// whether the package step writes an object (`{S3Bucket, S3Key}`) rather
/// than a URL.
const PACKAGED: &[(&str, &str)] = &[
    ("AWS::Lambda::Function", "Code"),
    ("AWS::Lambda::LayerVersion", "Content"),
    ("AWS::ApiGateway::RestApi", "BodyS3Location"),
    ("AWS::AppSync::GraphQLSchema", "DefinitionS3Location"),
    ("AWS::AppSync::Resolver", "RequestMappingTemplateS3Location"),
    (
        "AWS::AppSync::Resolver",
        "ResponseMappingTemplateS3Location",
    ),
    (
        "AWS::AppSync::FunctionConfiguration",
        "RequestMappingTemplateS3Location",
    ),
    (
        "AWS::AppSync::FunctionConfiguration",
        "ResponseMappingTemplateS3Location",
    ),
    ("AWS::CloudFormation::Stack", "TemplateURL"),
    ("AWS::CloudFormation::StackSet", "TemplateURL"),
    ("AWS::ElasticBeanstalk::ApplicationVersion", "SourceBundle"),
    ("AWS::Glue::Job", "Command"),
    ("AWS::StepFunctions::StateMachine", "DefinitionS3Location"),
    ("AWS::CodeCommit::Repository", "Code"),
];

/// A property holding a local path that `package` replaces: a literal
/// string that is no URL.
fn local_path(kind: &str, name: &str, value: &Expr) -> bool {
    PACKAGED.contains(&(kind, name))
        && matches!(value, Expr::String(path)
            if !path.contains("://") && !path.starts_with("arn:"))
}

/// The schema that validates a resource type: custom resources share one.
fn schema_type(kind: &str) -> &str {
    if kind.starts_with("Custom::") {
        "AWS::CloudFormation::CustomResource"
    } else {
        kind
    }
}

/// The checks of one resource against its type's schema.
fn schema_check(
    id: &str,
    resource: &crate::cfn::Resource,
    schemas: &SchemaSet,
    findings: &mut Vec<Finding>,
) {
    if is_module(&resource.kind) {
        findings.push(Finding::new(
            "I1008",
            format!("Resources/{id}/Type"),
            format!(
                "`{}` is a module: the resources it is made of are not checked",
                resource.kind
            ),
        ));
        return;
    }
    let kind = schema_type(&resource.kind);
    let mut properties = crate::cfn::json::expr_map(&resource.properties);
    // A custom resource gets every property as a string: a boolean is
    // as good as any other scalar.
    if kind == "AWS::CloudFormation::CustomResource"
        && let serde_json::Value::Object(entries) = &mut properties
    {
        for value in entries.values_mut() {
            if let serde_json::Value::Bool(b) = value {
                *value = serde_json::Value::String(b.to_string());
            }
        }
    }
    let packaged: Vec<&String> = resource
        .properties
        .iter()
        .filter(|(name, value)| local_path(&resource.kind, name, value))
        .map(|(name, _)| name)
        .collect();
    for name in &packaged {
        findings.push(
            Finding::new(
                "I1009",
                format!("Resources/{id}/Properties/{name}"),
                format!(
                    "`{name}` is a local path: `aws cloudformation package` uploads it and puts its S3 location here"
                ),
            )
            .help("deploy the template `package` writes, not this one"),
        );
    }
    let Some(errors) = branches::validate(schemas, kind, &properties) else {
        findings.push(
            Finding::new(
                "W1000",
                format!("Resources/{id}/Type"),
                format!(
                    "no schema for `{}`; its properties were not checked",
                    resource.kind
                ),
            )
            .help(
                "check the type's spelling; a type newer than the embedded schemas (cfn-lint 1.58.0's us-east-1) or a third-party one needs `--schemas` with its schema",
            ),
        );
        return;
    };
    for error in errors {
        if packaged.iter().any(|name| {
            let at = format!("/{name}");
            error.pointer == at || error.pointer.starts_with(&format!("{at}/"))
        }) {
            continue;
        }
        let finding_id = match error.keyword.as_str() {
            "enum" | "const" => "E1001",
            "type" => "E1002",
            "required" => "E1003",
            "additionalProperties" => "E1004",
            "exclusive" => "E1010",
            "format" => "E1012",
            _ => "E1005",
        };
        findings.push(Finding::new(
            finding_id,
            format!("Resources/{id}/Properties{}", error.pointer),
            error.message,
        ));
    }
    if let Some(read_only) = schemas.read_only_properties(kind) {
        for name in resource
            .properties
            .keys()
            .filter(|name| read_only.contains(name))
        {
            findings.push(
                Finding::new(
                    "E1006",
                    format!("Resources/{id}/Properties/{name}"),
                    format!("`{name}` is read-only for `{}`", resource.kind),
                )
                .help("CloudFormation sets it; read it with `Fn::GetAtt` instead"),
            );
        }
    }
}

/// Calls `visit` on every value inside `expr`, intrinsic arguments
/// included, with its path (`path` extended by each segment on the way, one
/// string for the whole walk).
fn walk<'a>(expr: &'a Expr, path: &mut String, visit: &mut dyn FnMut(&'a Expr, &str)) {
    visit(expr, path);
    expr.for_each_child(|step, child| {
        let length = path.len();
        path.push('/');
        let _ = write!(path, "{step}");
        walk(child, path, &mut *visit);
        path.truncate(length);
    });
}

/// Every value of a resource, with its path from the template root.
fn walk_resource<'a>(
    id: &str,
    resource: &'a crate::cfn::Resource,
    visit: &mut dyn FnMut(&'a Expr, &str),
) {
    let sections: [(&str, Option<&'a Expr>); 3] = [
        ("Metadata", resource.metadata.as_ref()),
        ("CreationPolicy", resource.creation_policy.as_ref()),
        ("UpdatePolicy", resource.update_policy.as_ref()),
    ];
    for (key, value) in &resource.properties {
        walk(
            value,
            &mut format!("Resources/{id}/Properties/{key}"),
            visit,
        );
    }
    for (section, value) in sections {
        if let Some(value) = value {
            walk(value, &mut format!("Resources/{id}/{section}"), visit);
        }
    }
}

/// A literal string or integer as text; `None` for intrinsics.
fn literal(expr: &Expr) -> Option<String> {
    match expr {
        Expr::String(s) => Some(s.clone()),
        Expr::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// A literal number, written as a number or a numeric string.
fn literal_number(expr: &Expr) -> Option<i64> {
    literal(expr)?.trim().parse().ok()
}
