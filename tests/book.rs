//! The book (docs/src/) and the front pages (README.md, CONTRIBUTING.md) say
//! only what works: every YAML snippet is a blueprint that synthesizes, or,
//! under a fence of its own kind, a workflow, a pre-commit configuration or
//! an outline of fields checked against what they name; every relative link
//! resolves; every chapter is in SUMMARY.md.

use std::path::{Path, PathBuf};

use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;

/// The front pages, then every page of the book.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                found.push(path);
            }
        }
    }
    let mut found = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    walk(Path::new("docs/src"), &mut found);
    found
}

/// A fenced code block: its info string, the line of its opening fence
/// (from 1) and its text, less the fence's indentation (a block in a list
/// item is indented).
struct Block {
    info: String,
    line: usize,
    text: String,
    indent: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some(Block {
                        info: info.trim().to_string(),
                        line: index + 1,
                        text: String::new(),
                        indent: line.len() - trimmed.len(),
                    });
                }
            }
            Some(mut block) => {
                if trimmed.starts_with("```") {
                    found.push(block);
                } else {
                    let margin = line.len() - trimmed.len();
                    block.text.push_str(&line[margin.min(block.indent)..]);
                    block.text.push('\n');
                    open = Some(block);
                }
            }
        }
    }
    found
}

fn yaml(page: &Path, block: &Block) -> serde_json::Value {
    serde_saphyr::from_str(&block.text)
        .unwrap_or_else(|error| panic!("{}:{}: not YAML: {error}", page.display(), block.line))
}

/// The file a block includes whole (`{{#include PATH}}`, the path from the
/// page's folder, as mdBook reads it), if that is all the block holds.
fn included(page: &Path, block: &Block) -> Option<PathBuf> {
    let path = block
        .text
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    Some(page.parent()?.join(path.trim()))
}

/// A ```yaml block: a blueprint that synthesizes with no error. It is read
/// under the page's path, its lines numbered as in the page, so that a
/// diagnostic names the page and the line; a block that includes a file
/// is that file, read under its own path.
fn check_blueprint(page: &Path, block: &Block) -> Result<(), String> {
    let file = match included(page, block) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|error| {
                format!(
                    "{}:{}: {}: {error}",
                    page.display(),
                    block.line,
                    path.display()
                )
            })?;
            SourceFile::new(path.display().to_string(), text)
        }
        None => SourceFile::new(
            page.display().to_string(),
            "\n".repeat(block.line) + &block.text,
        ),
    };
    let diagnostics = match compile(&file) {
        Ok(compiled) if !compiled.has_errors() => return Ok(()),
        Ok(compiled) => compiled.diagnostics,
        Err(CompileError::Blueprint(diagnostics)) => diagnostics,
        Err(error) => return Err(format!("{}:{}: {error}", page.display(), block.line)),
    };
    let rendered: Vec<String> = diagnostics.iter().map(|d| d.render()).collect();
    Err(format!(
        "{}:{}: the blueprint does not synthesize:\n{}",
        page.display(),
        block.line,
        rendered.join("\n")
    ))
}

/// A ```yaml outline block: its keys are the blueprint's top-level fields.
fn check_outline(page: &Path, block: &Block) -> Result<(), String> {
    let schema = eksynth::blueprint::schema::json_schema();
    let fields = schema["properties"]
        .as_object()
        .expect("the schema's fields");
    let outline = yaml(page, block);
    let keys = outline.as_object().map(|o| o.keys().collect::<Vec<_>>());
    match keys {
        Some(keys) if !keys.is_empty() => keys
            .into_iter()
            .find(|key| !fields.contains_key(*key))
            .map_or(Ok(()), |key| {
                Err(format!(
                    "{}:{}: `{key}` is no blueprint field",
                    page.display(),
                    block.line
                ))
            }),
        _ => Err(format!(
            "{}:{}: an outline is a mapping of fields",
            page.display(),
            block.line
        )),
    }
}

/// A ```yaml github-workflow block: every step that uses eksynth's action
/// gives only inputs `action.yml` declares, and every required one.
fn check_workflow(page: &Path, block: &Block) -> Result<(), String> {
    let action: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string("action.yml").expect("action.yml"))
            .expect("action.yml is YAML");
    let inputs = action["inputs"].as_object().expect("the action's inputs");
    let workflow = yaml(page, block);
    let jobs = workflow["jobs"].as_object().cloned().unwrap_or_default();
    let steps: Vec<&serde_json::Value> = jobs
        .values()
        .filter_map(|job| job["steps"].as_array())
        .flatten()
        .filter(|step| {
            step["uses"]
                .as_str()
                .is_some_and(|uses| uses.contains("/eksynth@"))
        })
        .collect();
    let at = format!("{}:{}", page.display(), block.line);
    if steps.is_empty() {
        return Err(format!("{at}: no step uses eksynth's action"));
    }
    for step in steps {
        let with = step["with"].as_object().cloned().unwrap_or_default();
        if let Some(unknown) = with.keys().find(|key| !inputs.contains_key(*key)) {
            return Err(format!("{at}: `{unknown}` is no input of action.yml"));
        }
        let required = inputs
            .iter()
            .filter(|(_, input)| input["required"] == serde_json::Value::Bool(true));
        for (name, _) in required {
            if !with.contains_key(name) {
                return Err(format!("{at}: the required input `{name}` is missing"));
            }
        }
    }
    Ok(())
}

