//! cfn-lint's extension schemas: rules that span several properties of one
//! object (a security group rule's protocol and ports, a Lambda function's
//! inline code and runtime, a block device's name and volume, a Route 53
//! record set's records and its type, a bucket's ACL and its object
//! ownership), vendored in
//! `schemas/extensions/` and applied where cfn-lint applies them.
//!
//! Each schema is compiled like a provider schema (`schema::Fragment`:
//! intrinsics pass, and an intrinsic in an `if` never triggers its `then`),
//! once, on first use.

use std::sync::LazyLock;

use serde_json::Value;

use super::Finding;
use super::branches::{variants, written_pointer};
use super::schema::{Fragment, escape, first_at_each_value};
use crate::cfn::Template;

/// One extension schema, where it applies, and what its findings say.
struct Extension {
    /// The finding ID its errors get.
    id: &'static str,
    text: &'static str,
    /// `(resource type, path below Properties)`; `*` is every item of an
    /// array, `""` the properties themselves.
    at: &'static [(&'static str, &'static str)],
    help: &'static str,
    /// Whether each value that breaks the schema is a finding of its own
    /// (each record of a record set), rather than the first error alone
    /// (one broken rule).
    every_value: bool,
    /// What the finding says, where the schema's own words (`"60" is not
    /// allowed here`) would not say what is wrong.
    message: Option<&'static str>,
}

const SECURITY_GROUP_RULES: &[(&str, &str)] = &[
    ("AWS::EC2::SecurityGroup", "SecurityGroupIngress/*"),
    ("AWS::EC2::SecurityGroup", "SecurityGroupEgress/*"),
    ("AWS::EC2::SecurityGroupIngress", ""),
    ("AWS::EC2::SecurityGroupEgress", ""),
];

const BLOCK_DEVICE_MAPPINGS: &[(&str, &str)] = &[
    ("AWS::EC2::Instance", "BlockDeviceMappings/*"),
    (
        "AWS::EC2::LaunchTemplate",
        "LaunchTemplateData/BlockDeviceMappings/*",
    ),
    (
        "AWS::AutoScaling::LaunchConfiguration",
        "BlockDeviceMappings/*",
    ),
    (
        "AWS::EC2::SpotFleet",
        "SpotFleetRequestConfigData/LaunchSpecifications/*/BlockDeviceMappings/*",
    ),
];

const LAMBDA_FUNCTION: &[(&str, &str)] = &[("AWS::Lambda::Function", "")];

const RECORD_SETS: &[(&str, &str)] = &[
    ("AWS::Route53::RecordSet", ""),
    ("AWS::Route53::RecordSetGroup", "RecordSets/*"),
];

const BUCKETS: &[(&str, &str)] = &[("AWS::S3::Bucket", "")];

const EXTENSIONS: &[Extension] = &[
    Extension {
        id: "E7001",
        text: include_str!(
            "../../schemas/extensions/aws_ec2_securitygroup/protocols_and_port_ranges_include.json"
        ),
        at: SECURITY_GROUP_RULES,
        help: "a `tcp`, `udp` or `icmp` rule needs `FromPort` and `ToPort` (`-1` for every port or ICMP type)",
        every_value: false,
        message: None,
    },
    Extension {
        id: "W7002",
        text: include_str!(
            "../../schemas/extensions/aws_ec2_securitygroup/protocols_and_port_ranges_exclude.json"
        ),
        at: SECURITY_GROUP_RULES,
        help: "a protocol other than `tcp`, `udp`, `icmp` and `icmpv6` has no ports: the rule opens the whole protocol and the ports are ignored",
        every_value: false,
        message: None,
    },
    Extension {
        id: "E7003",
        text: include_str!(
            "../../schemas/extensions/aws_ec2_securitygroup/all_to_and_from_ports.json"
        ),
        at: SECURITY_GROUP_RULES,
        help: "`-1` (every port, or every ICMP type and code) must be both `FromPort` and `ToPort`",
        every_value: false,
        message: None,
    },
    Extension {
        id: "E7004",
        text: include_str!(
            "../../schemas/extensions/aws_lambda_function/zipfile_runtime_exists.json"
        ),
        at: LAMBDA_FUNCTION,
        help: "inline code (`Code.ZipFile`) runs only with a `Runtime` given",
        every_value: false,
        message: None,
    },
    Extension {
        id: "E7004",
        text: include_str!(
            "../../schemas/extensions/aws_lambda_function/zipfile_runtime_enum.json"
        ),
        at: LAMBDA_FUNCTION,
        help: "inline code (`Code.ZipFile`) works with the Node.js and Python runtimes only",
        every_value: false,
        message: None,
    },
    Extension {
        id: "E7005",
        text: include_str!("../../schemas/extensions/aws_ec2_instance/virtualname_ephemeral.json"),
        at: BLOCK_DEVICE_MAPPINGS,
        help: "a mapping without `Ebs` is an instance store volume, named `ephemeral0` to `ephemeral23`",
        every_value: false,
        message: None,
    },
    Extension {
        id: "E7012",
        text: include_str!("../../schemas/extensions/aws_route53_recordset/recordset_pattern.json"),
        at: RECORD_SETS,
        help: "Route 53 reads each record by the record set's `Type`: an address for `A` and `AAAA`, one domain name for `CNAME`, `flags tag \"value\"` for `CAA`, quoted strings of at most 255 characters for `TXT`",
        every_value: true,
        message: None,
    },
    Extension {
        id: "E7013",
        text: include_str!("../../schemas/extensions/aws_route53_recordset/recordset_alias.json"),
        at: RECORD_SETS,
        help: "an alias record takes the target's TTL: leave `TTL` out",
        every_value: false,
        message: Some("`TTL` on an alias record"),
    },
    Extension {
        id: "E7014",
        text: include_str!("../../schemas/extensions/aws_s3_bucket/ownershipcontrols.json"),
        at: BUCKETS,
        help: "a new bucket's object ownership is \"bucket owner enforced\", which disables ACLs: add `OwnershipControls` with an `ObjectOwnership` that allows them (`ObjectWriter` or `BucketOwnerPreferred`), or leave `AccessControl` out",
        every_value: false,
        message: Some(
            "a canned ACL other than `Private`, `BucketOwnerFullControl` or `BucketOwnerRead` on a bucket without `OwnershipControls`",
        ),
    },
];

