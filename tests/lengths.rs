//! Length limits count what the service that enforces them counts: AWS
//! tags in characters, a template's description in bytes. Each limit is
//! tried at its exact value and one past it, in ASCII and outside it.

use std::sync::Arc;

use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;

fn blueprint(description: &str, tag_key: &str, tag_value: &str) -> Arc<SourceFile> {
    group_blueprint(description, tag_key, tag_value, "")
}

/// The blueprint of [`blueprint`], its group given `extra` lines.
fn group_blueprint(
    description: &str,
    tag_key: &str,
    tag_value: &str,
    extra: &str,
) -> Arc<SourceFile> {
    let text = format!(
        r#"apiVersion: eksynth.io/v1
kind: NodeBlueprint
description: "{description}"
cluster:
  name: demo
  kubernetesVersion: "1.33"
  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: Y2VydA==
  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: sg-0123456789abcdef0
  vpc: vpc-0123456789abcdef0
nodeGroups:
  - name: general
    instanceType: m6i.large
    maxSize: 3
    subnets: [subnet-0123456789abcdef0]
    tags:
      "{tag_key}": "{tag_value}"
{extra}"#
    );
    SourceFile::new("lengths.yaml", text)
}

/// The messages of the blueprint's errors; empty when it compiles clean.
fn errors(file: &Arc<SourceFile>) -> Vec<String> {
    match compile(file) {
        Ok(compiled) => compiled
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.message.clone())
            .collect(),
        Err(CompileError::Blueprint(diagnostics)) => diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{} at line {}", d.message, d.span.map_or(0, |s| s.line)))
            .collect(),
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn a_tag_value_of_256_characters_is_accepted_in_any_script() {
    for ch in ["v", "é", "日"] {
        let value = ch.repeat(256);
        assert_eq!(
            errors(&blueprint("d", "team", &value)),
            Vec::<String>::new(),
            "{ch}"
        );
    }
    // IAM refuses a character outside letters and digits in a role's tag,
    // so the character beyond the Basic Multilingual Plane (two UTF-16
    // units, four bytes) is tried on a group whose role the stack does
    // not create.
    let existing_role = "    iam:\n      roleName: nodes\n      instanceProfileArn: \
        arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/nodes\n";
    assert_eq!(
        errors(&group_blueprint(
            "d",
            "team",
            &"🙂".repeat(256),
            existing_role
        )),
        Vec::<String>::new()
    );
}

#[test]
fn a_tag_value_of_257_characters_is_refused_in_any_script() {
    for ch in ["v", "é"] {
        let value = ch.repeat(257);
        assert_eq!(
            errors(&blueprint("d", "team", &value)),
            ["the value of tag `team` is 257 characters long; the limit is 256 at line 18"],
            "{ch}"
        );
    }
}

#[test]
fn a_tag_key_of_128_characters_is_accepted_and_129_refused() {
    for ch in ["k", "ü"] {
        assert_eq!(
            errors(&blueprint("d", &ch.repeat(128), "v")),
            Vec::<String>::new()
        );
        let long = ch.repeat(129);
        assert_eq!(
            errors(&blueprint("d", &long, "v")),
            [format!(
                "tag key `{long}` is 129 characters long; the limit is 128 at line 18"
            )]
        );
    }
}

#[test]
fn the_description_limit_is_1024_bytes() {
    assert_eq!(
        errors(&blueprint(&"d".repeat(1024), "team", "v")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&blueprint(&"é".repeat(512), "team", "v")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&blueprint(&"d".repeat(1025), "team", "v")),
        ["`description` is 1025 bytes long in UTF-8; CloudFormation allows 1024 bytes at line 3"]
    );
    // 513 characters, 1026 bytes.
    assert_eq!(
        errors(&blueprint(&"é".repeat(513), "team", "v")),
        ["`description` is 1026 bytes long in UTF-8; CloudFormation allows 1024 bytes at line 3"]
    );
}
