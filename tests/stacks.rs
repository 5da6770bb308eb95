//! Blueprints that make several stacks: what goes where, how the stacks
//! reach the shared resources, and the located error that says how to split
//! a stack that would pass CloudFormation's limits.

use std::collections::BTreeSet;
use std::sync::Arc;

use eksynth::cfn::{Expr, Template};
use eksynth::compile::{Compiled, compile};
use eksynth::diagnostic::Diagnostic;
use eksynth::source::SourceFile;

const HEADER: &str = r#"apiVersion: eksynth.io/v1
kind: NodeBlueprint
cluster:
  name: {parameter: ClusterName}
  kubernetesVersion: "1.33"
  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: Y2VydA==
  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: sg-0123456789abcdef0
  vpc: vpc-0123456789abcdef0
  authenticationMode: API_AND_CONFIG_MAP
  nodeAccess: awsAuth
  awsAuthProvider: {}
defaults:
  subnets: [subnet-0123456789abcdef0, subnet-0123456789abcdef1]
  instanceType: m7i.large
  minSize: 1
  maxSize: 3
"#;

fn file(name: &str, text: &str) -> Arc<SourceFile> {
    SourceFile::new(name, text.to_string())
}

/// `count` self-managed groups, `g0` to `g{count-1}`.
fn groups(count: usize) -> String {
    let mut text = String::from("nodeGroups:\n");
    for i in 0..count {
        text.push_str(&format!("  - name: g{i}\n"));
    }
    text
}

fn compiled(name: &str, text: &str) -> Compiled {
    compile(&file(name, text)).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn rendered(compiled: &Compiled) -> String {
    let all: Vec<String> = compiled.diagnostics.iter().map(|d| d.render()).collect();
    all.join("\n")
}

/// A split is clean but for its main stack's `I3005`: the main stack
/// holds the aws-auth provider, whose inline code makes it larger than an
/// inline deploy sends (blueprints/aws-auth/README.md, "Constraints on the
/// source").
fn assert_clean_but_the_provider_stack(split: &Compiled) {
    let main = format!("stack `{}`: ", split.stacks[0].name);
    let others = split
        .diagnostics
        .iter()
        .filter(|d| !(d.code == Some("I3005") && d.message.starts_with(&main)))
        .count();
    assert_eq!(others, 0, "{}", rendered(split));
}

/// The diagnostic with `code`, asserted to be at `(line, column)`.
fn located<'c>(compiled: &'c Compiled, code: &str, at: (usize, usize)) -> &'c Diagnostic {
    let found = compiled
        .diagnostics
        .iter()
        .find(|d| d.code == Some(code))
        .unwrap_or_else(|| panic!("no {code}:\n{}", rendered(compiled)));
    let span = found.span.expect("located");
    assert_eq!((span.line, span.column), at, "{}", found.render());
    found
}

/// Every `Fn::ImportValue` name in a value, as written.
fn imports(expr: &Expr, found: &mut Vec<String>) {
    if let Expr::ImportValue(name) = expr {
        match name.as_ref() {
            Expr::Sub { template, .. } => found.push(template.clone()),
            other => panic!("import of {other:?}"),
        }
    }
    for (_, child) in expr.children() {
        imports(child, found);
    }
}

fn imports_of(template: &Template) -> Vec<String> {
    let mut found = Vec::new();
    for resource in template.resources.values() {
        resource
            .properties
            .values()
            .for_each(|v| imports(v, &mut found));
    }
    found
}

