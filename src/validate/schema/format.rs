//! `format` as a keyword of ours, asserting the formats whose meaning is
//! certain: IP addresses, and the IDs of the EC2 objects cfn-lint checks by
//! their shape (VPCs, subnets, security groups, AMIs).
//!
//! The provider schemas cfn-lint ships name a `format` on many properties:
//! standard ones (`ipv4`, `date-time`) and cfn-lint's own
//! (`AWS::EC2::VPC.Id`, `AWS::IAM::Role.Arn`). cfn-lint asserts each with a
//! rule of its own (`cfnlint/rules/formats/*.py`, and the standard formats
//! in `cfnlint/jsonschema/_format.py` of cfn-lint 1.58.0). The ones here
//! follow those rules: an address is what Python's `ipaddress` reads (Rust's
//! `std::net` reads the same dotted quads and IPv6 forms), an ID is its
//! prefix and 8 or 17 hexadecimal digits (an AMI's may be any lowercase
//! letters and digits). Every other format passes, as do values that are
//! not strings, strings holding a dynamic reference (`{{resolve:ssm:...}}`,
//! as `dynamic_reference.rs` tells them),
//! which CloudFormation replaces before EC2 sees them, strings holding a
//! `${...}` outside `Fn::Sub` (a finding of its own), and an AMI given as
//! `resolve:ssm:...`, which EC2 resolves itself.

use jsonschema::{Keyword, ValidationError};
use serde_json::Value;

use super::dynamic_reference::is_dynamic_reference;
use super::errors::show;

/// A format this keyword asserts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Ipv4,
    Ipv6,
    Vpc,
    Subnet,
    SecurityGroup,
    Image,
}

impl Format {
    fn named(name: &str) -> Option<Format> {
        Some(match name {
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "AWS::EC2::VPC.Id" => Format::Vpc,
            "AWS::EC2::Subnet.Id" => Format::Subnet,
            "AWS::EC2::SecurityGroup.Id" => Format::SecurityGroup,
            "AWS::EC2::Image.Id" => Format::Image,
            _ => return None,
        })
    }

    fn holds(self, text: &str) -> bool {
        // What CloudFormation replaces first, and a `${...}` outside
        // `Fn::Sub`, which is a mistake of its own (`E9010`).
        if is_dynamic_reference(text) || text.contains("${") {
            return true;
        }
        match self {
            Format::Ipv4 => text.parse::<std::net::Ipv4Addr>().is_ok(),
            Format::Ipv6 => text.parse::<std::net::Ipv6Addr>().is_ok(),
            Format::Vpc => is_id(text, "vpc-", |c| c.is_ascii_hexdigit()),
            Format::Subnet => is_id(text, "subnet-", |c| c.is_ascii_hexdigit()),
            Format::SecurityGroup => is_id(text, "sg-", |c| c.is_ascii_hexdigit()),
            Format::Image => {
                text.starts_with("resolve:ssm:")
                    || is_id(text, "ami-", |c| {
                        c.is_ascii_digit() || c.is_ascii_lowercase()
                    })
            }
        }
    }

    /// What a value of the format looks like, for the error.
    fn expected(self) -> &'static str {
        match self {
            Format::Ipv4 => "an IPv4 address",
            Format::Ipv6 => "an IPv6 address",
            Format::Vpc => "a VPC ID (`vpc-` and 8 or 17 hexadecimal digits)",
            Format::Subnet => "a subnet ID (`subnet-` and 8 or 17 hexadecimal digits)",
            Format::SecurityGroup => "a security group ID (`sg-` and 8 or 17 hexadecimal digits)",
            Format::Image => "an AMI ID (`ami-` and 8 or 17 lowercase letters and digits)",
        }
    }
}

/// `prefix` and then 8 or 17 characters that are all `allowed`.
fn is_id(text: &str, prefix: &str, allowed: impl Fn(char) -> bool) -> bool {
    text.strip_prefix(prefix)
        .is_some_and(|rest| matches!(rest.len(), 8 | 17) && rest.chars().all(allowed))
}

/// The `format` keyword, for `jsonschema::options().with_keyword`.
pub(super) fn keyword(value: &Value) -> Box<dyn for<'i> Keyword<'i>> {
    Box::new(FormatKeyword(value.as_str().and_then(Format::named)))
}

struct FormatKeyword(Option<Format>);

impl FormatKeyword {
    fn holds(&self, instance: &Value) -> bool {
        match (self.0, instance) {
            (Some(format), Value::String(text)) => format.holds(text),
            _ => true,
        }
    }
}

impl<'i> Keyword<'i> for FormatKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.0 {
            Some(format) if !self.holds(instance) => Err(ValidationError::custom(format!(
                "{} is not {}",
                show(instance),
                format.expected()
            ))),
            _ => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.holds(instance)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Format;
    use crate::validate::schema::rewrite::build;

    #[test]
    fn each_format_takes_its_own_shape_only() {
        let cases: &[(Format, &[&str], &[&str])] = &[
            (
                Format::Ipv4,
                &["192.0.2.1", "0.0.0.0", "255.255.255.255"],
                &[
                    "192.0.2",
                    "256.0.0.1",
                    "192.0.2.1/32",
                    "01.2.3.4",
                    "example.com",
                ],
            ),
            (
                Format::Ipv6,
                &["2001:db8::1", "::1", "::ffff:192.0.2.1"],
                &[
                    "1111:2222:3333:4444:5555:6666:7777",
                    "2001:db8::g",
                    "192.0.2.1",
                ],
            ),
            (
                Format::Vpc,
                &["vpc-0123abcd", "vpc-0123456789abcdef0", "vpc-0123ABCD"],
                &[
                    "vpc-123456",
                    "vpc-0123456789abcdef",
                    "subnet-0123abcd",
                    "vpc-0123abcz",
                ],
            ),
            (
                Format::Subnet,
                &["subnet-0123abcd", "subnet-0123456789abcdef0"],
                &["subnet-12", "vpc-0123abcd"],
            ),
            (
                Format::SecurityGroup,
                &["sg-0123abcd", "sg-0123456789abcdef0"],
                &["sg-123", "default", "sg_0123abcd"],
            ),
            (
                Format::Image,
                &[
                    "ami-0123abcd",
                    "ami-0123456789abcdef0",
                    "resolve:ssm:/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id",
                ],
                &["ami-123", "ami-0123ABCD", "image"],
            ),
        ];
        for (format, good, bad) in cases {
            for text in *good {
                assert!(format.holds(text), "{format:?} refused {text}");
            }
            for text in *bad {
                assert!(!format.holds(text), "{format:?} took {text}");
            }
        }
    }

    #[test]
    fn only_strings_of_a_known_format_are_judged() {
        let vpc = build(&json!({ "format": "AWS::EC2::VPC.Id" })).unwrap();
        assert!(!vpc.is_valid(&json!("vpc-123456")));
        assert!(vpc.is_valid(&json!(12)));
        assert!(vpc.is_valid(&json!("{{resolve:ssm:/network/vpc}}")));
        assert!(vpc.is_valid(&json!("${VpcId}")));
        let unknown = build(&json!({ "format": "AWS::IAM::Role.Arn" })).unwrap();
        assert!(unknown.is_valid(&json!("not an ARN")));
        let short = json!("vpc-123456");
        let error = vpc.iter_errors(&short).next().unwrap();
        assert_eq!(
            error.to_string(),
            "\"vpc-123456\" is not a VPC ID (`vpc-` and 8 or 17 hexadecimal digits)"
        );
    }
}
