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