/// The compiled schemas, in the order of `EXTENSIONS`.
static COMPILED: LazyLock<Vec<Fragment>> = LazyLock::new(|| {
    EXTENSIONS
        .iter()
        .map(|extension| {
            let document = serde_json::from_str(extension.text).unwrap_or(Value::Bool(true));
            Fragment::new(document)
        })
        .collect()
});

pub(super) fn check(template: &Template, findings: &mut Vec<Finding>) {
    for (id, resource) in &template.resources {
        let applies = |extension: &Extension| {
            extension
                .at
                .iter()
                .any(|(kind, _)| *kind == resource.kind.as_str())
        };
        if !EXTENSIONS.iter().any(applies) {
            continue;
        }
        let properties = crate::cfn::json::expr_map(&resource.properties);
        // Each `Fn::If` branch is judged like a value written in its place.
        for (branch, variant) in variants(&properties) {
            check_variant(
                id,
                &resource.kind,
                &variant,
                &|pointer| written_pointer(&properties, pointer, branch),
                findings,
            );
        }
    }
}

/// The extensions of `kind` on one variant of a resource's properties
/// (see `branches::variants`); `written` leads a pointer in the variant back
/// to the properties as written.
fn check_variant(
    id: &str,
    kind: &str,
    properties: &Value,
    written: &dyn Fn(&str) -> String,
    findings: &mut Vec<Finding>,
) {
    for (extension, fragment) in EXTENSIONS.iter().zip(COMPILED.iter()) {
        for (at_kind, path) in extension.at {
            if *at_kind != kind {
                continue;
            }
            let mut targets = Vec::new();
            select(properties, path, String::new(), &mut targets);
            for (at, value) in targets {
                // One broken rule is one finding: `required: [FromPort,
                // ToPort]` fails twice for one mistake. Where each value
                // is judged alone, each value is one finding.
                for error in first_at_each_value(fragment.validate(value)) {
                    findings.push(
                        Finding::new(
                            extension.id,
                            format!(
                                "Resources/{id}/Properties{}",
                                written(&format!("{at}{}", error.pointer))
                            ),
                            extension.message.map_or(error.message, str::to_string),
                        )
                        .help(extension.help),
                    );
                    if !extension.every_value {
                        break;
                    }
                }
            }
        }
    }
}

/// The values at `path` below `value` (`*` for every item of an array),
/// with their JSON pointers; intrinsics on the way are not entered.
pub(super) fn select<'a>(
    value: &'a Value,
    path: &str,
    at: String,
    out: &mut Vec<(String, &'a Value)>,
) {
    if path.is_empty() {
        out.push((at, value));
        return;
    }
    let (head, rest) = path.split_once('/').unwrap_or((path, ""));
    match (head, value) {
        ("*", Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                select(item, rest, format!("{at}/{index}"), out);
            }
        }
        (name, Value::Object(map)) => {
            if let Some(child) = map.get(name) {
                select(child, rest, format!("{at}/{}", escape(name)), out);
            }
        }
        _ => {}
    }
}
