//! Suppressions and the levels of findings: a note never fails, a
//! suppression of a renamed finding ID keeps working and says so, and every
//! message about a suppression points at the file it is written in.

use eksynth::compile::{CompileError, Compiled, compile};
use eksynth::diagnostic::{Diagnostic, Severity};
use eksynth::source::SourceFile;

/// Eight self-managed groups, each with its own user data: the template is
/// larger than an inline `deploy` sends (I3005).
const LARGE: &str = r#"apiVersion: eksynth.io/v1
kind: NodeBlueprint
cluster:
  name: demo
  kubernetesVersion: "1.33"
  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: Y2VydA==
  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: sg-0123456789abcdef0
  vpc: vpc-0123456789abcdef0
defaults:
  instanceType: m6i.large
  maxSize: 3
  subnets: [subnet-0123456789abcdef0]
nodeGroups:
  - name: group-0
  - name: group-1
  - name: group-2
  - name: group-3
  - name: group-4
  - name: group-5
  - name: group-6
  - name: group-7
"#;

fn compiled(text: &str) -> Compiled {
    compile(&SourceFile::new("nodes.yaml", text.to_string()))
        .unwrap_or_else(|e| panic!("compiles: {e:?}"))
}

fn rendered(diagnostics: &[Diagnostic]) -> String {
    let all: Vec<String> = diagnostics.iter().map(Diagnostic::render).collect();
    all.join("\n")
}

fn with_suppression(id: &str) -> String {
    format!("{LARGE}suppressions:\n  - id: {id}\n    reason: deployed with --s3-bucket\n")
}

#[test]
fn a_template_too_large_for_an_inline_deploy_is_a_note_not_a_warning() {
    let compiled = compiled(LARGE);
    let size: Vec<&Diagnostic> = compiled.diagnostics.iter().collect();
    assert_eq!(size.len(), 1, "{}", rendered(&compiled.diagnostics));
    assert_eq!(size[0].code, Some("I3005"));
    assert_eq!(size[0].severity, Severity::Note);
    assert!(!compiled.has_errors());
    assert!(
        size[0]
            .render()
            .starts_with("note[I3005]: the template is "),
        "{}",
        size[0].render()
    );
    assert!(
        size[0]
            .help
            .as_deref()
            .is_some_and(|help| help.contains("--s3-bucket")),
        "{:?}",
        size[0].help
    );
}

#[test]
fn a_finding_id_starting_with_i_is_a_note() {
    assert_eq!(Severity::of_id("I3005"), Severity::Note);
    assert_eq!(Severity::Note.name(), "note");
    assert_eq!(Severity::of_id("W3009"), Severity::Warning);
    assert_eq!(Severity::of_id("E3006"), Severity::Error);
}

#[test]
fn a_note_is_suppressed_by_its_id() {
    let compiled = compiled(&with_suppression("I3005"));
    assert!(
        compiled.diagnostics.is_empty(),
        "{}",
        rendered(&compiled.diagnostics)
    );
}

#[test]
fn a_suppression_of_the_old_id_still_applies_and_is_told_the_new_one() {
    let compiled = compiled(&with_suppression("W3005"));
    assert_eq!(
        compiled.diagnostics.len(),
        1,
        "{}",
        rendered(&compiled.diagnostics)
    );
    let renamed = &compiled.diagnostics[0];
    assert_eq!(renamed.severity, Severity::Warning);
    assert_eq!(renamed.message, "finding `W3005` was renamed to `I3005`");
    let span = renamed.span.expect("located");
    let line = LARGE.lines().count() + 2;
    assert_eq!((span.line, span.column, span.len), (line, 9, 5));
    assert!(
        renamed
            .help
            .as_deref()
            .is_some_and(|help| help.starts_with("write `id: I3005`")),
        "{:?}",
        renamed.help
    );
}

#[test]
fn a_suppression_of_the_old_id_that_matches_nothing_is_reported_once() {
    let small = LARGE.replace(
        "  - name: group-1\n  - name: group-2\n  - name: group-3\n",
        "",
    );
    let compiled = compiled(&format!(
        "{small}suppressions:\n  - id: W3005\n    reason: deployed with --s3-bucket\n"
    ));
    let messages: Vec<&str> = compiled
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages, ["suppression of `W3005` matches no finding"]);
}

#[test]
fn an_unknown_suppression_id_in_a_base_is_reported_in_the_base() {
    let dir = std::env::temp_dir().join(format!("eksynth-suppressions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let base = dir.join("base.yaml");
    std::fs::write(
        &base,
        format!("{LARGE}suppressions:\n  - id: W9999\n    reason: none\n"),
    )
    .expect("base");
    let child = dir.join("nodes.yaml");
    let text = "apiVersion: eksynth.io/v1\nkind: NodeBlueprint\nextends: ./base.yaml\n";
    let result = compile(&SourceFile::new(
        child.display().to_string(),
        text.to_string(),
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let Err(CompileError::Blueprint(diagnostics)) = result else {
        panic!("an unknown suppression ID is an error");
    };
    assert_eq!(diagnostics.len(), 1, "{}", rendered(&diagnostics));
    let error = &diagnostics[0];
    assert_eq!(error.message, "`W9999` is not a finding ID");
    assert_eq!(
        error.file.name,
        base.display().to_string(),
        "{}",
        error.render()
    );
}

/// One small group whose nodes get public addresses, with `extra` appended.
fn public_nodes(extra: &str) -> Compiled {
    let small = LARGE.replace(
        "  - name: group-1\n  - name: group-2\n  - name: group-3\n  - name: group-4\n  - name: group-5\n  - name: group-6\n  - name: group-7\n",
        "",
    );
    let public = small.replace(
        "  maxSize: 3\n",
        "  maxSize: 3\n  associatePublicIpAddress: true\n",
    );
    compiled(&format!("{public}{extra}"))
}

#[test]
fn public_nodes_are_warned_of_once_at_the_field_under_their_finding_id() {
    let compiled = public_nodes("");
    assert_eq!(
        compiled.diagnostics.len(),
        1,
        "{}",
        rendered(&compiled.diagnostics)
    );
    let warning = &compiled.diagnostics[0];
    assert_eq!(warning.code, Some("W8006"));
    assert_eq!(warning.severity, Severity::Warning);
    let span = warning.span.expect("located");
    assert_eq!((span.line, span.column), (14, 29));
}

#[test]
fn a_suppression_of_public_nodes_silences_the_warning_at_the_field() {
    let compiled =
        public_nodes("suppressions:\n  - id: W8006\n    reason: the nodes sit in public subnets\n");
    assert!(
        compiled.diagnostics.is_empty(),
        "{}",
        rendered(&compiled.diagnostics)
    );
}

#[test]
fn public_nodes_an_override_makes_are_warned_of_at_the_override_too() {
    let compiled = public_nodes(
        "overrides:\n  - resource: Group0LaunchTemplate\n    path: Properties.LaunchTemplateData.NetworkInterfaces\n    value: [{DeviceIndex: 0, AssociatePublicIpAddress: true, Groups: [!Ref NodeSecurityGroup]}]\n",
    );
    let at: Vec<_> = compiled
        .diagnostics
        .iter()
        .map(|d| (d.code, d.span.map(|s| (s.line, s.column))))
        .collect();
    // The loader's warning at the field, and the finding at the override.
    assert_eq!(
        at,
        [
            (Some("W8006"), Some((14, 29))),
            (Some("W8006"), Some((20, 11)))
        ],
        "{}",
        rendered(&compiled.diagnostics)
    );
}
