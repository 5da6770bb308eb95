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

#[test]
fn every_function_reads_at_once() {
    let mut long = Vec::new();
    for file in rust_files(Path::new("src")) {
        let text = std::fs::read_to_string(&file).expect("source file");
        let path = file.display().to_string().replace('\\', "/");
        for (line, name, lines) in function_lengths(&text) {
            if lines > LONGEST_FUNCTION {
                long.push(format!("{path}:{line}: `{name}` is {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions longer than {LONGEST_FUNCTION} lines:\n{}",
        long.join("\n")
    );
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

/// No file under `src/blueprint/` imports another file that imports it
/// back, directly or through others: the sections sit below the stages
/// that combine them, and a rule that needs two sections lives above both.
///
/// What counts as file A importing file B: a `use` whose path resolves
/// into B (`use super::x::...`, `use crate::blueprint::x::...`, a child
/// module's name in a `mod.rs`, braced groups expanded, `*` included), and
/// a path written in code that does (`super::x::f(...)`,
/// `crate::blueprint::x::T`, `child::f(...)` in a `mod.rs`). A path
/// resolves to the deepest file its leading segments name, so
/// `super::Opt` from `load/cluster.rs` is `load/mod.rs`. A `mod x;`
/// declaration is not an import, and neither is a parent's re-export of
/// its own child (`pub use child::Name;`): that publishes the child's
/// name, and whoever imports it through the parent is counted as
/// importing the parent. A child importing what its parent `mod.rs`
/// defines is the usual pattern, and counts only when the parent's own
/// code imports the child back. Comments are left out, and so is
/// everything from a file's first `#[cfg(test)]` on (its tests module,
/// which comes last).
#[test]
fn no_file_of_the_blueprint_imports_itself_back() {
    let files: Vec<(String, String)> = rust_files(Path::new("src/blueprint"))
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("source file");
            (path.display().to_string(), text)
        })
        .collect();
    let loops = import_loops(&files);
    assert!(
        loops.is_empty(),
        "files under src/blueprint/ that import each other in a circle:\n{}",
        loops.join("\n")
    );
}

#[test]
fn an_import_loop_is_found_through_every_way_of_naming_a_file() {
    let files = |texts: &[(&str, &str)]| -> Vec<(String, String)> {
        texts
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect()
    };
    // A loop through a `use` group, a code path and a child named in mod.rs.
    let looped = files(&[
        (
            "src/blueprint/mod.rs",
            "mod load;\npub use load::load;\nuse crate::x::Y;\n",
        ),
        (
            "src/blueprint/load/mod.rs",
            "mod a;\nmod b;\nfn f() { a::run(); }\n",
        ),
        (
            "src/blueprint/load/a.rs",
            "use super::{Opt, b::{Spec}};\nuse crate::blueprint::*;\n",
        ),
        (
            "src/blueprint/load/b.rs",
            "// super::a::ignored in a comment\nfn g() { super::a::h(); }\n#[cfg(test)]\nmod tests { use super::*; }\n",
        ),
    ]);
    assert_eq!(
        import_loops(&looped),
        [
            "src/blueprint/load/a.rs -> src/blueprint/load/b.rs",
            "src/blueprint/load/a.rs -> src/blueprint/load/mod.rs",
            "src/blueprint/load/b.rs -> src/blueprint/load/a.rs",
            "src/blueprint/load/mod.rs -> src/blueprint/load/a.rs",
        ]
    );
    // Declarations, re-exports and a child's use of its parent are no loop.
    let layered = files(&[
        ("src/blueprint/mod.rs", "mod load;\npub use load::load;\n"),
        (
            "src/blueprint/load/mod.rs",
            "mod a;\npub(super) use a::{load, A_FIELDS};\nuse crate::blueprint::*;\n",
        ),
        (
            "src/blueprint/load/a.rs",
            "use crate::blueprint::Cluster;\nfn f() { super::super::rules::check(); }\n",
        ),
        ("src/blueprint/rules.rs", "use super::decode::Decoder;\n"),
        ("src/blueprint/decode.rs", ""),
    ]);
    assert_eq!(import_loops(&layered), Vec::<String>::new());
}

/// Every import (as `no_file_of_the_blueprint_imports_itself_back` counts
/// them) that lies on a loop, as `from -> to`, sorted.
fn import_loops(files: &[(String, String)]) -> Vec<String> {
    let modules: Vec<Vec<String>> = files.iter().map(|(path, _)| module_of(path)).collect();
    let imports: Vec<Vec<usize>> = files
        .iter()
        .zip(&modules)
        .map(|((_, text), module)| {
            let mut targets: Vec<usize> = imported_paths(text, module, &modules)
                .iter()
                .filter_map(|path| file_of(path, &modules))
                .filter(|target| modules[*target] != *module)
                .collect();
            targets.sort();
            targets.dedup();
            targets
        })
        .collect();
    let reaches = |from: usize, to: usize| {
        let mut seen = vec![false; files.len()];
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            if at == to {
                return true;
            }
            if !std::mem::replace(&mut seen[at], true) {
                stack.extend(&imports[at]);
            }
        }
        false
    };
    let mut loops = Vec::new();
    for (from, targets) in imports.iter().enumerate() {
        for &to in targets {
            if reaches(to, from) {
                loops.push(format!("{} -> {}", files[from].0, files[to].0));
            }
        }
    }
    loops.sort();
    loops
}

/// `src/blueprint/load/mod.rs` is `crate::blueprint::load`.
fn module_of(path: &str) -> Vec<String> {
    let path = path.trim_start_matches("src/").trim_end_matches(".rs");
    let path = path.strip_suffix("/mod").unwrap_or(path);
    path.split('/').map(str::to_string).collect()
}

/// The file a crate path names: the deepest module among its leading
/// segments that is a file.
fn file_of(path: &[String], modules: &[Vec<String>]) -> Option<usize> {
    (1..=path.len())
        .rev()
        .find_map(|len| modules.iter().position(|m| m[..] == path[..len]))
}

/// Every crate path a file imports or names in code, made absolute.
fn imported_paths(text: &str, module: &[String], modules: &[Vec<String>]) -> Vec<Vec<String>> {
    // The code of the file itself: no tests module, no comments.
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let children: Vec<&str> = modules
        .iter()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        .map(|m| m[module.len()].as_str())
        .collect();
    let absolute = |segments: &[String]| -> Option<Vec<String>> {
        let mut path = module.to_vec();
        // A file's `super` is its folder's module; a mod.rs is the folder.
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                path.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    path.pop();
                    rest = &rest[1..];
                }
            }
            Some(name) if children.contains(&name) => {}
            _ => return None,
        }
        path.extend(rest.iter().cloned());
        Some(path)
    };
    let mut paths = Vec::new();
    // Use statements, each from its line's start to its `;`, then blanked
    // out of the code so that their groups are not read twice.
    let mut code = code;
    let mut line_start = 0;
    while line_start < code.len() {
        let line = &code[line_start..];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let (public, tree_at) = if trimmed.starts_with("use ") {
            (false, Some(4))
        } else if trimmed.starts_with("pub") {
            let first_line = trimmed.lines().next().unwrap_or("");
            (true, first_line.find(" use ").map(|at| at + 5))
        } else {
            (false, None)
        };
        let (Some(tree_at), Some(end)) = (tree_at, trimmed.find(';')) else {
            line_start += line.find('\n').map_or(line.len(), |i| i + 1);
            continue;
        };
        for segments in use_tree_paths(&trimmed[tree_at..end]) {
            let Some(path) = absolute(&segments) else {
                continue;
            };
            // A parent's re-export of its own descendant.
            if public && path.len() > module.len() && path.starts_with(module) {
                continue;
            }
            paths.push(path);
        }
        let statement = line_start + indent..line_start + indent + end;
        let blank = " ".repeat(statement.len());
        code.replace_range(statement, &blank);
        line_start += indent + end;
    }
    // Paths in code: `super::...`, `crate::...` and `child::...`, each
    // starting where no identifier or `::` goes before it.
    let bytes = code.as_bytes();
    for start in 0..code.len() {
        let before = start
            .checked_sub(1)
            .map(|i| bytes[i] as char)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':');
        if before.is_some() || !code.is_char_boundary(start) {
            continue;
        }
        let rest = &code[start..];
        let first = identifier(rest);
        if !(first == "super" || first == "crate" || children.contains(&first))
            || !rest[first.len()..].starts_with("::")
        {
            continue;
        }
        let mut segments = vec![first.to_string()];
        let mut tail = &rest[first.len()..];
        while let Some(next) = tail.strip_prefix("::") {
            let name = identifier(next);
            if name.is_empty() {
                break;
            }
            segments.push(name.to_string());
            tail = &next[name.len()..];
        }
        paths.extend(absolute(&segments));
    }
    paths
}

/// The paths a `use` tree names (`a::{b, c::{d, e}}`, `a::*`, `a as b`),
/// each as its segments; `*` and `self` end a path at the module they
/// follow.
fn use_tree_paths(tree: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    expand(tree.trim(), &mut Vec::new(), &mut paths);
    paths
}

fn expand(tree: &str, prefix: &mut Vec<String>, paths: &mut Vec<Vec<String>>) {
    let segments = |text: &str| -> Vec<String> {
        text.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "*" && *s != "self")
            .map(str::to_string)
            .collect()
    };
    match tree.find('{') {
        Some(open) if tree.ends_with('}') => {
            let depth = prefix.len();
            prefix.extend(segments(&tree[..open]));
            let inner = &tree[open + 1..tree.len() - 1];
            let mut level = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        expand(inner[start..i].trim(), prefix, paths);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(inner[start..].trim(), prefix, paths);
            prefix.truncate(depth);
        }
        _ if tree.is_empty() => {}
        _ => {
            // `name as alias` imports `name`.
            let item = tree.split_whitespace().next().unwrap_or(tree);
            let mut path = prefix.clone();
            path.extend(segments(item));
            paths.push(path);
        }
    }
}
