//! The book documents what the code does: its reference pages (fields,
//! finding IDs, commands) are generated and kept current, and its guide
//! names every example and only findings that exist.

/// The chapter of the book that explains findings at length.
const FINDINGS_GUIDE: &str = "docs/src/guide/validate.md";
/// The chapter of the book that lists the examples.
const EXAMPLES_GUIDE: &str = "docs/src/guide/examples.md";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Compares a generated page of the book with its committed copy;
/// `INSTA_UPDATE=always` (as for the snapshots) writes it anew instead.
fn assert_current(path: &str, generated: &str, source: &str) {
    if std::env::var("INSTA_UPDATE").is_ok_and(|update| update == "always") {
        std::fs::write(path, generated).unwrap_or_else(|error| panic!("{path}: {error}"));
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} differs from what {source} generates; \
         regenerate it with `INSTA_UPDATE=always cargo test --test docs`"
    );
}

#[test]
fn the_findings_reference_lists_every_finding_with_its_level() {
    let page = eksynth::findings_reference::reference();
    for (id, meaning) in eksynth::validate::FINDINGS {
        let level = eksynth::diagnostic::Severity::of_id(id).name();
        assert!(
            page.contains(&format!(
                "| `{id}` | {level} | {} |",
                meaning.replace('|', "\\|")
            )),
            "the findings reference does not give `{id}` its level {level} and meaning"
        );
    }
}

#[test]
fn the_committed_findings_reference_is_the_generated_one() {
    assert_current(
        "docs/src/reference/findings.md",
        &eksynth::findings_reference::reference(),
        "the findings registry (eksynth::validate::FINDINGS)",
    );
}

#[test]
fn every_example_is_listed_in_the_book() {
    let guide = read(EXAMPLES_GUIDE);
    for entry in std::fs::read_dir("examples").expect("examples") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        assert!(
            guide.contains(&format!("| `{name}` |")),
            "example `{name}` is not in {EXAMPLES_GUIDE}"
        );
    }
}

/// The first cell of each table row in `text`, when it is code: `` | `x` | ``.
fn code_cells(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| `")?.split_once("` |"))
        .map(|(cell, _)| cell)
        .collect()
}

/// The explanations of findings in the guide's table (`| `ID` | level |`)
/// name findings that exist, at their level.
#[test]
fn the_guide_explains_only_findings_that_exist_at_their_level() {
    let guide = read(FINDINGS_GUIDE);
    let rows: Vec<(&str, &str)> = guide
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.strip_prefix("| `")?.split_once("` | ")?;
            let is_id = id.len() == 5
                && id.starts_with(['E', 'W', 'I'])
                && id[1..].chars().all(|c| c.is_ascii_digit());
            is_id.then(|| (id, rest.split(" |").next().unwrap_or_default()))
        })
        .collect();
    assert!(
        rows.len() >= 40,
        "the table of findings in detail was not found"
    );
    for (id, level) in rows {
        assert!(
            eksynth::validate::FINDINGS
                .iter()
                .any(|(known, _)| *known == id),
            "{FINDINGS_GUIDE} explains `{id}`, which is no finding"
        );
        let expected = eksynth::diagnostic::Severity::of_id(id).name();
        assert!(
            level == expected,
            "{FINDINGS_GUIDE} gives `{id}` the level {level}, not {expected}"
        );
    }
}

#[test]
fn the_book_lists_no_example_that_does_not_exist() {
    let guide = read(EXAMPLES_GUIDE);
    let listed = code_cells(&guide);
    assert!(listed.len() >= 14, "the examples table was not found");
    for name in listed {
        assert!(
            std::path::Path::new("examples").join(name).is_dir(),
            "{EXAMPLES_GUIDE} lists the example `{name}`, which does not exist"
        );
    }
}

#[test]
fn the_committed_blueprint_schema_is_the_generated_one() {
    let committed =
        std::fs::read_to_string("schemas/blueprint.schema.json").expect("committed schema");
    let mut generated = serde_json::to_string_pretty(&eksynth::blueprint::schema::json_schema())
        .expect("serializes");
    generated.push('\n');
    assert_eq!(
        committed, generated,
        "regenerate with `eksynth schema > schemas/blueprint.schema.json`"
    );
}

