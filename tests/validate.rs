//! The bad-input corpus of the validator: every case in `tests/validate/`
//! (and a few generated here, too big to commit) gets exactly the findings
//! its header expects, as (finding ID, template path) pairs. See
//! `tests/validate/README.md` for the header format.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use eksynth::check::check_file;
use eksynth::diagnostic::Severity;
use eksynth::source::SourceFile;
use eksynth::validate::{FINDINGS, SchemaSet};

/// The corpus, as named in messages; read from below the package root.
const CORPUS: &str = "tests/validate";

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS)
}

/// IDs no case has to exercise: the blueprint corpus (`tests/blueprints/err`)
/// covers invalid blueprints; a deprecated Lambda runtime turns into a
/// blocked one with time, so `W7008` is exercised with a fixed date instead
/// (`EKSYNTH_TODAY` in `tests/cmd/validate-lambda-runtime-*.toml`, and the
/// unit tests of `validate::catalogs`).
const EXEMPT: &[&str] = &["E0001", "W7008"];

/// One (finding ID, template path) pair; the path is `""` for findings about
/// the whole file (template size, unreadable file).
type Pair = (String, String);

struct Case {
    /// Where it comes from: a file of the corpus, or `generated/<name>`.
    name: String,
    text: String,
    /// Sorted; empty for `# expect: clean`.
    expected: Vec<Pair>,
    /// Set when the validator is known to get this case wrong: the case
    /// documents the right answer, and the test fails once it is right.
    known_bug: Option<String>,
}

/// Reads the `# expect:` / `# known-bug:` / `# cfn-lint:` lines of a header.
/// Other comment lines are free text. Returns an error for a malformed one.
fn parse_header(name: &str, lines: &[&str]) -> Result<(Vec<Pair>, Option<String>), String> {
    let mut expected = Vec::new();
    let mut clean = false;
    let mut known_bug = None;
    for line in lines {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim();
        if let Some(value) = rest.strip_prefix("expect:") {
            let mut words = value.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("clean"), None, _) => clean = true,
                (Some(id), path, None) => {
                    if !FINDINGS.iter().any(|(known, _)| *known == id) {
                        return Err(format!("{name}: `{id}` is not a finding ID"));
                    }
                    expected.push((id.to_string(), path.unwrap_or("").to_string()));
                }
                _ => {
                    return Err(format!(
                        "{name}: malformed `{line}`; write `# expect: ID PATH` or `# expect: clean`"
                    ));
                }
            }
        } else if let Some(value) = rest.strip_prefix("known-bug:") {
            known_bug = Some(value.trim().to_string());
        } else if let Some(value) = rest.strip_prefix("cfn-lint:") {
            let rule = value.trim();
            let valid = rule.len() == 5
                && rule.starts_with(['E', 'W', 'I'])
                && rule[1..].bytes().all(|b| b.is_ascii_digit());
            if !valid {
                return Err(format!("{name}: `{rule}` is not a cfn-lint rule ID"));
            }
        } else if rest.starts_with("expect")
            || rest.starts_with("known")
            || rest.starts_with("cfn-lint")
        {
            return Err(format!("{name}: unrecognised header line `{line}`"));
        }
    }
    match (clean, expected.is_empty()) {
        (true, false) => Err(format!(
            "{name}: `# expect: clean` together with expected findings"
        )),
        (false, true) => Err(format!("{name}: no `# expect:` line")),
        _ => {
            expected.sort();
            Ok((expected, known_bug))
        }
    }
}

/// The corpus files: YAML cases carry their header as leading comments;
/// JSON cases, which cannot have comments, carry it in `<file>.expect`.
fn corpus() -> Result<Vec<Case>, Vec<String>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/validate exists")
        .map(|entry| entry.expect("readable entry").path())
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for path in &paths {
        let file_name = path.file_name().unwrap().to_string_lossy().to_string();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let sidecar = PathBuf::from(format!("{}.expect", path.display()));
        let header: Vec<String> = match extension {
            "yaml" | "yml" => {
                if sidecar.exists() {
                    problems.push(format!("{file_name}: YAML cases keep their header in the file, not in a `.expect` file"));
                    continue;
                }
                let text = std::fs::read_to_string(path).expect("readable case");
                text.lines()
                    .take_while(|line| line.starts_with('#'))
                    .map(str::to_string)
                    .collect()
            }
            "json" => match std::fs::read_to_string(&sidecar) {
                Ok(text) => text.lines().map(str::to_string).collect(),
                Err(_) => {
                    problems.push(format!(
                        "{file_name}: JSON cases need a `{file_name}.expect` header file"
                    ));
                    continue;
                }
            },
            "expect" => {
                let case = path.with_extension("");
                if case.extension().and_then(|e| e.to_str()) != Some("json") || !case.exists() {
                    problems.push(format!(
                        "{file_name}: a `.expect` file belongs next to the JSON case it names"
                    ));
                }
                continue;
            }
            _ if file_name == "README.md" => continue,
            _ => {
                problems.push(format!(
                    "{file_name}: not a case (`.yaml`, `.json` + `.json.expect`) nor the README"
                ));
                continue;
            }
        };
        let lines: Vec<&str> = header.iter().map(String::as_str).collect();
        match parse_header(&file_name, &lines) {
            Ok((expected, known_bug)) => cases.push(Case {
                name: file_name,
                text: std::fs::read_to_string(path).expect("readable case"),
                expected,
                known_bug,
            }),
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems)
    }
}

