//! The files a template reader reads, found below a folder: what cfn-lint
//! reads as a template (`.yaml`, `.yml`, `.json`, `.template`), shared by
//! the process bench and the YAML reader's tests.

use std::path::{Path, PathBuf};

/// Every template-like file below `dir` (not inside `target` or `.git`),
/// sorted; none when `dir` cannot be read.
pub fn templates_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("target") && !path.ends_with(".git") {
                    walk(&path, out);
                }
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json" | "template"))
            {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    files
}
