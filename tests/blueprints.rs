//! Blueprints as data: every file in `blueprints/ok/` synthesizes to its
//! golden template, and every file in `blueprints/err/` gets exactly its
//! golden diagnostics and no template.

mod golden;

use std::path::Path;

use eksynth::cfn;
use eksynth::compile::{CompileError, compile};
use eksynth::output;
use eksynth::source::SourceFile;

#[test]
fn valid_blueprints_synthesize_to_their_golden_templates() {
    insta::glob!("blueprints/ok/*.yaml", |path| {
        let (compiled, rendered) = golden::compile_clean(path);
        // Warnings are part of the golden output: a new one shows in review.
        let mut golden = rendered.join("\n");
        if !golden.is_empty() {
            golden = format!("# diagnostics\n{golden}\n# template\n");
        }
        // One template, or each stack's under its name.
        for stack in &compiled.stacks {
            if compiled.stacks.len() > 1 {
                golden.push_str(&format!("# stack {}\n", stack.name));
            }
            golden.push_str(&stack.text);
        }
        insta::assert_snapshot!(golden);
    });
}

#[test]
fn invalid_blueprints_get_their_golden_diagnostics_and_no_template() {
    insta::glob!("blueprints/err/*.yaml", |path| {
        let file = golden::load(path);
        // An error of the blueprint, or of the template it makes (which is
        // then not written).
        let diagnostics = match compile(&file) {
            Ok(compiled) if compiled.has_errors() => compiled.diagnostics,
            Ok(_) => panic!("{} should not compile", path.display()),
            Err(CompileError::Blueprint(diagnostics)) => diagnostics,
            Err(error) => panic!("{}: internal error {error}", path.display()),
        };
        assert!(
            diagnostics.iter().any(|d| d.is_error()),
            "no error reported"
        );
        let rendered: Vec<String> = diagnostics.iter().map(|d| d.render()).collect();
        insta::assert_snapshot!(rendered.join("\n"));
    });
}

#[test]
fn every_example_template_is_what_its_blueprint_synthesizes() {
    let mut checked = 0;
    for entry in std::fs::read_dir("examples").expect("examples folder") {
        let dir = entry.expect("entry").path();
        let blueprint = dir.join("blueprint.yaml");
        if !blueprint.exists() {
            continue;
        }
        let file = SourceFile::new(
            blueprint.display().to_string(),
            std::fs::read_to_string(&blueprint).expect("readable"),
        );
        let compiled = compile(&file).unwrap_or_else(|e| panic!("{}: {e:?}", blueprint.display()));
        let rendered: Vec<String> = compiled.diagnostics.iter().map(|d| d.render()).collect();
        assert!(
            rendered.is_empty(),
            "{} does not validate clean:\n{}",
            blueprint.display(),
            rendered.join("\n")
        );
        // Exactly the stacks' templates sit beside the blueprint, named
        // after the stacks, each as `synth` writes it; with their parameters
        // files when the example has any (`synth --parameters-file`).
        let parameters_files = std::fs::read_dir(&dir).expect("example dir").any(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .ends_with(".parameters.json")
        });
        let expected: Vec<(String, String)> = compiled
            .stacks
            .iter()
            .flat_map(|stack| {
                let parameters: Vec<(String, String)> = stack
                    .template
                    .parameters
                    .iter()
                    .map(|(name, parameter)| {
                        let default = parameter.default.as_ref().and_then(|d| d.as_str());
                        (name.clone(), default.unwrap_or_default().to_string())
                    })
                    .collect();
                output::stack_files(
                    &stack.name,
                    "yaml",
                    &stack.text,
                    parameters_files.then_some(parameters.as_slice()),
                )
            })
            .collect();
        let inputs: Vec<std::path::PathBuf> = compiled
            .files
            .iter()
            .map(|f| std::path::PathBuf::from(&f.name))
            .collect();
        let report = output::check(&dir, &expected, &inputs);
        assert!(
            report.is_clean(),
            "{} is stale: run `eksynth synth {} --out-dir {}`\n{report:#?}",
            dir.display(),
            blueprint.display(),
            dir.display()
        );
        checked += 1;
    }
    // Every example directory but the base of `env-*` has a blueprint.
    let directories = std::fs::read_dir("examples").expect("examples").count();
    assert_eq!(checked, directories - 1, "examples without a blueprint?");
    assert!(checked >= 14, "expected the 14 examples, found {checked}");
}

