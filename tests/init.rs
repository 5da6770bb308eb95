//! `eksynth init`: the starter blueprint written from describe-cluster
//! output synthesizes as written; one written with placeholders fails
//! with one error at each placeholder and nowhere else.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

use eksynth::compile::{CompileError, compile};
use eksynth::diagnostic::{Diagnostic, Severity};
use eksynth::init::starter;
use eksynth::source::SourceFile;
use eksynth::validate::Level;

fn described(name: &str) -> Arc<SourceFile> {
    let path = format!("tests/init/{name}");
    let text = std::fs::read_to_string(&path).expect("fixture");
    SourceFile::new(path, text)
}

/// The starter blueprint, as a file named `starter.yaml`.
fn written(cluster_json: Option<&str>) -> Arc<SourceFile> {
    let cluster = cluster_json.map(described);
    let text = starter(cluster.as_ref()).unwrap_or_else(|errors| panic!("{}", errors[0].render()));
    SourceFile::new("starter.yaml", text)
}

/// The 1-indexed lines of `file` that hold a placeholder.
fn placeholder_lines(file: &SourceFile) -> Vec<usize> {
    file.text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("  # PLACEHOLDER: "))
        .map(|(index, _)| index + 1)
        .collect()
}

/// The lines of the errors `synth` reports about `file`.
fn error_lines(file: &Arc<SourceFile>) -> Vec<usize> {
    match compile(file) {
        Ok(_) => Vec::new(),
        Err(CompileError::Blueprint(diagnostics)) => diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| {
                d.span
                    .unwrap_or_else(|| panic!("an error without a place:\n{}", d.render()))
                    .line
            })
            .collect(),
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn a_blueprint_written_from_describe_cluster_synthesizes_as_written() {
    for fixture in ["describe-cluster.json", "describe-cluster-ipv6.json"] {
        let file = written(Some(fixture));
        assert!(placeholder_lines(&file).is_empty(), "{}", file.text);
        let compiled = match compile(&file) {
            Ok(compiled) => compiled,
            Err(CompileError::Blueprint(errors)) => {
                panic!("{fixture}:\n{}\n{}", file.text, errors[0].render())
            }
            Err(error) => panic!("{fixture}: {error}"),
        };
        // Clean enough for `validate --strict`: no warning at all.
        let warnings: Vec<String> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.severity != Severity::Note)
            .map(Diagnostic::render)
            .chain(compiled.stacks.iter().flat_map(|stack| {
                stack
                    .findings
                    .iter()
                    .filter(|finding| finding.level != Level::Note)
                    .map(|finding| format!("{} {}", finding.id, finding.message))
            }))
            .collect();
        assert!(warnings.is_empty(), "{fixture}: {warnings:#?}");
        let first = file.text.lines().next();
        assert_eq!(
            first,
            Some(
                "# yaml-language-server: $schema=https://raw.githubusercontent.com/<owner>/eksynth/main/schemas/blueprint.schema.json"
            )
        );
    }
}

#[test]
fn every_cluster_value_is_taken_from_describe_cluster() {
    let file = written(Some("describe-cluster.json"));
    for expected in [
        "  name: prod\n",
        "  kubernetesVersion: \"1.33\"\n",
        "  endpoint: https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com\n",
        "  certificateAuthority: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
        "  serviceIpv4Cidr: \"172.20.0.0/16\"\n",
        "  controlPlaneSecurityGroup: sg-0123456789abcdef0\n",
        "  clusterSecurityGroup: sg-0fedcba9876543210\n",
        "  vpc: vpc-0123456789abcdef0\n",
        "  authenticationMode: API_AND_CONFIG_MAP\n",
        "      - subnet-0a1b2c3d4e5f60713\n",
        "stack: prod-nodes\n",
    ] {
        assert!(file.text.contains(expected), "{expected}:\n{}", file.text);
    }
    let ipv6 = written(Some("describe-cluster-ipv6.json"));
    for expected in [
        "  ipFamily: ipv6\n  serviceIpv6Cidr: fd00:ab12:3c4d::/108\n",
        // Created without security groups of its own: the control plane
        // has the cluster security group.
        "  controlPlaneSecurityGroup: sg-0a9b8c7d6e5f40312\n",
        "  authenticationMode: API\n",
        // `edge_v6-nodes` is no stack name.
        "stack: nodes\n",
    ] {
        assert!(ipv6.text.contains(expected), "{expected}:\n{}", ipv6.text);
    }
    assert!(!ipv6.text.contains("serviceIpv4Cidr"), "{}", ipv6.text);
}