#[test]
fn a_stack_over_the_resource_limit_is_a_located_error_that_says_how_to_split() {
    let text = format!("{HEADER}{}", groups(110));
    let result = compiled("fleet.yaml", &text);
    assert!(result.has_errors(), "110 groups fit one stack?");
    // At the `nodeGroups` key, the line that declares what is in the stack.
    let too_many = located(&result, "E3001", (19, 1));
    let help = too_many.help.as_deref().unwrap_or_default();
    assert!(help.contains("stacks: perGroup"), "{help}");
    assert!(too_many.message.contains("CloudFormation allows 500"));

    // Split per group, every stack is far below the resource limits and
    // clean.
    let split = compiled(
        "fleet.yaml",
        &text.replace(
            "kind: NodeBlueprint\n",
            "kind: NodeBlueprint\nstacks: perGroup\n",
        ),
    );
    assert!(!split.has_errors(), "{}", rendered(&split));
    assert_clean_but_the_provider_stack(&split);
    assert_eq!(split.stacks.len(), 111);
    assert_eq!(split.stacks[0].name, "fleet");
    assert_eq!(split.stacks[110].name, "fleet-g109");
    for stack in &split.stacks {
        assert!(stack.template.resources.len() < 20, "{}", stack.name);
    }
}

#[test]
fn a_named_stack_over_the_limit_is_reported_at_its_own_key() {
    let listed: Vec<String> = (0..110).map(|i| format!("g{i}")).collect();
    let text = format!(
        "{HEADER}stacks:\n  fleet-all: [{}]\n{}",
        listed.join(", "),
        groups(110)
    );
    let result = compiled("fleet.yaml", &text);
    let too_many = located(&result, "E3001", (20, 3));
    assert!(
        too_many.message.starts_with("stack `fleet-all`: "),
        "{}",
        too_many.message
    );
}

#[test]
fn splitting_moves_resources_between_stacks_and_loses_none() {
    let body = format!("{}managedNodeGroups:\n  - name: managed\n", groups(3));
    let single = compiled("nodes.yaml", &format!("{HEADER}{body}"));
    assert!(!single.has_errors(), "{}", rendered(&single));
    // The shared stack holds the aws-auth provider's inline code, which
    // makes it larger than an inline deploy sends (I3005).
    let text = format!(
        "{HEADER}stack: shared\nstacks:\n  first: [g0, managed]\n  second: [g2]\n\
         suppressions:\n  - id: I3005\n    reason: deployed with --s3-bucket\n{body}"
    );
    let split = compiled("nodes.yaml", &text);
    assert!(split.diagnostics.is_empty(), "{}", rendered(&split));
    let names: Vec<&str> = split.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shared", "first", "second"]);

    // The same resources, each in exactly one stack.
    let all: BTreeSet<&String> = single.stacks[0].template.resources.keys().collect();
    let mut seen = BTreeSet::new();
    for stack in &split.stacks {
        for id in stack.template.resources.keys() {
            assert!(seen.insert(id), "{id} is in two stacks");
        }
    }
    assert_eq!(seen, all);

    let ids = |index: usize| -> Vec<&str> {
        split.stacks[index]
            .template
            .resources
            .keys()
            .map(String::as_str)
            .collect()
    };
    // Shared resources and the unplaced group stay in the main stack.
    let main = ids(0);
    for id in [
        "NodeSecurityGroup",
        "AwsAuthProvider",
        "AwsAuthProviderRole",
        "G1NodeGroup",
    ] {
        assert!(main.contains(&id), "{id} not in the main stack: {main:?}");
    }
    assert!(ids(1).contains(&"G0NodeGroup") && ids(1).contains(&"ManagedNodegroup"));
    assert_eq!(
        ids(2),
        [
            "G2NodeRole",
            "G2InstanceProfile",
            "G2LaunchTemplate",
            "G2NodeGroup",
            "G2AwsAuth"
        ]
    );
}

