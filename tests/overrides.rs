//! `overrides:`: what the golden corpus cannot show on its own. Overrides
//! compose through `extends` and `--set` like every other field, and an
//! override is judged by validation like generated values are.

use std::sync::Arc;

use eksynth::cfn::{Expr, Format};
use eksynth::compile::{CompileError, Compiled, compile, compile_with_overrides};
use eksynth::source::SourceFile;
use eksynth::validate::SchemaSet;

const BLUEPRINT: &str = r#"apiVersion: eksynth.io/v1
kind: NodeBlueprint
stack: nodes
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
    instanceType: m7i.large
    maxSize: 3
    subnets: [subnet-0123456789abcdef0]
"#;

/// A blueprint named as if it sat in the corpus, so that relative
/// `extends` resolve.
fn file(text: &str) -> Arc<SourceFile> {
    SourceFile::new("tests/blueprints/ok/inline.yaml", text.to_string())
}

fn with_overrides(overrides: &str) -> Arc<SourceFile> {
    file(&format!("{BLUEPRINT}overrides:\n{overrides}"))
}

fn set(blueprint: &Arc<SourceFile>, sets: &[(&str, &str)]) -> Result<Compiled, CompileError> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(path, value)| (path.to_string(), value.to_string()))
        .collect();
    compile_with_overrides(blueprint, SchemaSet::embedded(), &sets, Format::Yaml)
}

fn errors(result: Result<Compiled, CompileError>) -> Vec<String> {
    match result {
        Err(CompileError::Blueprint(diagnostics)) => {
            diagnostics.iter().map(|d| d.render()).collect()
        }
        Err(other) => panic!("internal error: {other}"),
        Ok(compiled) => panic!("compiled:\n{}", compiled.main().text),
    }
}

fn cpu_options(compiled: &Compiled) -> Expr {
    let data = &compiled.main().template.resources["GeneralLaunchTemplate"].properties["LaunchTemplateData"];
    match data {
        Expr::Map(data) => data.get("CpuOptions").cloned().unwrap_or(Expr::Bool(false)),
        other => panic!("launch template data is {other:?}"),
    }
}

const CPU: &str = "  - resource: GeneralLaunchTemplate\n    path: Properties.LaunchTemplateData.CpuOptions.CoreCount\n    value: 1\n";

#[test]
fn set_changes_an_override_value_like_any_other_field() {
    let blueprint = with_overrides(CPU);
    let compiled = set(&blueprint, &[("overrides.0.value", "4")]).expect("compiles");
    assert_eq!(
        cpu_options(&compiled),
        Expr::map([("CoreCount", Expr::Int(4))])
    );
}

#[test]
fn a_set_override_naming_an_unknown_resource_is_located_at_the_set_argument() {
    let blueprint = with_overrides(CPU);
    let rendered = errors(set(
        &blueprint,
        &[("overrides.0.resource", "GeneralLaunch")],
    ));
    assert_eq!(rendered.len(), 1, "{rendered:#?}");
    assert!(
        rendered[0].contains("the blueprint makes no resource `GeneralLaunch`")
            && rendered[0].contains("--> --set:1:"),
        "{}",
        rendered[0]
    );
}

#[test]
fn an_extending_blueprint_replaces_the_overrides_of_its_base() {
    // The base overrides a resource this blueprint does not make; its own
    // list replaces the base's whole, as every list does.
    let text = format!(
        "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\nextends: ../bases/overrides-base.yaml\n{}overrides:\n{CPU}",
        &BLUEPRINT[BLUEPRINT.find("nodeGroups:").expect("groups")..]
    );
    let compiled = compile(&file(&text)).expect("compiles");
    assert_eq!(
        cpu_options(&compiled),
        Expr::map([("CoreCount", Expr::Int(1))])
    );
}

#[test]
fn an_override_that_breaks_the_signal_is_an_error_located_at_the_override() {
    let blueprint = with_overrides(
        "  - resource: GeneralLaunchTemplate\n    path: Properties.LaunchTemplateData.UserData\n    value: {Fn::Base64: \"#!/bin/bash\\n/etc/eks/bootstrap.sh demo\\n\"}\n",
    );
    let compiled = compile(&blueprint).expect("compiles, with findings");
    assert!(compiled.has_errors());
    let signal = compiled
        .diagnostics
        .iter()
        .find(|d| d.code == Some("E4006"))
        .expect("the signal finding");
    // Line 19 is the override's `path`.
    assert_eq!(signal.span.map(|s| s.line), Some(19), "{}", signal.render());
}

#[test]
fn an_overridden_property_takes_its_unused_parameter_with_it() {
    let blueprint = with_overrides(
        "  - resource: GeneralLaunchTemplate\n    path: Properties.LaunchTemplateData.ImageId\n    value: ami-0123456789abcdef0\n",
    );
    let compiled = compile(&blueprint).expect("compiles");
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    assert!(
        compiled.main().template.parameters.is_empty(),
        "{:?}",
        compiled.main().template.parameters.keys()
    );
}

#[test]
fn later_overrides_win_and_every_failed_one_is_reported() {
    let blueprint = with_overrides(&format!(
        "{CPU}  - resource: GeneralLaunchTemplate\n    path: Properties.LaunchTemplateData.CpuOptions.CoreCount\n    value: 2\n"
    ));
    let compiled = compile(&blueprint).expect("compiles");
    assert_eq!(
        cpu_options(&compiled),
        Expr::map([("CoreCount", Expr::Int(2))])
    );
    let blueprint = with_overrides(
        "  - resource: Nope\n    path: Properties.X\n    value: 1\n  - resource: GeneralNodeGroup\n    path: Properties.MinSize.X\n    value: 1\n",
    );
    let rendered = errors(compile(&blueprint));
    assert_eq!(rendered.len(), 2, "{rendered:#?}");
}
