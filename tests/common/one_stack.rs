//! What the tests that read one stack's resources share: a cluster block
//! every group of theirs can join, and the resources of a blueprint that
//! compiles to one stack without an error.

use eksynth::cfn;
use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;
use serde_json::{Map, Value};

/// A blueprint's `cluster:` block, every value given.
pub const CLUSTER: &str = r#"cluster:
  name: demo
  kubernetesVersion: "1.33"
  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: Y2VydA==
  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: sg-0123456789abcdef0
  vpc: vpc-0123456789abcdef0
"#;

/// The resources of the one stack the blueprint `text` (named `name`)
/// makes, as JSON; the blueprint's errors, rendered, fail the test.
pub fn resources(name: &str, text: &str) -> Map<String, Value> {
    let file = SourceFile::new(name, text.to_string());
    let compiled = match compile(&file) {
        Ok(compiled) => compiled,
        Err(CompileError::Blueprint(diagnostics)) => panic!("{}", rendered(&diagnostics)),
        Err(other) => panic!("{other}"),
    };
    assert!(
        !compiled.has_errors(),
        "{}",
        rendered(&compiled.diagnostics)
    );
    let [stack] = compiled.stacks.as_slice() else {
        panic!("one stack");
    };
    let json: Value = serde_json::from_str(&cfn::json::emit(&stack.template)).expect("JSON");
    json["Resources"].as_object().expect("resources").clone()
}

fn rendered(diagnostics: &[eksynth::diagnostic::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| d.render())
        .collect::<Vec<_>>()
        .join("\n")
}