#[test]
fn every_import_of_a_group_stack_is_an_export_of_the_main_stack() {
    let text = format!("{HEADER}stacks: perGroup\n{}", groups(2));
    let split = compiled("nodes.yaml", &text);
    assert_clean_but_the_provider_stack(&split);
    let main = &split.stacks[0].template;
    let exports: Vec<String> = main
        .outputs
        .iter()
        .map(|(name, output)| {
            assert_eq!(
                output.export,
                Some(Expr::sub(format!("${{AWS::StackName}}-{name}")))
            );
            format!("${{SharedStackName}}-{name}")
        })
        .collect();
    assert!(imports_of(main).is_empty());
    assert_eq!(split.stacks.len(), 3);
    for stack in &split.stacks[1..] {
        let found = imports_of(&stack.template);
        // The security group in the launch template, the provider's token.
        assert_eq!(
            found,
            [
                "${SharedStackName}-NodeSecurityGroupId",
                "${SharedStackName}-AwsAuthProviderArn"
            ],
            "{}",
            stack.name
        );
        for import in found {
            assert!(exports.contains(&import), "{import} is not exported");
        }
        let parameter = &stack.template.parameters["SharedStackName"];
        assert_eq!(parameter.default, Some(Expr::str("nodes")));
        // No dependency reaches into another stack.
        for resource in stack.template.resources.values() {
            for dependency in &resource.depends_on {
                assert!(stack.template.resources.contains_key(dependency));
            }
        }
    }
}

#[test]
fn a_suppression_applies_to_every_stack_and_counts_as_used() {
    // Three groups and the provider's inline code make the main stack too
    // large to deploy inline (I3005); the group stack is small.
    let body = format!("stacks:\n  nodes-a: [g0]\n{}", groups(4));
    let unsuppressed = compiled("nodes.yaml", &format!("{HEADER}{body}"));
    let codes: Vec<_> = unsuppressed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Some("I3005")], "{}", rendered(&unsuppressed));
    assert!(
        unsuppressed.diagnostics[0]
            .message
            .starts_with("stack `nodes`: ")
    );

    let suppressed = compiled(
        "nodes.yaml",
        &format!(
            "{HEADER}suppressions:\n  - id: I3005\n    reason: deployed with --s3-bucket\n{body}"
        ),
    );
    assert!(
        suppressed.diagnostics.is_empty(),
        "{}",
        rendered(&suppressed)
    );
}

#[test]
fn the_stack_name_comes_from_the_blueprint_or_its_file_never_from_a_base() {
    let dir = std::env::temp_dir().join(format!("eksynth-stacks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("base.yaml"),
        format!("{HEADER}stack: the-base\n{}", groups(1)),
    )
    .expect("base");
    let child = dir.join("prod_nodes.yaml");
    let text = "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\nextends: ./base.yaml\n";
    let inherited = compiled(&child.display().to_string(), text);
    assert_eq!(inherited.stacks[0].name, "prod-nodes");
    let named = compiled(
        &child.display().to_string(),
        &format!("{text}stack: prod\n"),
    );
    assert_eq!(named.stacks[0].name, "prod");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_template_is_measured_in_the_format_it_is_written_in() {
    use eksynth::cfn::Format;
    use eksynth::validate::SchemaSet;
    // Managed groups: JSON is about half again as large as YAML, so some
    // count of groups fits an inline deploy as YAML and not as JSON.
    let managed = |count: usize| {
        let mut text = format!("{HEADER}managedNodeGroups:\n");
        for i in 0..count {
            text.push_str(&format!("  - name: m{i}\n"));
        }
        text
    };
    let size_findings = |text: &str, format: Format| {
        let compiled = eksynth::compile::compile_with_overrides(
            &file("nodes.yaml", text),
            SchemaSet::embedded(),
            &[],
            format,
        )
        .expect("compiles");
        let stack = &compiled.stacks[0];
        let messages: Vec<String> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.code == Some("I3005"))
            .map(|d| d.message.clone())
            .collect();
        (stack.text.len(), messages)
    };
    let between = (1..40)
        .find(|&count| {
            let text = managed(count);
            size_findings(&text, Format::Yaml).0 <= 51_200
                && size_findings(&text, Format::Json).0 > 51_200
        })
        .expect("a group count between the two sizes");
    let text = managed(between);
    let (yaml_bytes, yaml_findings) = size_findings(&text, Format::Yaml);
    assert!(yaml_findings.is_empty(), "{yaml_bytes}: {yaml_findings:?}");
    let (json_bytes, json_findings) = size_findings(&text, Format::Json);
    assert_eq!(
        json_findings,
        [format!(
            "the template is {json_bytes} bytes; `aws cloudformation deploy` sends at most 51200 inline"
        )]
    );
}