#[test]
fn synthesizing_twice_gives_identical_bytes_in_both_formats() {
    for path in [
        "examples/quickstart/blueprint.yaml",
        "examples/official-nodegroup/blueprint.yaml",
    ] {
        let file = golden::load(Path::new(path));
        let compiled = compile(&file).expect("compiles");
        let [stack] = compiled.stacks.as_slice() else {
            panic!("{path} makes one stack");
        };
        let again = compile(&file).expect("compiles");
        assert_eq!(stack.text, again.stacks[0].text);
        let first = &stack.template;
        let second = &again.stacks[0].template;
        assert_eq!(cfn::yaml::emit(first), cfn::yaml::emit(second));
        assert_eq!(cfn::json::emit(first), cfn::json::emit(second));
    }
}

#[test]
fn synthesized_templates_read_back_identically_in_both_formats() {
    insta::glob!("blueprints/ok/*.yaml", |path| {
        for stack in compile(&golden::load(path)).expect("compiles").stacks {
            let template = stack.template;
            for (name, text) in [
                ("t.yaml", cfn::yaml::emit(&template)),
                ("t.json", cfn::json::emit(&template)),
            ] {
                let read = cfn::read::read(&SourceFile::new(name, text));
                assert_eq!(
                    read.as_ref().ok(),
                    Some(&template),
                    "{} as {name}",
                    path.display()
                );
            }
        }
    });
}

#[test]
fn the_inline_providers_are_the_tested_files_byte_for_byte() {
    let read = |part: &str| {
        std::fs::read_to_string(Path::new("blueprints/aws-auth").join(part))
            .expect("provider source")
    };
    for (example, part) in [
        (
            "aws-auth-config-map/aws-auth-config-map.yaml",
            "aws_auth.py",
        ),
        (
            "shared-node-role/shared-node-role.yaml",
            "access_entries.py",
        ),
    ] {
        let source = read("common.py") + &read(part);
        let path = Path::new("examples").join(example);
        let text = std::fs::read_to_string(path).expect("committed template");
        let template =
            cfn::read::read(&SourceFile::new("template.yaml", text)).expect("reads back");
        let code = template.resources["AwsAuthProvider"].properties["Code"].clone();
        let cfn::Expr::Map(code) = code else {
            panic!("Code is not a mapping: {code:?}");
        };
        assert_eq!(
            code.get("ZipFile").and_then(|z| z.as_str()),
            Some(source.as_str()),
            "{example}"
        );
    }
}

#[test]
fn resources_that_hold_data_say_what_happens_to_it_on_delete_and_replace() {
    // The resource types eksynth emits that CloudFormation deletes, data
    // and all, unless a policy says otherwise.
    const STATEFUL: &[&str] = &["AWS::Logs::LogGroup"];
    let mut seen = 0;
    for entry in std::fs::read_dir("examples").expect("examples folder") {
        let blueprint = entry.expect("entry").path().join("blueprint.yaml");
        if !blueprint.exists() {
            continue;
        }
        for stack in compile(&golden::load(&blueprint)).expect("compiles").stacks {
            for (id, resource) in &stack.template.resources {
                if !STATEFUL.contains(&resource.kind.as_str()) {
                    continue;
                }
                seen += 1;
                assert!(
                    resource.deletion_policy.is_some() && resource.update_replace_policy.is_some(),
                    "{id} in {} has no explicit DeletionPolicy and UpdateReplacePolicy",
                    blueprint.display()
                );
            }
        }
    }
    assert!(seen > 0, "no example emits a log group any more");
}