/// A ```yaml pre-commit-config block: every hook of eksynth's repository is
/// one `.pre-commit-hooks.yaml` declares.
fn check_pre_commit(page: &Path, block: &Block) -> Result<(), String> {
    let manifest: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(".pre-commit-hooks.yaml").expect(".pre-commit-hooks.yaml"),
    )
    .expect("the manifest is YAML");
    let declared: Vec<&str> = manifest
        .as_array()
        .expect("a list of hooks")
        .iter()
        .filter_map(|hook| hook["id"].as_str())
        .collect();
    let config = yaml(page, block);
    let hooks: Vec<&str> = config["repos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|repo| {
            repo["repo"]
                .as_str()
                .is_some_and(|url| url.ends_with("/eksynth"))
        })
        .filter_map(|repo| repo["hooks"].as_array())
        .flatten()
        .filter_map(|hook| hook["id"].as_str())
        .collect();
    let at = format!("{}:{}", page.display(), block.line);
    if hooks.is_empty() {
        return Err(format!("{at}: no hook of eksynth's repository"));
    }
    match hooks.into_iter().find(|id| !declared.contains(id)) {
        Some(id) => Err(format!("{at}: `{id}` is no hook of .pre-commit-hooks.yaml")),
        None => Ok(()),
    }
}

#[test]
fn every_yaml_snippet_is_a_tested_blueprint_or_says_what_else_it_is() {
    let mut failures = Vec::new();
    let mut blueprints = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("readable");
        for block in blocks(&text) {
            let Some(kind) = block.info.strip_prefix("yaml") else {
                continue;
            };
            let checked = match kind.trim() {
                "" => {
                    blueprints += 1;
                    check_blueprint(&page, &block)
                }
                "outline" => check_outline(&page, &block),
                "github-workflow" => check_workflow(&page, &block),
                "pre-commit-config" => check_pre_commit(&page, &block),
                other => Err(format!(
                    "{}:{}: `yaml {other}` is no kind of snippet this test knows",
                    page.display(),
                    block.line
                )),
            };
            failures.extend(checked.err());
        }
    }
    assert!(blueprints >= 10, "the blueprint snippets were not found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_snippet_that_does_not_synthesize_is_reported_at_its_page_and_line() {
    let page = Path::new("docs/src/guide/example.md");
    let text = "Some text.\n\n```yaml\napiVersion: eksynth.io/v1\nkind: NodeBlueprint\n```\n";
    let block = blocks(text).into_iter().next().expect("one block");
    let error = check_blueprint(page, &block).expect_err("no cluster, no group");
    assert!(
        error.starts_with("docs/src/guide/example.md:3: "),
        "{error}"
    );
    assert!(
        error.contains("--> docs/src/guide/example.md:4:1"),
        "{error}"
    );
}

/// How mdBook (and GitHub) name a heading's anchor.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// Every `](target)` of a page outside code blocks.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut found = Vec::new();
    for (index, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (start, _) in line.match_indices("](") {
            let rest = &line[start + 2..];
            if let Some(end) = rest.find(')') {
                found.push((index + 1, rest[..end].to_string()));
            }
        }
    }
    found
}

#[test]
fn every_relative_link_of_the_book_and_the_front_pages_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("readable");
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(file)
            };
            let at = format!("{}:{line}: `{target}`", page.display());
            if !path.exists() {
                broken.push(format!("{at}: {} does not exist", path.display()));
            } else if !fragment.is_empty() && path.extension().is_some_and(|ext| ext == "md") {
                let known = anchors(&std::fs::read_to_string(&path).expect("readable"));
                if !known.iter().any(|known| known == fragment) {
                    broken.push(format!(
                        "{at}: no heading `#{fragment}` in {}",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_book_is_a_chapter_of_its_summary() {
    let summary = std::fs::read_to_string("docs/src/SUMMARY.md").expect("SUMMARY.md");
    let chapters: Vec<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for page in pages() {
        let Ok(relative) = page.strip_prefix("docs/src") else {
            continue;
        };
        let relative = relative.display().to_string();
        if relative != "SUMMARY.md" {
            assert!(
                chapters.contains(&relative),
                "docs/src/{relative} is not a chapter of docs/src/SUMMARY.md"
            );
        }
    }
}

#[test]
fn the_readme_starts_with_the_two_commands_that_work_on_a_fresh_clone() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let first = blocks(&readme).into_iter().next().expect("a code block");
    assert_eq!(first.info, "sh");
    let commands: Vec<&str> = first
        .text
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release -- synth examples/quickstart/blueprint.yaml",
            "cargo test --locked"
        ]
    );
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; the book holds the rest"
    );
}