#[test]
fn each_placeholder_is_one_error_at_its_line() {
    let file = written(None);
    let placeholders = placeholder_lines(&file);
    // The cluster's nine values and the group's subnet.
    assert_eq!(placeholders.len(), 10, "{}", file.text);
    assert_eq!(error_lines(&file), placeholders, "{}", file.text);
}

#[test]
fn values_describe_cluster_does_not_have_yet_are_placeholders() {
    // A cluster still being created has no endpoint and no CA data yet.
    let file = written(Some("describe-cluster-creating.json"));
    let placeholders = placeholder_lines(&file);
    let lines: Vec<&str> = file.text.lines().collect();
    let fields: Vec<&str> = placeholders
        .iter()
        .map(|&line| lines[line - 1].split(':').next().unwrap_or("").trim())
        .collect();
    assert_eq!(
        fields,
        ["endpoint", "certificateAuthority"],
        "{}",
        file.text
    );
    assert_eq!(error_lines(&file), placeholders, "{}", file.text);
    assert!(
        !file.text.contains("clusterSecurityGroup:"),
        "{}",
        file.text
    );
}

#[test]
fn a_file_that_is_not_describe_cluster_output_is_an_error_naming_it() {
    for (text, expected) in [
        (
            "{\"nodegroup\": {\"nodegroupName\": \"ng\"}}",
            "it has `nodegroup`, where describe-cluster output has only `cluster`",
        ),
        ("{\"cluster\": [1, 2]}", "no `cluster` object"),
        ("", "the file is empty"),
        ("{}", "no `cluster` object"),
        ("[1]", "no `cluster` object"),
        ("{\"cluster\": {\"name\": \"x\"", "describe.json:1:"),
        (
            "{\"cluster\": {\"name\": \"x\", \"version\": \"1.33\"}}",
            "describe.json:1:2",
        ),
        (
            "apiVersion: eksynth.io/v1\ncluster: {name: x}\n",
            "describe.json:1:1",
        ),
    ] {
        let file = SourceFile::new("describe.json", text);
        let errors = starter(Some(&file)).expect_err(text);
        let rendered = errors[0].render();
        assert!(rendered.contains(expected), "{text}:\n{rendered}");
        assert!(rendered.contains("describe.json"), "{text}:\n{rendered}");
    }
}

fn eksynth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .output()
        .expect("eksynth runs")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eksynth-init-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn init_writes_a_new_file_that_synth_accepts_and_never_writes_over_one() {
    let dir = temp_dir("output");
    let out = dir.join("nodes.yaml");
    let out = out.to_str().expect("utf-8 path");
    let json = "tests/init/describe-cluster.json";
    let first = eksynth(&["init", "--cluster-json", json, "-o", out]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    assert!(first.stdout.is_empty(), "{first:?}");
    let synth = eksynth(&["synth", out]);
    assert_eq!(synth.status.code(), Some(0), "{synth:?}");

    // Another blueprint over it is refused, and the file stays as it was.
    let before = std::fs::read(out).expect("written");
    let second = eksynth(&["init", "-o", out]);
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("exists; eksynth does not write over it"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(out).expect("still there"), before);
    let _ = std::fs::remove_dir_all(&dir);
}
