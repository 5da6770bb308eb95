//! The layers of the crate: `upstream` (the formats and catalogues AWS and
//! Kubernetes define) lies below `blueprint` (the checked model), which
//! lies below `eks` (the lowering to CloudFormation). A module names only
//! the layers below it, so what the blueprint checks never depends on how
//! it is lowered.

use std::path::{Path, PathBuf};

/// Each layer, and the crate modules its files may not name.
const RULES: &[(&str, &[&str])] = &[
    ("src/blueprint", &["eks"]),
    ("src/upstream", &["blueprint", "eks"]),
];

#[test]
fn no_layer_names_a_layer_above_it() {
    let mut found = Vec::new();
    for (dir, forbidden) in RULES {
        let files = rust_files(Path::new(dir));
        assert!(!files.is_empty(), "no Rust files under {dir}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("source file");
            for (line, module) in crate_modules(&text) {
                if forbidden.contains(&module.as_str()) {
                    found.push(format!("{}:{line}: crate::{module}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "layers named from below:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_way_of_naming_a_module_is_seen() {
    let text = "use crate::cfn::Expr;\n\
                use crate::{\n    blueprint::{Arch, cfn},\n    eks as lowering,\n};\n\
                let s = crate::upstream::node_config::spec_schema();\n";
    let modules: Vec<(usize, String)> = crate_modules(text);
    let expected = [(1, "cfn"), (2, "blueprint"), (2, "eks"), (6, "upstream")];
    assert_eq!(
        modules,
        expected.map(|(line, module)| (line, module.to_string()))
    );
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The top-level crate modules a source file names through `crate::`, each
/// with the line the path starts on; a braced group (`crate::{a, b::c}`)
/// names each of its members.
fn crate_modules(text: &str) -> Vec<(usize, String)> {
    let mut modules = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let line = text[..at].matches('\n').count() + 1;
        let rest = &text[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                // Each member starts the group or follows a comma at the
                // group's own depth; nested groups name no top-level module.
                let mut depth = 0;
                let mut starts = vec![0];
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => starts.push(i + 1),
                        _ => {}
                    }
                }
                for start in starts {
                    let name = identifier(group[start..].trim_start());
                    if !name.is_empty() {
                        modules.push((line, name.to_string()));
                    }
                }
            }
            None => modules.push((line, identifier(rest).to_string())),
        }
    }
    modules
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The longest a function in `src/` may be, in lines from its `fn` line to
/// its closing brace: a function longer than this does several things,
/// and each of them deserves a name.
const LONGEST_FUNCTION: usize = 150;

/// Functions still longer than `LONGEST_FUNCTION`, by file and name, that
/// are being split elsewhere. This list must be empty: an entry here hides
/// a function that does not read at once.
const LONG_FUNCTIONS_BEING_SPLIT: &[(&str, &str)] = &[
    ("src/blueprint/schema.rs", "field"),
    ("src/blueprint/load/cluster.rs", "decode_cluster"),
];

#[test]
fn every_function_reads_at_once() {
    let mut long = Vec::new();
    let mut excused = Vec::new();
    for file in rust_files(Path::new("src")) {
        let text = std::fs::read_to_string(&file).expect("source file");
        let path = file.display().to_string().replace('\\', "/");
        for (line, name, lines) in function_lengths(&text) {
            let allowed = LONG_FUNCTIONS_BEING_SPLIT.contains(&(path.as_str(), name));
            if allowed {
                excused.push((path.clone(), name.to_string()));
            }
            if lines > LONGEST_FUNCTION && !allowed {
                long.push(format!("{path}:{line}: `{name}` is {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions longer than {LONGEST_FUNCTION} lines:\n{}",
        long.join("\n")
    );
    for (file, name) in LONG_FUNCTIONS_BEING_SPLIT {
        assert!(
            excused.contains(&(file.to_string(), name.to_string())),
            "{file}: `{name}` is excused from the length limit but was not found"
        );
    }
}

#[test]
fn a_function_runs_from_its_fn_line_to_the_brace_at_its_indentation() {
    let text = "//! Module.\n\
                pub(crate) fn outer() {\n    let inner = || {\n    };\n}\n\
                impl Thing {\n    const fn short() {}\n    fn declared();\n    pub fn method(&self) {\n        if x {\n        }\n    }\n}\n\
                pub(super) fn unclosed() {\n";
    let lengths: Vec<(usize, &str, usize)> = function_lengths(text);
    assert_eq!(lengths, [(2, "outer", 4), (9, "method", 4)]);
}

/// Each function of a source file as the line its `fn` is on, its name
/// and its length in lines. A function ends at the first later line that
/// is its own indentation followed by `}` (which rustfmt guarantees). A
/// function whose `fn` line closes it (`fn f() {}`) or a declaration
/// without a body (`fn f();`) is one line, and is left out.
fn function_lengths(text: &str) -> Vec<(usize, &str, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut lengths = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some((indent, name)) = function_start(line) else {
            continue;
        };
        if line.ends_with('}') || line.ends_with(';') {
            continue;
        }
        let end = lines[at + 1..]
            .iter()
            .position(|later| later.strip_prefix(indent) == Some("}"));
        if let Some(end) = end {
            lengths.push((at + 1, name, end + 2));
        }
    }
    lengths
}

/// The indentation and name of a line that starts a function:
/// indentation, an optional `pub` or `pub(...)`, an optional `const`,
/// then `fn name`.
fn function_start(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start();
    let indent = &line[..line.len() - rest.len()];
    let rest = match rest.strip_prefix("pub") {
        Some(after) if after.starts_with(' ') => after.trim_start(),
        Some(after) if after.starts_with('(') => after[after.find(')')? + 1..].strip_prefix(' ')?,
        _ => rest,
    };
    let rest = rest.strip_prefix("const ").unwrap_or(rest);
    let name = identifier(rest.strip_prefix("fn ")?);
    (!name.is_empty()).then_some((indent, name))
}