fn pair(id: &str, path: &str) -> Pair {
    (id.to_string(), path.to_string())
}

/// Cases too big to commit: quotas, and template sizes (a committed clean
/// case padded with comments to an exact byte count).
fn generated() -> Vec<Case> {
    let group = |i: usize| {
        format!("  Sg{i}: {{Type: AWS::EC2::SecurityGroup, Properties: {{GroupDescription: g}}}}\n")
    };
    let resources_of = |count: usize| {
        let mut text = String::from("Resources:\n");
        (0..count).for_each(|i| text.push_str(&group(i)));
        text
    };
    let resources = resources_of(501);

    let mut parameters = String::from("Parameters:\n");
    (0..201)
        .for_each(|i| parameters.push_str(&format!("  P{i}:\n    Type: String\n    Default: x\n")));
    // Every parameter used, so that only the count is wrong.
    let used: Vec<String> = (0..201).map(|i| format!("!Ref P{i}")).collect();
    parameters.push_str(&format!(
        "Resources:\n  Sg0: {{Type: AWS::EC2::SecurityGroup, Properties: {{GroupDescription: !Join ['', [{}]]}}}}\n",
        used.join(", ")
    ));

    let mut outputs = String::from("Resources:\n");
    outputs.push_str(&group(0));
    outputs.push_str("Outputs:\n");
    (0..201).for_each(|i| outputs.push_str(&format!("  O{i}:\n    Value: !Ref Sg0\n")));

    // Conditions in one cycle of 3,000, each naming the next: reported
    // once, and checked without recursing along the chain.
    let mut cycle = String::from("Conditions:\n");
    (0..3000)
        .for_each(|i| cycle.push_str(&format!("  C{i}: !Not [!Condition C{}]\n", (i + 1) % 3000)));
    cycle.push_str(
        "Resources:\n  Sg0: {Type: AWS::EC2::SecurityGroup, Properties: {GroupDescription: !If [C0, a, b]}}\n",
    );

    let clean =
        std::fs::read_to_string(corpus_dir().join("clean-node-group.yaml")).expect("clean case");
    let padded = |bytes: usize| {
        let mut text = clean.clone();
        let line = format!("# {}\n", "padding ".repeat(9));
        while text.len() + line.len() + 2 <= bytes {
            text.push_str(&line);
        }
        let rest = bytes - text.len();
        text.push_str(&format!("#{}\n", "-".repeat(rest - 2)));
        assert_eq!(text.len(), bytes);
        text
    };

    let case = |name: &str, text: String, expected: Vec<Pair>| Case {
        name: format!("generated/{name}"),
        text,
        expected,
        known_bug: None,
    };
    vec![
        case(
            "501-resources.yaml",
            resources,
            vec![pair("E3001", "Resources")],
        ),
        case(
            "201-parameters.yaml",
            parameters,
            vec![pair("E3002", "Parameters")],
        ),
        case("201-outputs.yaml", outputs, vec![pair("E3003", "Outputs")]),
        case(
            "3000-condition-cycle.yaml",
            cycle,
            // Its size alone is over what `deploy` sends inline.
            vec![pair("E2012", "Conditions/C0/Fn::Not"), pair("I3005", "")],
        ),
        case("400-resources.yaml", resources_of(400), Vec::new()),
        case(
            "401-resources.yaml",
            resources_of(401),
            vec![pair("W3009", "Resources")],
        ),
        case("51200-bytes.yaml", padded(51_200), Vec::new()),
        case("51201-bytes.yaml", padded(51_201), vec![pair("I3005", "")]),
        case(
            "1000000-bytes.yaml",
            padded(1_000_000),
            vec![pair("I3005", "")],
        ),
        case(
            "1000001-bytes.yaml",
            padded(1_000_001),
            vec![pair("E3006", "")],
        ),
    ]
}