#[test]
fn every_example_and_valid_corpus_blueprint_matches_the_schema() {
    let schema = eksynth::blueprint::schema::json_schema();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("the schema compiles");
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir("examples")
        .expect("examples")
        .map(|e| e.expect("entry").path().join("blueprint.yaml"))
        .filter(|path| path.exists())
        .collect();
    paths.extend(
        std::fs::read_dir("tests/blueprints/ok")
            .expect("corpus")
            .map(|e| e.expect("entry").path()),
    );
    // Bases that other blueprints extend: the presets and an example's.
    paths.extend(
        std::fs::read_dir("blueprints/presets")
            .expect("presets")
            .map(|e| e.expect("entry").path()),
    );
    paths.push("examples/env-base/base.yaml".into());
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable");
        let value: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn the_schema_rejects_what_the_loader_rejects_by_name() {
    let schema = eksynth::blueprint::schema::json_schema();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("compiles");
    let text =
        std::fs::read_to_string("tests/blueprints/err/unknown-field.yaml").expect("readable");
    let value: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
    assert!(!validator.is_valid(&value));
}

/// The field reference of the book is what the field tables the loader
/// decodes with generate.
#[test]
fn the_committed_field_reference_is_the_generated_one() {
    assert_current(
        "docs/src/reference/fields.md",
        &eksynth::blueprint::schema::reference(),
        "the field tables in src/blueprint/",
    );
}

/// The subcommands a help text lists under `Commands:`, but `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// What `eksynth ARGS --help` prints.
fn help(args: &[String]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_eksynth"))
        .args(args)
        .arg("--help")
        .output()
        .expect("eksynth runs");
    assert!(output.status.success(), "eksynth {args:?} --help fails");
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

/// The command reference: every command's `--help`, as clap renders it,
/// the subcommands of a command after it.
fn command_reference() -> String {
    let mut out = String::from(
        "# Commands\n\n\
         <!-- Written by tests/docs.rs from `eksynth --help` and every subcommand's; \
         regenerate with `INSTA_UPDATE=always cargo test --test docs`. -->\n\n\
         Every command and option, as `--help` prints them. \
         [Using the commands](../guide/commands.md) says more about each.\n",
    );
    let mut pending = vec![Vec::<String>::new()];
    while let Some(args) = pending.pop() {
        let text = help(&args);
        let name = std::iter::once("eksynth".to_string())
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "\n## `{name}`\n\n```text\n{}\n```\n",
            text.trim_end()
        ));
        // Depth first, in the order help lists them.
        for sub in subcommands(&text).into_iter().rev() {
            let mut next = args.clone();
            next.push(sub);
            pending.push(next);
        }
    }
    out
}

#[test]
fn the_committed_command_reference_is_the_generated_one() {
    assert_current(
        "docs/src/reference/commands.md",
        &command_reference(),
        "`eksynth --help` and every subcommand's",
    );
}

#[test]
fn every_example_blueprint_names_the_schema_for_editors() {
    let mut blueprints: Vec<std::path::PathBuf> = std::fs::read_dir("examples")
        .expect("examples")
        .map(|e| e.expect("entry").path().join("blueprint.yaml"))
        .filter(|path| path.exists())
        .collect();
    blueprints.push("examples/env-base/base.yaml".into());
    for path in blueprints {
        let text = std::fs::read_to_string(&path).expect("readable");
        let first = text.lines().next().unwrap_or_default();
        let schema = first
            .strip_prefix("# yaml-language-server: $schema=")
            .unwrap_or_else(|| panic!("{}: first line {first:?}", path.display()));
        let target = path.parent().expect("folder").join(schema);
        assert!(target.is_file(), "{}: {schema} is no file", path.display());
    }
}

/// A hop limit of 1 cuts pods on the pod network off from the node role's
/// credentials, and nothing fails until an agent runs: the `hopLimit`
/// reference and the book's IMDS chapter say who needs 2 and what to use
/// instead, and the chapter names the sources it rests on.
#[test]
fn the_hop_limit_reference_says_which_workloads_need_two_and_what_to_use_instead() {
    let reference = eksynth::blueprint::schema::reference();
    let row = reference
        .lines()
        .find(|line| line.starts_with("| `hopLimit` |"))
        .expect("a `hopLimit` row in the field reference");
    for needed in [
        "hostNetwork",
        "pod network",
        "CloudWatch agent",
        "Pod Identity",
        "IRSA",
        "W5002",
        "../guide/imds.md",
    ] {
        assert!(
            row.contains(needed),
            "the `hopLimit` row does not say {needed:?}: {row}"
        );
    }
    let chapter = read("docs/src/guide/imds.md");
    for needed in [
        "HostProcess",
        "EKS Pod Identity",
        "IRSA",
        "aws/aws-eks-best-practices, `latest/bpg/security/iam.adoc`",
        "aws/amazon-cloudwatch-agent",
        "awsdocs/amazon-eks-user-guide, `latest/ug/nodes/launch-templates.adoc`",
    ] {
        assert!(
            chapter.contains(needed),
            "the IMDS chapter does not say {needed:?}"
        );
    }
}