/// The findings of a case as sorted pairs, and a line per finding for
/// messages. Diagnostics without a code are blueprint warnings (kept out)
/// or errors that are no finding at all (kept in, so they fail the case).
fn findings(case: &Case) -> (Vec<Pair>, Vec<String>) {
    let file: Arc<SourceFile> =
        SourceFile::new(format!("{CORPUS}/{}", case.name), case.text.clone());
    let report = check_file(&file, SchemaSet::embedded());
    let mut pairs = Vec::new();
    let mut lines = Vec::new();
    for diagnostic in &report.diagnostics {
        let id = match diagnostic.code {
            Some(code) => code.to_string(),
            None if diagnostic.severity == Severity::Error => "<no code>".to_string(),
            None => continue,
        };
        let path = diagnostic
            .label
            .as_deref()
            .and_then(|label| label.strip_prefix("in "))
            .unwrap_or("")
            .to_string();
        lines.push(format!("{id} {path}: {}", diagnostic.message));
        pairs.push((id, path));
    }
    pairs.sort();
    (pairs, lines)
}

fn all_cases() -> Vec<Case> {
    let mut cases = match corpus() {
        Ok(cases) => cases,
        Err(problems) => panic!("malformed corpus:\n  {}", problems.join("\n  ")),
    };
    cases.extend(generated());
    cases
}

fn show(pairs: &[Pair]) -> String {
    if pairs.is_empty() {
        return "(none)".to_string();
    }
    pairs
        .iter()
        .map(|(id, path)| format!("{id} {path}").trim_end().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sorted `left` minus sorted `right`, as multisets.
fn minus(left: &[Pair], right: &[Pair]) -> Vec<Pair> {
    let mut rest = right.to_vec();
    left.iter()
        .filter(|item| match rest.iter().position(|other| other == *item) {
            Some(at) => {
                rest.remove(at);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

#[test]
fn every_case_gets_exactly_its_expected_findings() {
    let cases = all_cases();
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for case in &cases {
        let (actual, lines) = findings(case);
        let right = actual == case.expected;
        match (&case.known_bug, right) {
            (None, true) => {}
            (Some(bug), true) => failures.push(format!(
                "{}: gets its expected findings now, so the known bug ({bug}) looks fixed: remove its `# known-bug:` line",
                case.name
            )),
            (known_bug, false) => {
                let mut text = format!(
                    "{}:\n    missing:    {}\n    unexpected: {}",
                    case.name,
                    show(&minus(&case.expected, &actual)),
                    show(&minus(&actual, &case.expected)),
                );
                for line in &lines {
                    text.push_str(&format!("\n    | {line}"));
                }
                match known_bug {
                    Some(bug) => known.push(format!("{text}\n    known bug: {bug}")),
                    None => failures.push(text),
                }
            }
        }
    }
    if !known.is_empty() {
        eprintln!(
            "{} known validator bug(s), still present:\n  {}",
            known.len(),
            known.join("\n  ")
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree with their headers:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
}

#[test]
fn the_corpus_is_large_enough() {
    let cases = corpus()
        .unwrap_or_else(|problems| panic!("malformed corpus:\n  {}", problems.join("\n  ")));
    assert!(cases.len() >= 40, "only {} cases in {CORPUS}", cases.len());
    let clean = cases
        .iter()
        .filter(|c| c.expected.is_empty() && c.known_bug.is_none())
        .count();
    assert!(clean >= 3, "only {clean} clean cases");
    let blueprints = cases
        .iter()
        .filter(|c| c.text.contains("apiVersion: eksynth.io/"))
        .count();
    assert!(blueprints >= 5, "only {blueprints} blueprint cases");
}

#[test]
fn every_finding_id_is_exercised() {
    // A known-bug case does not count: its finding is not produced as expected.
    let exercised: BTreeSet<String> = all_cases()
        .iter()
        .filter(|case| case.known_bug.is_none())
        .flat_map(|case| case.expected.iter().map(|(id, _)| id.clone()))
        .collect();
    let missing: Vec<&str> = FINDINGS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !EXEMPT.contains(id) && !exercised.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "finding IDs no case exercises: {}",
        missing.join(", ")
    );
}
